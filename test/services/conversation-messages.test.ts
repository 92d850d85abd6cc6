import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { ErrorCode, MemoryServiceError } from '../../src/core/errors';
import type { IncomingMessage, IndexedMessage } from '../../src/core/ports/conversation';
import { inlineRuleWork, RuleWorkError, type RuleWork } from '../../src/shared/rule-work';
import { allConversationMessages, conversationExists, storeCallerMessages, storeMessages } from '../../src/conversation/conversation-messages';
import { conversationReminderRequests } from '../../src/proactive/reminder-requests';
import { userTimeZone } from '../../src/account/settings';
import { InMemoryConversationSide } from '../support/conversation-fakes';

const user = 'tenant-a:USER';
const other = 'tenant-a:OTHER';
const config = loadConfig({ NODE_ENV: 'test' });
const at = new Date('2026-06-10T02:00:00Z');

const messages = (ids: string[], content = 'hello'): IncomingMessage[] => ids.map((id, i) => ({ id, role: 'user', content, at: new Date(at.getTime() + i * 1000), truncated: false }));
const code = (p: Promise<unknown>) => p.then(() => 'resolved', (err: { code?: string }) => err.code);

describe('storing conversation messages', () => {
  it('stores each message id once: a repeat is reported as a duplicate', async () => {
    const f = new InMemoryConversationSide();
    expect(await storeMessages(f.deps, { userKey: user, conversationId: 'c1', messages: messages(['m1', 'm2']), maxMessages: 10 })).toEqual({ inserted: ['m1', 'm2'], duplicates: [] });
    expect(await storeMessages(f.deps, { userKey: user, conversationId: 'c1', messages: messages(['m2', 'm3']), maxMessages: 10 })).toEqual({ inserted: ['m3'], duplicates: ['m2'] });
    expect(await conversationExists(f.deps, { userId: user, conversationId: 'c1' })).toBe(true);
    expect(await conversationExists(f.deps, { userId: other, conversationId: 'c1' })).toBe(false);
  });

  it('refuses a batch that would pass the cap, storing none of it; repeats alone still pass', async () => {
    const f = new InMemoryConversationSide();
    await storeMessages(f.deps, { userKey: user, conversationId: 'c1', messages: messages(['m1', 'm2']), maxMessages: 3 });
    expect(await code(storeMessages(f.deps, { userKey: user, conversationId: 'c1', messages: messages(['m2', 'm3', 'm4']), maxMessages: 3 }))).toBe(ErrorCode.payloadTooLarge);
    expect((await allConversationMessages(f.deps, { userId: user, conversationId: 'c1' })).map((m) => m.id)).toEqual(['m1', 'm2']);
    expect(await storeMessages(f.deps, { userKey: user, conversationId: 'c1', messages: messages(['m1', 'm2']), maxMessages: 2 })).toEqual({ inserted: [], duplicates: ['m1', 'm2'] });
  });

  it('registers a caller’s user on its first write', async () => {
    const f = new InMemoryConversationSide();
    const userRef = { userKey: user, tenantId: 'tenant-a', externalId: 'alice' };
    await storeCallerMessages(f.deps, { user: userRef, conversationId: 'c1', messages: messages(['m1']), maxMessages: 10, onTakeBackFailed: (err) => { throw err; } });
    expect(await f.users.exists({ userKey: user })).toBe(true);
    expect(f.state.users.get(user)).toMatchObject({ tenantId: 'tenant-a', externalId: 'alice' });
  });

  it('segments the whole batch before it takes the conversation\'s lock, and stores the postings it got', async () => {
    const f = new InMemoryConversationSide();
    await storeMessages(f.deps, { userKey: user, conversationId: 'c1', messages: messages(['m1'], 'green tea and green tea'), maxMessages: 10 });
    const order: string[] = [];
    const appended: IndexedMessage[] = [];
    const rules: RuleWork = {
      ...inlineRuleWork,
      indexPostings: async (task) => {
        order.push(`segment ${task.texts.length}`);
        return inlineRuleWork.indexPostings(task);
      },
    };
    const { lockForAppend, append } = f.conversations;
    f.conversations.lockForAppend = (input) => {
      order.push('lock');
      return lockForAppend(input);
    };
    f.conversations.append = (input) => {
      appended.push(...input.messages);
      return append(input);
    };
    const result = await storeMessages({ ...f.deps, rules }, { userKey: user, conversationId: 'c1', messages: messages(['m1', 'm2'], 'green tea and green tea'), maxMessages: 10 });
    expect(result).toEqual({ inserted: ['m2'], duplicates: ['m1'] });
    // The duplicate m1 was segmented too: it is only known to be one under the lock.
    expect(order).toEqual(['segment 2', 'lock']);
    expect(appended.map((m) => m.postings)).toEqual(await inlineRuleWork.indexPostings({ texts: ['green tea and green tea', 'green tea and green tea'] }));
    expect(appended[0]!.postings).toEqual({ terms: ['green', 'tea'], tfs: [2, 2], docLength: 4 });
  });

  it('refuses a batch whose segmentation runs out of its time: 413 index_time_limit, nothing stored, no lock taken', async () => {
    const f = new InMemoryConversationSide();
    let locked = false;
    const { lockForAppend } = f.conversations;
    f.conversations.lockForAppend = (input) => {
      locked = true;
      return lockForAppend(input);
    };
    const rules: RuleWork = { ...inlineRuleWork, indexPostings: async () => Promise.reject(new RuleWorkError('timeout', 'rule work ran out of its 10000 ms')) };
    const refused = await storeMessages({ ...f.deps, rules }, { userKey: user, conversationId: 'c1', messages: messages(['m1', 'm2']), maxMessages: 10 }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(MemoryServiceError);
    expect(refused).toMatchObject({ code: ErrorCode.payloadTooLarge, context: { conversationId: 'c1', reason: 'index_time_limit' } });
    expect((refused as Error).cause).toBeInstanceOf(RuleWorkError);
    expect(locked).toBe(false);
    expect(await conversationExists(f.deps, { userId: user, conversationId: 'c1' })).toBe(false);
    expect(f.state.messages).toEqual([]);
  });

  it('tries an append PostgreSQL rolled back to break a deadlock again, and gives up after three', async () => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const f = new InMemoryConversationSide();
    const failing = (times: number) => {
      let left = times;
      return {
        ...f.deps,
        unitOfWork: {
          ...f.deps.unitOfWork,
          run: <T>(input: Parameters<typeof f.deps.unitOfWork.run<T>>[0]) => (left-- > 0 ? Promise.reject(deadlock) : f.deps.unitOfWork.run(input)),
        },
      };
    };
    expect(await storeMessages(failing(2), { userKey: user, conversationId: 'c1', messages: messages(['m1']), maxMessages: 10 })).toEqual({ inserted: ['m1'], duplicates: [] });
    await expect(storeMessages(failing(3), { userKey: user, conversationId: 'c1', messages: messages(['m2']), maxMessages: 10 })).rejects.toBe(deadlock);
    // Another error is not tried again.
    const full = await code(storeMessages(f.deps, { userKey: user, conversationId: 'c1', messages: messages(['m3', 'm4']), maxMessages: 2 }));
    expect(full).toBe(ErrorCode.payloadTooLarge);
  });

  it('reads a long conversation page by page, in arrival order', async () => {
    const f = new InMemoryConversationSide();
    const ids = Array.from({ length: 2_345 }, (_, i) => `m${i}`);
    await storeMessages(f.deps, { userKey: user, conversationId: 'c1', messages: messages(ids), maxMessages: 5_000 });
    const pages: number[] = [];
    const all = await allConversationMessages(f.deps, { userId: user, conversationId: 'c1', onPage: (afterSeq) => pages.push(afterSeq) });
    expect(all.map((m) => m.id)).toEqual(ids);
    expect(pages).toHaveLength(3);
  });
});

