import { describe, expect, it } from 'vitest';
import { INDEX_TASK_MAX_CHARS, RulePool } from '../src/adapters/extraction/rule-pool';
import { MESSAGE_INDEX_MAX_TERMS, runRuleTask } from '../src/shared/rule-work';
import { useTestContext } from './support/harness';

// The largest batch the API allows (1,000 messages of MAX_MESSAGE_CHARS each) made of distinct
// random numbers: each message would be over a thousand postings and document frequencies, and
// 300 of them outlived the statement timeout (504 after the work, repeated by every retry).
const t = useTestContext();

let seed = 7;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

describe('the message index of a batch of junk text', () => {
  it('stores the whole batch and indexes a bounded number of terms per message', async () => {
    const ctx = t.ctx;
    const user = `${ctx.prefix}-junk`;
    const max = ctx.runtime.config.extraction.maxMessageChars;
    const content = () => {
      let s = String(Math.floor(random() * 1e9));
      while (s.length < max - 11) s += ` ${Math.floor(random() * 1e9)}`;
      return s;
    };
    const messages = Array.from({ length: 1000 }, (_, i) => ({ id: `n${i}`, role: 'user', content: content() }));
    // A message that repeats its subject among the junk stays findable by it.
    messages[500]!.content = `peanuts allergy peanuts ${messages[500]!.content}`.slice(0, max);

    const pool = ctx.runtime.deps.rules;
    expect(pool).toBeInstanceOf(RulePool);
    const segmentedBefore = (pool as RulePool).completed.index;

    const res = await ctx.call('POST', `/v1/users/${user}/conversations/junk/messages`, { messages });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(202);
    expect(res.body.accepted).toHaveLength(1000);
    // Its seconds of segmentation ran on the rule pool's threads, in tasks of bounded size, not on
    // the event loop that serves every other user's requests.
    const chars = messages.reduce((a, m) => a + m.content.length, 0);
    expect((pool as RulePool).completed.index - segmentedBefore).toBeGreaterThanOrEqual(Math.ceil(chars / INDEX_TASK_MAX_CHARS));

    const userKey = ctx.userKey(user);
    const stored = await ctx.runtime.pool.query<{ n: string; chars: string }>(
      'SELECT count(*) AS n, sum(length(content)) AS chars FROM messages WHERE user_id = $1',
      [userKey],
    );
    expect(Number(stored.rows[0]!.n)).toBe(1000);
    expect(Number(stored.rows[0]!.chars)).toBe(messages.reduce((a, m) => a + m.content.length, 0));

    const postings = await ctx.runtime.pool.query<{ most: number; messages: string }>(
      `SELECT max(n)::int AS most, count(*) AS messages FROM (SELECT count(*) AS n FROM message_terms WHERE user_id = $1 GROUP BY conversation_id, message_id) p`,
      [userKey],
    );
    expect(Number(postings.rows[0]!.messages)).toBe(1000);
    expect(postings.rows[0]!.most).toBe(MESSAGE_INDEX_MAX_TERMS);

    // The postings are the ones the segmentation gives on any thread: the same terms, tf and length.
    const written = await ctx.runtime.pool.query<{ message_id: string; terms: string[]; tfs: number[]; doc_length: number }>(
      `SELECT message_id, array_agg(term ORDER BY term) AS terms, array_agg(tf ORDER BY term) AS tfs, min(doc_length) AS doc_length
         FROM message_terms WHERE user_id = $1 GROUP BY message_id`,
      [userKey],
    );
    const expected = runRuleTask({ kind: 'index', texts: messages.map((m) => m.content) });
    const byId = new Map(written.rows.map((r) => [r.message_id, r]));
    messages.forEach((m, i) => {
      const want = expected[i]!;
      const got = byId.get(m.id)!;
      expect(new Map(got.terms.map((t, j) => [t, got.tfs[j]]))).toEqual(new Map(want.terms.map((t, j) => [t, want.tfs[j]])));
      expect(got.doc_length).toBe(want.docLength);
    });

    // The statistics BM25 reads agree with the postings written: one document per message, the
    // length of each its kept terms' tf.
    const stats = await ctx.runtime.pool.query<{ doc_count: string; total_length: string; tf: string }>(
      `SELECT s.doc_count, s.total_length, (SELECT sum(tf) FROM message_terms WHERE user_id = $1) AS tf
         FROM message_index_stats s WHERE s.user_id = $1`,
      [userKey],
    );
    expect(Number(stats.rows[0]!.doc_count)).toBe(1000);
    expect(stats.rows[0]!.total_length).toBe(stats.rows[0]!.tf);

    const found = await ctx.call('POST', `/v1/users/${user}/conversations/search`, { query: 'peanuts' });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    const ids = (found.body.exchanges as { messageIds: string[] }[]).flatMap((e) => e.messageIds);
    expect(ids).toContain('n500');
  }, 180_000);
});
