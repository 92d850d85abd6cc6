import { setTimeout as sleep } from 'node:timers/promises';
import { mulberry32 as rng } from '../test/support/prng';

/**
 * The chaos benchmark's users: a seeded script of what each one does (chat in Chinese or English,
 * end calls or idle time, an explicit memory, a reminder snoozed then dismissed, recalls), and a
 * client that retries the way a real one would: same message ids and request ids, another API
 * process when one does not answer, back-off on 5xx/429.
 */

/** The tests' seeded PRNG: the same seed gives the same script and the same fault plan. */
export { rng };

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/**
 * One statement per topic per user, in one language: two statements of one topic (where I live,
 * 我住在…) would supersede each other in whichever order they were extracted, and the run would
 * compare orders rather than losses.
 */
const TOPICS: { en: (r: () => number) => string; zh: (r: () => number) => string }[] = [
  { en: (r) => `I am allergic to ${pick(r, ['penicillin', 'shellfish', 'pollen', 'latex'])}.`, zh: (r) => `我对${pick(r, ['花生', '海鲜', '芒果'])}过敏。` },
  { en: (r) => `I have a ${pick(r, ['cat', 'dog', 'parrot'])} named ${pick(r, ['Pixel', 'Mochi', 'Biscuit', 'Luna'])}.`, zh: (r) => `我养了一只${pick(r, ['狗', '猫'])}，叫${pick(r, ['旺财', '咪咪', '豆豆'])}。` },
  { en: (r) => `I prefer ${pick(r, ['tea', 'juice'])} over coffee.`, zh: (r) => `我喜欢喝${pick(r, ['绿茶', '豆浆'])}。` },
  { en: (r) => `I live in ${pick(r, ['Lisbon', 'Berlin', 'Toronto', 'Osaka'])}.`, zh: (r) => `我住在${pick(r, ['上海', '成都', '杭州'])}。` },
  { en: (r) => `I work as a ${pick(r, ['nurse', 'pilot', 'chef', 'lawyer'])}.`, zh: (r) => `我是一名${pick(r, ['老师', '医生', '设计师'])}。` },
  { en: (r) => `My sister is called ${pick(r, ['Maria', 'Anna', 'Sofia'])}.`, zh: (r) => `我妹妹叫${pick(r, ['小红', '小美', '小雨'])}。` },
  { en: (r) => `I love ${pick(r, ['hiking', 'cycling', 'sailing'])} on weekends.`, zh: (r) => `我每天早上${pick(r, ['跑步', '游泳', '冥想'])}。` },
  { en: (r) => `I hate ${pick(r, ['loud music', 'crowded trains'])}.`, zh: (r) => `我不喜欢吃${pick(r, ['香菜', '苦瓜', '榴莲'])}。` },
  { en: (r) => `I am learning ${pick(r, ['Japanese', 'Korean', 'Italian'])}.`, zh: (r) => `我正在学${pick(r, ['吉他', '钢琴', '书法'])}。` },
  { en: (r) => `My favourite colour is ${pick(r, ['green', 'blue', 'orange'])}.`, zh: (r) => `我的生日是${pick(r, ['五月三日', '十月一日', '二月十四日'])}。` },
];
const SMALL_TALK = { en: ['The weather is nice today.', 'Thanks!', 'What time is it?'], zh: ['今天天气不错。', '好的，谢谢', '你好'] };
const REPLIES = { en: ['Got it.', 'Noted, thanks for telling me.', 'Sounds good.'], zh: ['明白了。', '好的，记住了。', '听起来不错。'] };
const EXPLICIT = { en: ['I prefer meetings after 10am.', 'I read the news every evening.'], zh: ['我周末不看工作邮件。', '我晚上十一点前睡觉。'] };
const REMINDERS = { en: ['Call mom', 'Water the plants', 'Pay the rent'], zh: ['给妈妈打电话', '给花浇水', '交房租'] };
const QUERIES = { en: ['what am I allergic to?', 'where do I live?', 'what do I do for work?', 'tell me about my pets'], zh: ['我对什么过敏？', '我住在哪里？', '我平时喜欢做什么？', '我的家人'] };

export interface ChatMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
}

export type Action =
  | { kind: 'messages'; conversation: string; messages: ChatMessage[] }
  | { kind: 'end'; conversation: string }
  | { kind: 'recall'; query: string }
  | { kind: 'memory'; requestId: string; text: string }
  | { kind: 'reminder'; requestId: string; text: string; dueInMs: number }
  | { kind: 'pause'; ms: number };

export interface UserScript {
  /** The user id without the run's prefix: the reference run and the chaos run use the same ones. */
  name: string;
  lang: 'en' | 'zh';
  actions: Action[];
  /** Statements sent (for the report). */
  statements: number;
}

