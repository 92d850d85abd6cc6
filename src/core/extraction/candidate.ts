/**
 * Turns a statement segment into a {@link MemoryCandidate}: scores, keywords, entities, scope,
 * expiry and the subject of an update.
 */
import { emotionScore } from '../emotion';
import type { Segmenter } from '../text/segmenter';
import type { ConversationMessage, EntityRef, MemoryCandidate, RelationRef } from '../types';
import { expiryFor, resolveEventDay } from './dates';
import { extractEntities } from './entities';
import { extractKeywords, latinTokens } from './keywords';
import { EN_STOPWORDS, TECH_KINDS } from './lexicon';
import { HEALTH_IMPORTANCE, isHedged, isTaskScoped, subjectWords } from './match';
import { hasContent, type Segment } from './segments';
import { type Lang, trimPunct } from './text';

/** Health news ranks with health facts even when it is phrased as an update ("脱敏治疗结束了"). */
const HEALTH_WORDS = /过敏|脱敏|血压|血糖|糖尿病|哮喘|\ballerg\w*|\bdiabet\w*|\basthma\b|\bblood pressure\b/iu;

/**
 * A task-scoped statement ("这个需求用 Python", "for this script, use Bash") wins only for its task:
 * it lapses after this many days, so it never shapes a later task of the same kind, where the
 * user's standing (global) preferences apply again.
 */
export const TASK_SCOPE_DAYS = 3;

/** Hedged statements ("maybe", "可能") stay below the 0.7 bar that ingestion applies. */
export const HEDGED_CEILING = 0.65;
const MAX_TARGET = 60;

/**
 * Emotion moves importance: strong feelings lift it towards 1, stated indifference ("无所谓")
 * pulls it down, no emotion leaves the type's base.
 */
export function applyEmotion(base: number, emotion: number): number {
  if (emotion === 0) return base;
  if (emotion < 0.5) return round(base * (0.5 + emotion));
  return round(Math.min(1, base + (1 - base) * emotion * 0.7));
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function cleanRelations(relations: RelationRef[]): RelationRef[] {
  return relations
    .map((r) => ({ ...r, target: r.target.trim().slice(0, MAX_TARGET) }))
    .filter((r) => r.target.length > 0 && r.relation.length > 0);
}

/** Keywords of the text plus entity names and short relation targets, which segmentation may split ("后端工程师"). */
function keywordsOf(text: string, lang: Lang, segmenter: Segmenter, entities: EntityRef[], relations: RelationRef[]): string[] {
  const short = (t: string): boolean => (lang === 'zh' && /\p{Script=Han}/u.test(t) ? t.length <= 6 && !t.includes('我') : t.split(/\s+/u).length <= 3);
  const targets = relations.flatMap((r) => r.target.split(/[,，、+()（）和]|\band\b/u).map((t) => t.trim())).filter((t) => t && short(t));
  const extra = [...entities.filter((e) => e.kind !== 'date').map((e) => e.name), ...targets]
    .filter((t) => t.length <= 24)
    .map((t) => t.toLowerCase());
  return [...new Set([...extractKeywords(text, lang, segmenter), ...extra])].slice(0, 20);
}

function targetHasContent(target: string, lang: Lang): boolean {
  // Names count even when they collide with stopwords ("Go").
  if (latinTokens(target).some((t) => TECH_KINDS.has(t.toLowerCase()) || /^[A-Z]/u.test(t))) return true;
  if (lang === 'zh' && /\p{Script=Han}/u.test(target)) return !/^[这那它他她你][个些样里]?$/u.test(target.trim());
  return target
    .toLowerCase()
    .split(/[^\p{L}\p{N}'-]+/u)
    .some((w) => w.length > 1 && !EN_STOPWORDS.has(w));
}

/** What {@link buildCandidate} needs besides the segment. */
export interface BuildContext {
  message: ConversationMessage;
  content: string;
  lang: Lang;
  zone: string;
  segmenter: Segmenter;
}

/** The candidate for one segment, or null when the statement has no usable content. */
export function buildCandidate(seg: Segment, ctx: BuildContext): MemoryCandidate | null {
  const text = trimPunct(ctx.content.slice(seg.start, seg.end));
  const { match } = seg;
  if (!text) return null;
  // Pain points and instructions are recognised by specific wording ("总是失眠", "回答简洁点") and may lack nouns.
  const passive = match.intent === 'assert' && match.type !== 'instruction' && match.type !== 'pain_point';
  if (passive && !hasContent(text, ctx.lang, ctx.segmenter) && seg.relations.length === 0) return null;
  // "I like it" / "我喜欢这个": a relation whose object is only a pronoun says nothing.
  if (passive && seg.relations.length > 0 && !seg.relations.some((r) => targetHasContent(r.target, ctx.lang))) return null;

  const emotion = emotionScore(text);
  const scope = isTaskScoped(text) ? 'task' : 'global';
  const confidence = round(isHedged(text) && match.intent !== 'forget' ? Math.min(match.confidence * 0.75, HEDGED_CEILING) : match.confidence);
  const health = HEALTH_WORDS.test(text) || seg.relations.some((r) => /allergic_to|has_condition/u.test(r.relation));
  const base = scope === 'task' ? Math.min(match.importance, 0.5) : health ? Math.max(match.importance, HEALTH_IMPORTANCE) : match.importance;
  const entities: EntityRef[] = extractEntities(text, ctx.lang, ctx.segmenter);
  const isEvent = match.type === 'event';
  const eventDay = isEvent ? resolveEventDay(text, ctx.lang, ctx.message.at, ctx.zone) : undefined;
  if (eventDay) entities.push({ name: eventDay, kind: 'date' });
  const expires = match.intent === 'assert' && (isEvent || seg.event);

  const candidate: MemoryCandidate = {
    text,
    type: match.type,
    confidence,
    importance: applyEmotion(base, emotion.score),
    keywords: keywordsOf(text, ctx.lang, ctx.segmenter, entities, seg.relations),
    entities,
    relations: cleanRelations(seg.relations),
    scope,
    emotionTags: emotion.tags,
    messageIds: [ctx.message.id],
    role: 'user',
    saidAt: ctx.message.at,
    intent: match.intent,
  };
  if (expires) candidate.expiresAt = expiryFor(ctx.message.at, eventDay, ctx.zone);
  if (scope === 'task') {
    const taskEnd = new Date(ctx.message.at.getTime() + TASK_SCOPE_DAYS * 86_400_000);
    if (!candidate.expiresAt || candidate.expiresAt > taskEnd) candidate.expiresAt = taskEnd;
  }
  // A resolution that names nothing ("修好了", "it works now") keeps no subject: it is about the latest open problem.
  if (match.intent === 'resolve') candidate.subject = seg.subject;
  else if (match.intent !== 'assert') candidate.subject = seg.subject ?? (subjectWords(text, ctx.lang, ctx.segmenter) || undefined);
  return candidate;
}
