/**
 * Scene navigation (read path L2, seed 004), the pure half: which of the user's life areas —
 * work, health, family, hobbies… — each memory belongs to, and the compact navigation block recall
 * injects whole in the stable part of the context. Offline and deterministic, no model: a memory's
 * type, its words against a bilingual lexicon, and (when given) its e5 vector against bilingual
 * scene prototypes. The rebuild (src/persona/scenes.ts) embeds; this module only compares.
 */
import type { Memory, MemoryType } from '../types';
import { personaTokens, type PersonaLanguage } from './profile';

/** The scenes, in display order when sizes tie; `other` catches what no scene claims. */
export const SCENE_IDS = ['work', 'health', 'family', 'hobbies', 'food', 'travel', 'learning', 'finance', 'home', 'social', 'other'] as const;
export type SceneId = (typeof SCENE_IDS)[number];

export function isSceneId(value: string): value is SceneId {
  return (SCENE_IDS as readonly string[]).includes(value);
}

export interface SceneDefinition {
  id: SceneId;
  labels: Record<PersonaLanguage, string>;
  /** Han words matched anywhere in the text (Chinese has no word boundaries). */
  zh: readonly string[];
  /** English stems matched at the start of a word ("allerg" → allergic, allergy). */
  en: readonly string[];
  /** Sentences whose e5 vectors, averaged, stand for the scene (both languages: e5 is multilingual). */
  prototypes: readonly string[];
}

