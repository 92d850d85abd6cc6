import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/harness';
import { mulberry32 } from './support/prng';

// Lifecycle calls on one memory that race each other (two devices, a retrying client, an agent
// and its user): forget, restore, hard delete, a re-statement of the same text, reads. Whatever
// order the server takes them in, none answers 5xx, and the memory ends in a state its own
// history explains: its last recorded decision matches what the memory now is.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const SEED = Number(process.env.MEMORY_RACE_SEED ?? 2611);

it('random concurrent forget / restore / delete / re-statement of one memory never answers 5xx and ends explained by its history', async () => {
  const random = mulberry32(SEED);
  for (let round = 0; round < 12; round++) {
    const user = `${ctx.prefix}-race${round}`;
    const text = round % 2 === 0 ? `Allergic to shellfish, round ${round}` : `对虾过敏，第${round}轮`;
    const created = await ctx.call('POST', `/v1/users/${user}/memories`, { text, type: 'fact' });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    const id = (created.body.id ?? created.body.memory?.id) as string;
    expect(id).toBeTruthy();
    const kinds = ['forget', 'restore', 'hard', 'restate', 'get', 'history'] as const;
    const ops = Array.from({ length: 8 }, () => kinds[Math.floor(random() * kinds.length)]!);
    // Kept whole: a 409's body is parsed below.
    const answers = await Promise.all(
      ops.map(async (op) => {
        await new Promise((r) => setTimeout(r, Math.floor(random() * 40)));
        const res =
          op === 'forget'
            ? await ctx.call('DELETE', `/v1/users/${user}/memories/${id}`)
            : op === 'hard'
              ? await ctx.call('DELETE', `/v1/users/${user}/memories/${id}?hard=true`)
              : op === 'restore'
                ? await ctx.call('POST', `/v1/users/${user}/memories/${id}/restore`)
                : op === 'restate'
                  ? await ctx.call('POST', `/v1/users/${user}/memories`, { text, type: 'fact' })
                  : op === 'get'
                    ? await ctx.call('GET', `/v1/users/${user}/memories/${id}`)
                    : await ctx.call('GET', `/v1/users/${user}/memories/${id}/history`);
        return { op, status: res.status, body: JSON.stringify(res.body) };
      }),
    );
    expect(answers.filter((a) => a.status >= 500), `seed ${SEED} round ${round}: ${ops.join(',')}`).toEqual([]);
    const { rows } = await ctx.runtime.pool.query('SELECT status FROM memories WHERE user_id = $1 AND id = $2', [ctx.userKey(user), id]);
    if (rows.length === 0) continue; // hard-deleted: its history went with it
    // Replayed in the order the decisions were applied (under the memory's lock), as GET …/history
    // lists them; created_at is when each request was made, and a request made first can be applied
    // last. A create records its candidate and makes the memory active; a decision that changes no
    // status (a reinforcement) records no status and leaves the memory as it was.
    const events = await ctx.runtime.pool.query('SELECT action, after FROM memory_events WHERE user_id = $1 AND memory_id = $2 ORDER BY id', [ctx.userKey(user), id]);
    let explained: string | undefined;
    for (const e of events.rows as { action: string; after: { status?: string } | null }[]) explained = e.action === 'create' ? 'active' : (e.after?.status ?? explained);
    // The memory is what its history made it.
    expect(explained, `seed ${SEED} round ${round}: ${ops.join(',')}`).toBe(rows[0].status);
    // A racing re-statement either landed or says why not: a 409 names the conflict.
    for (const a of answers.filter((x) => x.op === 'restate' && x.status === 409)) expect(JSON.parse(a.body).error.code).toBe('conflict');
  }
});