/** The whole script of one run: users, their conversations and everything else they do. */
export function buildScript(seed: number, opts: { users: number; conversations: number; statementsPerConversation: number }): UserScript[] {
  const r = rng(seed);
  const users: UserScript[] = [];
  for (let u = 0; u < opts.users; u++) {
    const lang = r() < 0.5 ? 'zh' : 'en';
    const topics = [...TOPICS.keys()].sort(() => r() - 0.5);
    const said: string[] = [];
    const actions: Action[] = [];
    let statements = 0;
    const pause = () => actions.push({ kind: 'pause', ms: Math.round(150 + r() * 600) });
    for (let c = 0; c < opts.conversations; c++) {
      const conversation = `c${c}`;
      const messages: ChatMessage[] = [];
      for (let s = 0; s < opts.statementsPerConversation; s++) {
        // Now and then a statement said before, word for word, in a later conversation: one
        // memory, reinforced, never two.
        const repeat = said.length > 0 && r() < 0.2;
        const topic = topics.shift();
        const content = repeat || topic === undefined ? pick(r, said.length > 0 ? said : [pick(r, SMALL_TALK[lang])]) : TOPICS[topic]![lang](r);
        if (!repeat && topic !== undefined) said.push(content);
        messages.push({ id: `${conversation}-m${messages.length}`, role: 'user', content });
        statements++;
        messages.push({ id: `${conversation}-m${messages.length}`, role: 'assistant', content: pick(r, REPLIES[lang]) });
        if (r() < 0.3) messages.push({ id: `${conversation}-m${messages.length}`, role: 'user', content: pick(r, SMALL_TALK[lang]) });
      }
      // One or two batches, as a chat client sends a turn or a few.
      const cut = r() < 0.5 ? messages.length : 1 + Math.floor(r() * (messages.length - 1));
      actions.push({ kind: 'messages', conversation, messages: messages.slice(0, cut) });
      pause();
      if (cut < messages.length) {
        actions.push({ kind: 'messages', conversation, messages: messages.slice(cut) });
        pause();
      }
      if (r() < 0.6) actions.push({ kind: 'recall', query: pick(r, QUERIES[lang]) });
      // Ended by a call, or left for the idle timer.
      if (r() < 0.5) {
        actions.push({ kind: 'end', conversation });
        // A late message after the end: it needs a run of its own (idle timer or reconciler).
        if (r() < 0.3) actions.push({ kind: 'messages', conversation, messages: [{ id: `${conversation}-late`, role: 'user', content: pick(r, SMALL_TALK[lang]) }] });
      }
      pause();
      if (c === 0) actions.push({ kind: 'reminder', requestId: `rem-${u}`, text: pick(r, REMINDERS[lang]), dueInMs: Math.round(4000 + r() * 8000) });
      if (c === Math.min(1, opts.conversations - 1)) actions.push({ kind: 'memory', requestId: `mem-${u}`, text: pick(r, EXPLICIT[lang]) });
    }
    actions.push({ kind: 'recall', query: pick(r, QUERIES[lang]) });
    users.push({ name: `u${u}`, lang, actions, statements });
  }
  return users;
}

// ─── The client ────────────────────────────────────────────────────────────────────────────────

export interface ClientStats {
  requests: number;
  attempts: number;
  /** Answers by status, retried ones included (e.g. "503", "202-pending", "network"). */
  byStatus: Record<string, number>;
  /** Requests that never got a final answer within the retry budget. */
  gaveUp: string[];
  /** Answers that no retry policy makes right: 500s and other unexpected statuses. */
  unexpected: string[];
  recallMs: number[];
  recallDegraded: number;
}

export const newStats = (): ClientStats => ({ requests: 0, attempts: 0, byStatus: {}, gaveUp: [], unexpected: [], recallMs: [], recallDegraded: 0 });

export class ChaosClient {
  constructor(
    private readonly baseUrls: () => string[],
    private readonly key: string,
    readonly stats: ClientStats,
    private readonly r: () => number,
    private readonly retryBudgetMs = 120_000,
  ) {}