export const SCENES: readonly SceneDefinition[] = [
  {
    id: 'work',
    labels: { zh: '工作', en: 'Work' },
    zh: ['工作', '公司', '同事', '老板', '领导', '项目', '会议', '上班', '加班', '下班', '客户', '面试', '辞职', '跳槽', '升职', '工资', '薪水', '经理', '团队', '代码', '需求', '汇报', '职位', '创业'],
    en: ['work', 'job', 'office', 'colleague', 'coworker', 'boss', 'manager', 'project', 'meeting', 'client', 'deadline', 'career', 'salary', 'interview', 'promot', 'team', 'startup', 'engineer', 'employ', 'quarterly'],
    prototypes: ['我的工作、公司、同事和项目', '上班、开会、加班和职业发展', 'my job, my company, colleagues and projects at work', 'meetings, deadlines and my career'],
  },
  {
    id: 'health',
    labels: { zh: '健康', en: 'Health' },
    zh: ['过敏', '医生', '医院', '生病', '药', '疼', '痛', '体检', '血压', '血糖', '睡眠', '失眠', '感冒', '发烧', '减肥', '体重', '健身', '哮喘', '糖尿病', '牙', '看病', '手术', '康复', '焦虑'],
    en: ['allerg', 'doctor', 'hospital', 'sick', 'ill', 'medic', 'pain', 'ache', 'headache', 'sleep', 'insomnia', 'blood', 'weight', 'asthma', 'diabet', 'symptom', 'therap', 'surgery', 'dentist', 'gym', 'workout', 'anxiety', 'injur', 'health'],
    prototypes: ['我的身体健康、疾病、过敏和看医生', '睡眠、体重、锻炼和用药', 'my health, illnesses, allergies and doctor visits', 'sleep, weight, exercise and medication'],
  },
  {
    id: 'family',
    labels: { zh: '家人', en: 'Family' },
    zh: ['妈', '爸', '父母', '妻子', '老婆', '老公', '丈夫', '儿子', '女儿', '孩子', '姐', '哥', '弟', '妹', '爷爷', '奶奶', '外公', '外婆', '家人', '亲戚', '宝宝', '舅', '姨'],
    en: ['mom', 'mum', 'mother', 'dad', 'father', 'parent', 'wife', 'husband', 'son', 'daughter', 'kid', 'child', 'sister', 'brother', 'grandm', 'grandp', 'family', 'baby', 'uncle', 'aunt', 'cousin', 'spouse'],
    prototypes: ['我的家人：父母、伴侣和孩子', '家里人的生日、照顾老人和孩子', 'my family: parents, spouse and children', 'my relatives, siblings and kids'],
  },
  {
    id: 'hobbies',
    labels: { zh: '爱好', en: 'Hobbies' },
    zh: ['爱好', '电影', '音乐', '吉他', '钢琴', '画画', '摄影', '游戏', '看书', '小说', '跑步', '爬山', '徒步', '篮球', '足球', '羽毛球', '游泳', '钓鱼', '相机', '乐队', '演唱会', '动漫', '追剧', '下棋', '滑雪'],
    en: ['hobby', 'hobbies', 'movie', 'film', 'music', 'guitar', 'piano', 'paint', 'photo', 'game', 'gaming', 'novel', 'book', 'running', 'marathon', 'hik', 'basketball', 'football', 'soccer', 'tennis', 'swim', 'fishing', 'camera', 'concert', 'band', 'chess', 'ski', 'anime', 'knit'],
    prototypes: ['我的兴趣爱好：运动、音乐、电影和摄影', '周末喜欢玩的东西和娱乐活动', 'my hobbies: sports, music, movies and photography', 'what I do for fun on weekends'],
  },
  {
    id: 'food',
    labels: { zh: '饮食', en: 'Food' },
    zh: ['吃', '菜', '咖啡', '茶', '火锅', '辣', '素食', '餐厅', '饭', '甜', '面条', '烧烤', '奶茶', '水果', '早餐', '外卖', '口味', '酒'],
    en: ['eat', 'food', 'coffee', 'tea', 'cook', 'restaurant', 'spicy', 'vegetarian', 'vegan', 'ramen', 'pizza', 'sushi', 'dinner', 'lunch', 'breakfast', 'dish', 'meal', 'wine', 'beer', 'dessert', 'bake', 'recipe'],
    prototypes: ['我爱吃的菜、口味和餐厅', '做饭、咖啡、饮料和饮食习惯', 'food I like, tastes and restaurants', 'cooking, coffee, drinks and eating habits'],
  },
  {
    id: 'travel',
    labels: { zh: '出行', en: 'Travel' },
    zh: ['旅行', '旅游', '出差', '机票', '酒店', '航班', '签证', '度假', '自驾', '高铁', '行程', '景点', '护照', '出国'],
    en: ['travel', 'trip', 'flight', 'hotel', 'vacation', 'holiday', 'visa', 'passport', 'airport', 'itinerar', 'tour', 'abroad', 'road trip', 'backpack'],
    prototypes: ['旅行计划、出差和度假', '机票、酒店、签证和行程', 'travel plans, business trips and vacations', 'flights, hotels, visas and itineraries'],
  },
  {
    id: 'learning',
    labels: { zh: '学习', en: 'Learning' },
    zh: ['学习', '课程', '考试', '学校', '大学', '英语', '日语', '读研', '证书', '上课', '论文', '培训', '复习', '老师', '考研', '雅思', '编程课'],
    en: ['learn', 'study', 'course', 'exam', 'school', 'universit', 'college', 'class', 'language', 'degree', 'thesis', 'tutor', 'lesson', 'certif', 'teacher', 'homework', 'spanish', 'french', 'japanese'],
    prototypes: ['我在学习的东西：课程、考试和语言', '上学、读书深造和考证', 'what I am learning: courses, exams and languages', 'school, degrees and certificates'],
  },
  {
    id: 'finance',
    labels: { zh: '财务', en: 'Money' },
    zh: ['钱', '存款', '股票', '基金', '投资', '房贷', '预算', '理财', '信用卡', '保险', '贷款', '花销', '账单', '工资卡', '退休金', '省钱', '报税'],
    en: ['money', 'saving', 'stock', 'invest', 'mortgage', 'budget', 'loan', 'insurance', 'bank', 'debt', 'tax', 'expense', 'bill', 'retirement', 'credit card', 'crypto', 'fund'],
    prototypes: ['我的钱：存款、投资、贷款和预算', '理财、保险和账单', 'my money: savings, investments, loans and budget', 'insurance, taxes and bills'],
  },
  {
    id: 'home',
    labels: { zh: '居家与宠物', en: 'Home & pets' },
    zh: ['房子', '搬家', '租房', '房租', '装修', '猫', '狗', '宠物', '邻居', '小区', '家具', '阳台', '花园', '公寓', '家务'],
    en: ['house', 'apartment', 'flat', 'move', 'moving', 'rent', 'renovat', 'cat', 'dog', 'pet', 'puppy', 'kitten', 'neighbo', 'furniture', 'garden', 'balcony', 'chore', 'landlord'],
    prototypes: ['我住的房子、搬家和装修', '家里的宠物：猫和狗', 'my home, moving house and renovation', 'my pets: cats and dogs'],
  },
  {
    id: 'social',
    labels: { zh: '朋友与社交', en: 'Friends' },
    zh: ['朋友', '聚会', '同学', '约会', '女朋友', '男朋友', '对象', '闺蜜', '兄弟们', '婚礼', '室友', '网友'],
    en: ['friend', 'party', 'date', 'dating', 'girlfriend', 'boyfriend', 'partner', 'wedding', 'roommate', 'classmate', 'buddy', 'social'],
    prototypes: ['我的朋友、聚会和社交生活', '约会、恋爱和参加婚礼', 'my friends, parties and social life', 'dating, relationships and weddings'],
  },
];