describe('the user’s time zone, read one way', () => {
  it('is the stored zone, UTC until set or for an unknown user', async () => {
    const f = new InMemoryConversationSide();
    expect(await userTimeZone(f.deps, user)).toBe('UTC');
    await f.users.ensure({ userKey: user, tenantId: 'tenant-a', externalId: 'alice' });
    await f.settings.update({ userId: user, timezone: 'Asia/Shanghai' });
    expect(await userTimeZone(f.deps, user)).toBe('Asia/Shanghai');
  });

  it('dates the reminder requests of a conversation in that zone, with ids that do not change on a re-read', async () => {
    const f = new InMemoryConversationSide();
    await f.users.ensure({ userKey: user, tenantId: 'tenant-a', externalId: 'alice' });
    await f.settings.update({ userId: user, timezone: 'Asia/Shanghai' });
    // 10:00 in Shanghai on 10 June: "tomorrow 3 pm" is 11 June 15:00 +08:00.
    await storeMessages(f.deps, { userKey: user, conversationId: 'c1', messages: messages(['m1'], '提醒我明天下午三点开会'), maxMessages: 10 });
    const deps = { ...f.deps, config };
    const read = (q: { userId: string; conversationId: string }) => allConversationMessages(f.deps, q);
    const [request] = await conversationReminderRequests(deps, read, { userId: user, conversationId: 'c1' });
    expect(request).toMatchObject({ userId: user, timeZone: 'Asia/Shanghai', dueAt: '2026-06-11T07:00:00.000Z', source: { via: 'conversation', conversationId: 'c1', messageId: 'm1' } });
    expect((await conversationReminderRequests(deps, read, { userId: user, conversationId: 'c1' }))[0]!.reminderId).toBe(request!.reminderId);
  });
});