  /**
   * One call, retried until it gets a final answer: network errors and 5xx/429 try again (another
   * API process first), with the same body, so ids make the retry idempotent. `accept` decides which
   * statuses are final; a 409 on a retry of a state change means the first attempt went through.
   */
  async call(method: string, path: string, body: unknown, accept: (status: number, retried: boolean) => boolean = (s) => s >= 200 && s < 300): Promise<{ status: number; body: any; ms: number }> {
    this.stats.requests++;
    const t0 = Date.now();
    let delay = 200;
    let attempt = 0;
    let last = '';
    const urls = this.baseUrls();
    let which = Math.floor(this.r() * urls.length);
    while (Date.now() - t0 < this.retryBudgetMs) {
      attempt++;
      this.stats.attempts++;
      const base = this.baseUrls()[which++ % urls.length]!;
      const started = Date.now();
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${this.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(20_000),
        });
        const text = await res.text();
        let parsed: any = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // kept as text
        }
        // Pending answers by route (messages, end, memories, snooze…): stored, the work follows.
        const label = res.status === 202 && parsed?.pending ? `202-pending:${path.split('?')[0]!.split('/').at(-1)}` : String(res.status);
        this.stats.byStatus[label] = (this.stats.byStatus[label] ?? 0) + 1;
        if (accept(res.status, attempt > 1)) return { status: res.status, body: parsed, ms: Date.now() - started };
        last = `${res.status} ${text.slice(0, 200)}`;
        if (res.status === 500 || (res.status < 500 && res.status !== 429 && res.status !== 408)) {
          this.stats.unexpected.push(`${method} ${path} → ${last}`);
          return { status: res.status, body: parsed, ms: Date.now() - started };
        }
      } catch (err) {
        this.stats.byStatus.network = (this.stats.byStatus.network ?? 0) + 1;
        last = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      }
      await sleep(delay);
      delay = Math.min(2000, delay * 2);
    }
    this.stats.gaveUp.push(`${method} ${path}: ${last}`);
    return { status: 0, body: undefined, ms: Date.now() - t0 };
  }
}

/** What one user's run left behind for the checks. */
export interface UserOutcome {
  userId: string;
  reminders: { id: string; requestId: string; dismissedAt?: number; snoozedUntil?: number; fired: boolean }[];
}

/** Plays one user's script through the client; the reminder flow runs beside the chat. */
export async function playUser(client: ChaosClient, userId: string, script: UserScript): Promise<UserOutcome> {
  const outcome: UserOutcome = { userId, reminders: [] };
  const side: Promise<void>[] = [];
  const u = `/v1/users/${encodeURIComponent(userId)}`;
  for (const a of script.actions) {
    switch (a.kind) {
      case 'pause':
        await sleep(a.ms);
        break;
      case 'messages':
        await client.call('POST', `${u}/conversations/${a.conversation}/messages`, { messages: a.messages });
        break;
      case 'end':
        await client.call('POST', `${u}/conversations/${a.conversation}/end`, {});
        break;
      case 'recall': {
        const res = await client.call('POST', `${u}/recall`, { query: a.query });
        if (res.status === 200) {
          client.stats.recallMs.push(res.ms);
          if (res.body?.error) client.stats.recallDegraded++;
        }
        break;
      }
      case 'memory':
        // 201 stored; 202 pending: the workflow goes on (the same requestId answers 201 later).
        await client.call('POST', `${u}/memories`, { text: a.text, type: 'preference', requestId: a.requestId });
        break;
      case 'reminder': {
        const created = await client.call('POST', `${u}/reminders`, { text: a.text, dueAt: new Date(Date.now() + a.dueInMs).toISOString(), timezone: 'UTC', requestId: a.requestId });
        if (created.status !== 201 && created.status !== 200) break;
        const entry: UserOutcome['reminders'][number] = { id: created.body.id, requestId: a.requestId, fired: false };
        outcome.reminders.push(entry);
        side.push(reminderFlow(client, `${u}/reminders/${entry.id}`, entry));
        break;
      }
    }
  }
  await Promise.all(side);
  return outcome;
}

/** A person's answer to a reminder: once it fires, 稍后 (snooze a minute), then 知道了 (dismiss). */
async function reminderFlow(client: ChaosClient, path: string, entry: UserOutcome['reminders'][number]): Promise<void> {
  const deadline = Date.now() + 150_000;
  while (Date.now() < deadline) {
    const res = await client.call('GET', path, undefined);
    if (res.status === 200 && res.body.fireCount >= 1) {
      entry.fired = true;
      break;
    }
    await sleep(1000);
  }
  if (!entry.fired) return;
  const done = (s: number, retried: boolean) => (s >= 200 && s < 300) || (retried && s === 409);
  const snoozed = await client.call('POST', `${path}/snooze`, { seconds: 60 }, done);
  if (snoozed.status >= 200 && snoozed.status < 300 && snoozed.body?.snoozedUntil) entry.snoozedUntil = Date.parse(snoozed.body.snoozedUntil);
  await sleep(500);
  const dismissed = await client.call('POST', `${path}/dismiss`, {}, done);
  if ((dismissed.status >= 200 && dismissed.status < 300) || dismissed.status === 409) entry.dismissedAt = Date.now();
}