const BY_ID = new Map(SCENES.map((s) => [s.id, s]));

export function sceneLabel(id: SceneId, language: PersonaLanguage): string {
  if (id === 'other') return language === 'zh' ? '其他' : 'Other';
  return BY_ID.get(id)!.labels[language];
}

/** Types with no place in a life area: how to answer (instructions) and what the assistant said. */
const OUTSIDE_SCENES: ReadonlySet<MemoryType> = new Set(['instruction', 'assistant_contribution']);

export function hasScene(type: MemoryType): boolean {
  return !OUTSIDE_SCENES.has(type);
}

/** The weights of the score; tuned on the `tune` half of test/fixtures/scenes/labelled.jsonl only. */
export const SCENE_TUNING = {
  /** Added per lexicon hit (at most two count), on the cosine scale of e5. */
  keyword: 0.06,
  /** A memory whose best scene is below this (no keyword, weak similarity) goes to `other`. */
  minScore: 0.8,
  /** Without vectors (or a cold embedder), a keyword hit alone decides; no hit is `other`. */
} as const;

const WORD = /[a-z]+(?:'[a-z]+)?/gu;

/** Lexicon hits of each scene in `text` (Han words anywhere, English stems at a word start). */
export function keywordHits(text: string): Map<SceneId, string[]> {
  const lower = text.toLowerCase();
  const words = lower.match(WORD) ?? [];
  const hits = new Map<SceneId, string[]>();
  for (const scene of SCENES) {
    const found: string[] = [];
    for (const w of scene.zh) if (lower.includes(w)) found.push(w);
    for (const stem of scene.en) {
      // The word as written ("allergic", not the stem), so a hint reads naturally.
      const word = stem.includes(' ') ? (lower.includes(stem) ? stem : undefined) : words.find((w) => w.startsWith(stem) && (stem.length >= 4 || w.length <= stem.length + 2));
      if (word !== undefined) found.push(word);
    }
    if (found.length > 0) hits.set(scene.id, found);
  }
  return hits;
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The prototype vector of each scene: the mean of its sentences' vectors (in {@link SCENES} order). */
export function scenePrototypes(vectors: readonly number[][]): Map<SceneId, number[]> {
  const out = new Map<SceneId, number[]>();
  let i = 0;
  for (const scene of SCENES) {
    const own = vectors.slice(i, i + scene.prototypes.length);
    i += scene.prototypes.length;
    if (own.length === 0) continue;
    const mean = own[0]!.map((_, d) => own.reduce((s, v) => s + (v[d] ?? 0), 0) / own.length);
    out.set(scene.id, mean);
  }
  return out;
}

/** Every prototype sentence, in the order {@link scenePrototypes} expects their vectors. */
export function prototypeTexts(): string[] {
  return SCENES.flatMap((s) => [...s.prototypes]);
}

/**
 * The scene of one memory: the best of keyword hits (weighted) plus the cosine of its vector to
 * each prototype; a tie goes to the scene listed first. Deterministic for the same inputs.
 */
export function classifyScene(input: { text: string; vector?: readonly number[]; prototypes?: ReadonlyMap<SceneId, readonly number[]> }): SceneId {
  const hits = keywordHits(input.text);
  const vector = input.vector && input.vector.length > 0 && input.prototypes && input.prototypes.size > 0 ? input.vector : undefined;
  let best: SceneId = 'other';
  let bestScore = -Infinity;
  for (const scene of SCENES) {
    const kw = Math.min(2, hits.get(scene.id)?.length ?? 0);
    const proto = vector ? input.prototypes!.get(scene.id) : undefined;
    const score = vector ? (proto ? cosine(vector, proto) : 0) + SCENE_TUNING.keyword * kw : kw;
    if (score > bestScore) {
      bestScore = score;
      best = scene.id;
    }
  }
  if (vector ? bestScore < SCENE_TUNING.minScore : bestScore <= 0) return 'other';
  return best;
}

export type SceneMemory = Pick<Memory, 'id' | 'text' | 'type' | 'importance' | 'createdAt'>;

/** One scene of the index: its memories, most important first, and the words that name it for this user. */
export interface SceneEntry {
  id: SceneId;
  memoryIds: string[];
  /** Lexicon words its memories use most (the navigation block shows a few). */
  hints: string[];
}

/** The grouping of a user's memories; `memoryIds` of all scenes together hold each memory once. */
export interface SceneIndex {
  language: PersonaLanguage;
  scenes: SceneEntry[];
}

/** At most this many hint words per scene in the block. */
const HINTS = 3;

/**
 * Groups the memories into scenes, largest first (importance breaks a tie, then {@link SCENE_IDS}
 * order), `other` last. Memories of types outside scenes are left out.
 */
export function groupScenes(memories: readonly SceneMemory[], opts: { language: PersonaLanguage; vectors?: ReadonlyMap<string, readonly number[]>; prototypes?: ReadonlyMap<SceneId, readonly number[]> }): SceneIndex {
  const groups = new Map<SceneId, { memories: SceneMemory[]; words: Map<string, number> }>();
  for (const m of memories) {
    if (!hasScene(m.type)) continue;
    const id = classifyScene({ text: m.text, vector: opts.vectors?.get(m.id), prototypes: opts.prototypes });
    const g = groups.get(id) ?? { memories: [], words: new Map<string, number>() };
    g.memories.push(m);
    for (const w of keywordHits(m.text).get(id) ?? []) g.words.set(w, (g.words.get(w) ?? 0) + 1);
    groups.set(id, g);
  }
  const weight = (ms: SceneMemory[]) => ms.reduce((s, m) => s + m.importance, 0);
  const order = [...groups.entries()].sort(([a, ga], [b, gb]) => {
    if ((a === 'other') !== (b === 'other')) return a === 'other' ? 1 : -1;
    return gb.memories.length - ga.memories.length || weight(gb.memories) - weight(ga.memories) || SCENE_IDS.indexOf(a) - SCENE_IDS.indexOf(b);
  });
  return {
    language: opts.language,
    scenes: order.map(([id, g]) => ({
      id,
      memoryIds: [...g.memories]
        .sort((a, b) => b.importance - a.importance || b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? -1 : 1))
        .map((m) => m.id),
      hints: [...g.words.entries()]
        .filter(([w]) => (opts.language === 'zh' ? /\p{Script=Han}/u.test(w) : !/\p{Script=Han}/u.test(w)))
        .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, HINTS)
        .map(([w]) => w),
    })),
  };
}

