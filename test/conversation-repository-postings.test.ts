import { describe, expect, it, vi } from 'vitest';
import type { Queryable } from '../src/adapters/postgres/pool';
import { PostgresConversationRepository } from '../src/adapters/postgres/conversation-repository';
import type { IndexedMessage } from '../src/core/ports/conversation';

// The append runs inside the conversation's advisory lock and transaction: it writes the postings
// it is given and segments nothing itself. Segmenting there held the lock, and the event loop of
// the API, for seconds on the largest batch.
vi.mock('../src/adapters/text/jieba', async (original) => {
  const real = await original<typeof import('../src/adapters/text/jieba')>();
  const refuse = () => {
    throw new Error('the repository segmented a message inside the append');
  };
  return { ...real, tokenizeForIndex: refuse, jiebaSegmenter: { cutForSearch: refuse, tag: refuse } };
});

const at = new Date('2026-06-10T02:00:00Z');

/** A database answering what the append asks: `stored` are the ids its INSERT … RETURNING reports as new. */
function recordingDb(stored: string[]): { db: Queryable; statements: { sql: string; params: unknown[] }[] } {
  const statements: { sql: string; params: unknown[] }[] = [];
  const query = async (sql: string, params: unknown[] = []) => {
    statements.push({ sql, params });
    return { rows: sql.includes('RETURNING message_id') ? stored.map((message_id) => ({ message_id })) : [], rowCount: 0 };
  };
  return { db: { query } as unknown as Queryable, statements };
}

const message = (id: string, content: string, postings: IndexedMessage['postings']): IndexedMessage => ({ id, role: 'user', content, at, truncated: false, postings });

describe('the conversation repository appends postings it is given', () => {
  it('writes the postings of the messages it stored, never segments, and drops a duplicate\'s', async () => {
    const { db, statements } = recordingDb(['m1', 'm3']);
    const result = await new PostgresConversationRepository(db).append({
      userId: 'tenant-a:USER',
      conversationId: 'c1',
      messages: [
        message('m1', '我对花生过敏', { terms: ['花生', '过敏'], tfs: [1, 1], docLength: 2 }),
        message('m2', 'stored before', { terms: ['store'], tfs: [1], docLength: 1 }),
        message('m3', 'tea tea green', { terms: ['tea', 'green'], tfs: [2, 1], docLength: 3 }),
      ],
    });
    expect(result).toEqual({ inserted: ['m1', 'm3'], duplicates: ['m2'] });
    const postings = statements.find((s) => s.sql.includes('INSERT INTO message_terms'));
    expect(postings?.params).toEqual(['tenant-a:USER', 'c1', ['花生', '过敏', 'tea', 'green'], ['m1', 'm1', 'm3', 'm3'], [1, 1, 2, 1], [2, 2, 3, 3]]);
  });

  it('writes no postings statement when every message was stored before', async () => {
    const { db, statements } = recordingDb([]);
    const result = await new PostgresConversationRepository(db).append({
      userId: 'tenant-a:USER',
      conversationId: 'c1',
      messages: [message('m1', 'hello', { terms: ['hello'], tfs: [1], docLength: 1 })],
    });
    expect(result).toEqual({ inserted: [], duplicates: ['m1'] });
    expect(statements.some((s) => s.sql.includes('message_terms'))).toBe(false);
  });
});
