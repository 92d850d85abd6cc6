/**
 * Named things in a statement, each with a kind: foods, places, people (relatives), pets,
 * health conditions, stacks/languages, projects ("payment-svc"), titles (《三体》, "Hardcore
 * History") and human languages. Gazetteers give the kind; shape rules catch unknown names.
 */
import type { Segmenter } from '../text/segmenter';
import type { EntityRef } from '../types';
import {
  EN_CONDITIONS,
  EN_FAMILY,
  EN_FOODS,
  EN_PETS,
  HUMAN_LANGUAGES,
  TECH_KINDS,
  ZH_CITIES,
  ZH_CONDITIONS,
  ZH_FAMILY,
  ZH_FOODS,
  ZH_PETS,
  ZH_PLACE_SUFFIX,
} from './lexicon';
import { latinTokens } from './keywords';
import type { Lang } from './text';

const PROJECT_PART = /^(?:svc|service|api|app|sync|web|server|client|bot|cli|sdk|lib|core|gateway|worker|ui|db|etl|pipeline|platform|engine|admin|portal|backend|frontend|job|proxy|store|hub|ops)$/u;
const PROJECT_CONTEXT = /项目|服务|仓库|系统|模块|在做|负责|维护|project|repo|service|codebase|working on|maintain/iu;
const EN_TITLE = /(?<![\p{L}'’.-])[A-Z][\p{L}'’.-]*(?:\s+(?:(?:of|the|and|de)\s*)?[A-Z][\p{L}'’.-]*)+/gu;
const EN_STREET = /\s(?:Street|St|Road|Rd|Avenue|Ave|Boulevard|Square|Park|Lane)$/u;
const ZH_METHOD = /(?:(?<![\d-])[\d-]{3,}|\p{Script=Han}{2,4})(?:呼吸法|疗法|训练法|记忆法|学习法|工作法)|\p{Script=Han}{2}冥想/gu;
const NOT_A_PLACE = new Set(['东西', '地方', '这边', '那边']);
const EN_PLACE_AFTER = /\b(?:in|to|at|from|near|visited|visit|moved to|live in|based in)\s+([A-Z][\p{L}-]+(?:\s+[A-Z][\p{L}-]+){0,2})/gu;
const NAMED = /\b(?:called|named)\s+([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*){0,2})/gu;
const ZH_NAMED = /(?:叫|名字是|名叫)[“"「]?([\p{Script=Han}A-Za-z0-9]{1,6})(?=[”"」，,。！!？?\s]|$)/gu;
const GO_AS_NAME = /\b(?:in|use|using|with|write|writing|and|\+|\/)\s+Go\b|\bGo\s+(?:and|\+|\/|service|code|backend)/u;
const CALENDAR_WORD = /^(?:Yesterday|Today|Tomorrow|Tonight|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|January|February|March|April|May|June|July|August|September|October|November|December)$/u;
const SENTENCE_START_WORDS = /^(?:I|I'm|I've|I'd|I'll|My|We|Our|The|A|An|This|That|It|It's|For|And|But|So|Try|Please|Made|Grilled|Update|From|Any|What|How)$/u;

class EntityBag {
  private readonly items: EntityRef[] = [];
  add(name: string, kind: string): void {
    const clean = name.trim();
    if (!clean) return;
    const existing = this.items.findIndex((e) => e.name.toLowerCase() === clean.toLowerCase());
    if (existing >= 0) return;
    if (this.items.some((e) => e.kind === kind && e.name.includes(clean))) return;
    // A longer name replaces the shorter ones of the same kind it contains ("美式咖啡" over "咖啡", "美式").
    const kept = this.items.filter((e) => !(e.kind === kind && clean.includes(e.name)));
    this.items.splice(0, this.items.length, ...kept, { name: clean, kind });
  }
  list(): EntityRef[] {
    return this.items;
  }
}

function addTech(text: string, lang: Lang, bag: EntityBag): void {
  for (const token of latinTokens(text)) {
    const kind = TECH_KINDS.get(token.toLowerCase());
    if (kind) {
      // "Go" is also an English verb: count it only when capitalised and, in English, next to tech context.
      const goVerb = token.toLowerCase() === 'go' && (token !== 'Go' || (lang === 'en' && !GO_AS_NAME.test(text)));
      if (goVerb) continue;
      if (token.length === 1 && token !== token.toUpperCase()) continue;
      bag.add(token, kind);
    } else if (/[a-z0-9][-_][a-z0-9]/iu.test(token) && /[a-z]/iu.test(token)) {
      const parts = token.toLowerCase().split(/[-_]/u);
      if (parts.some((p) => PROJECT_PART.test(p)) || PROJECT_CONTEXT.test(text)) bag.add(token, 'project');
    }
  }
}

function addQuoted(text: string, bag: EntityBag): void {
  for (const m of text.matchAll(/《([^《》]{1,40})》/gu)) bag.add(m[1] ?? '', 'title');
  for (const m of text.matchAll(/[“「"]([^“「"”」]{1,40})[”」"]/gu)) bag.add(m[1] ?? '', 'name');
}

function zhEntities(text: string, segmenter: Segmenter, bag: EntityBag): void {
  for (const m of text.matchAll(ZH_NAMED)) {
    const name = m[1] ?? '';
    bag.add(name, [...ZH_PETS].some((p) => text.includes(p)) ? 'pet' : 'name');
  }
  for (const { word, tag } of segmenter.tag(text)) {
    if (ZH_FAMILY.has(word)) bag.add(word, 'person');
    else if (ZH_PETS.has(word)) bag.add(word, 'animal');
    else if (ZH_FOODS.has(word)) bag.add(word, 'food');
    else if (NOT_A_PLACE.has(word)) continue;
    else if (ZH_CITIES.has(word) || (tag === 'ns' && word.length >= 2)) bag.add(word, 'place');
    else if (word.length >= 3 && /^n/u.test(tag) && ZH_PLACE_SUFFIX.test(word)) bag.add(word, 'place');
  }
  for (const m of text.matchAll(ZH_METHOD)) bag.add(m[0], 'method');
  for (const m of text.matchAll(new RegExp(ZH_CONDITIONS.source, 'gu'))) {
    if (!/^(?:毛病|有病)$/u.test(m[0])) bag.add(m[0], 'condition');
  }
  // Foods jieba glues to neighbours ("美式咖啡") are still found by a substring scan.
  for (const food of ZH_FOODS) if (food.length >= 2 && text.includes(food)) bag.add(food, 'food');
}

function enEntities(text: string, bag: EntityBag): void {
  for (const m of text.matchAll(NAMED)) bag.add(m[1] ?? '', mentionsPet(text) ? 'pet' : 'name');
  for (const m of text.matchAll(EN_PLACE_AFTER)) {
    const name = m[1] ?? '';
    if (!TECH_KINDS.has(name.toLowerCase()) && !HUMAN_LANGUAGES.test(name) && !CALENDAR_WORD.test(name)) bag.add(name, 'place');
  }
  for (const m of text.matchAll(EN_TITLE)) {
    const words = m[0].split(/\s+/u);
    // Sentence openers and time words are capitalised without being names ("Yesterday I…").
    while (words.length > 0 && (SENTENCE_START_WORDS.test(words[0] ?? '') || CALENDAR_WORD.test(words[0] ?? ''))) words.shift();
    while (words.length > 0 && /^(?:I|I'm)$/u.test(words[words.length - 1] ?? '')) words.pop();
    const name = words.join(' ');
    const allTech = words.filter((w) => /^[A-Z]/u.test(w)).every((w) => TECH_KINDS.has(w.toLowerCase()) || HUMAN_LANGUAGES.test(w));
    if (name.includes(' ') && !allTech) bag.add(name, EN_STREET.test(name) ? 'place' : 'title');
  }
  for (const word of text.toLowerCase().split(/[^a-z'-]+/u)) {
    if (EN_FAMILY.has(word)) bag.add(word, 'person');
    else if (EN_PETS.has(word)) bag.add(word, 'animal');
    else if (EN_FOODS.has(word)) bag.add(word, 'food');
  }
  const condition = EN_CONDITIONS.exec(text);
  if (condition) bag.add(condition[0], 'condition');
}

function mentionsPet(text: string): boolean {
  return text
    .toLowerCase()
    .split(/[^a-z]+/u)
    .some((w) => EN_PETS.has(w));
}

/** Entities of one statement (deduplicated, longest name per kind). */
export function extractEntities(text: string, lang: Lang, segmenter: Segmenter): EntityRef[] {
  const bag = new EntityBag();
  addQuoted(text, bag);
  addTech(text, lang, bag);
  if (lang === 'zh') zhEntities(text, segmenter, bag);
  else enEntities(text, bag);
  for (const m of text.matchAll(new RegExp(HUMAN_LANGUAGES.source, 'gu'))) bag.add(m[0], 'language');
  return bag.list();
}