export const SCENE_HEADERS: Record<PersonaLanguage, string> = {
  zh: '[场景导航]（记忆按生活领域分组；memory_scene 按 id 查看全部）',
  en: "[Life areas] (the user's memories by area; memory_scene with an id reads one)",
};

/** One navigation line: "- health 健康(3): 过敏、跑步" (without hints: "- health 健康(3)"). */
export function sceneLine(scene: SceneEntry, language: PersonaLanguage, withHints = true): string {
  // Hints are lexicon words or Latin letters of a memory (WORD): nothing in them needs neutralising.
  const hints = withHints ? scene.hints : [];
  const head = `- ${scene.id} ${sceneLabel(scene.id, language)}(${scene.memoryIds.length})`;
  return hints.length === 0 ? head : `${head}: ${hints.join(language === 'zh' ? '、' : ', ')}`;
}

/** The navigation block as injected: the heading and one line per scene, or '' when empty. */
export interface SceneBlock {
  header: string;
  lines: string[];
}

/**
 * The block within `maxTokens` (heading included): scenes in index order, the least important
 * (last) dropped first, never a cut line. Empty when not even one scene fits.
 */
export function fitSceneBlock(block: SceneBlock, maxTokens: number): SceneBlock {
  const lines = [...block.lines];
  while (lines.length > 0 && personaTokens(block.header, lines) > maxTokens) lines.pop();
  return { header: block.header, lines };
}

export function renderSceneBlock(block: SceneBlock): string {
  return block.lines.length === 0 ? '' : [block.header, ...block.lines].join('\n');
}

/**
 * The block of an index, cut to `maxTokens`: with hint words when every scene fits so, else the
 * one of with or without hints that keeps more scenes (a scene named beats a hint about another).
 */
export function sceneBlock(index: SceneIndex, maxTokens: number): SceneBlock {
  const header = SCENE_HEADERS[index.language];
  const withHints = fitSceneBlock({ header, lines: index.scenes.map((s) => sceneLine(s, index.language)) }, maxTokens);
  if (withHints.lines.length === index.scenes.length) return withHints;
  const bare = fitSceneBlock({ header, lines: index.scenes.map((s) => sceneLine(s, index.language, false)) }, maxTokens);
  return bare.lines.length > withHints.lines.length ? bare : withHints;
}
