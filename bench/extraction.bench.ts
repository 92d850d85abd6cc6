import { randomBytes } from 'node:crypto';
import { candidateKey } from '../activities';
import { PostgresConversationRepository } from '../src/adapters/postgres/conversation-repository';
import { inTransaction } from '../src/adapters/postgres/pool';
import { serveInProcess } from '../src/cli/in-process';
import { applyCandidate } from '../src/memory/memory-writer';
import { fmt, startBenchStack, stats, timed } from './support';
import { indexedOnThisThread } from '../test/support/indexed-messages';

const CONVERSATION: [role: 'user' | 'assistant', text: string][] = [
  ['user', '我是后端工程师，住在杭州。'],
  ['user', '我的目标是年底前把 payment-svc 的 P99 延迟降到 50ms 以下。'],
  ['assistant', '可以先从连接池和慢查询入手。'],
  ['user', 'payment-svc 每天晚上 9 点都会超时，真的很急。'],
  ['user', 'I prefer concise answers, and I love hiking on weekends.'],
  ['assistant', 'Got it.'],
];

/**
 * Extraction throughput through the whole pipeline (API → Temporal → activities → PostgreSQL +
 * Chroma) with the offline extractor: end-call → memories-visible latency and conversations per
 * second, next to the same work done by calling the extractor and the decision function directly
 * (no Temporal), so Temporal's overhead shows as a ratio.
 */
export async function run(args: string[]): Promise<void> {
  const count = args.includes('--quick') ? 15 : 40;
  const bench = await startBenchStack();
  try {
    const { runtime, config } = bench;
    const service = await serveInProcess(runtime, config.tenants[0]!.key);
    const { client } = service;
    const run = randomBytes(3).toString('hex');
    const send = (user: string, conv: string) =>
      client.addMessages(user, conv, CONVERSATION.map(([role, content], i) => ({ id: `m${i}`, role, content })));

    // Warm-up: bundle, connections, embedder.
    await send(`warm-${run}`, 'c0');
    await client.endConversation(`warm-${run}`, 'c0', { wait: true });

    // 1. Sequential: end-call → memories visible (wait=true returns once every decision is applied).
    const latency: number[] = [];
    for (let i = 0; i < count; i++) {
      const user = `seq-${run}-${i}`;
      await send(user, 'c1');
      const [, ms] = await timed(() => client.endConversation(user, 'c1', { wait: true }));
      latency.push(ms);
    }
    // 2. Throughput with 4 conversations in flight.
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < count) {
          const i = next++;
          const user = `par-${run}-${i}`;
          await send(user, 'c1');
          await client.endConversation(user, 'c1', { wait: true });
        }
      }),
    );
    const pipelinePerSecond = count / ((performance.now() - t0) / 1000);

    // 3. The same work without Temporal: extractor + decisions called directly.
    const direct: number[] = [];
    for (let i = 0; i < count; i++) {
      const user = `direct-${run}-${i}`;
      const messages = CONVERSATION.map(([role, content], j) => ({ id: `m${j}`, role, content, at: new Date(), truncated: false }));
      await inTransaction(runtime.pool, async (c) => {
        await c.query(`INSERT INTO users (user_id, tenant_id, external_id) VALUES ($1, 'bench', $1) ON CONFLICT DO NOTHING`, [user]);
        await new PostgresConversationRepository(c).append({ userId: user, conversationId: 'c1', messages: indexedOnThisThread(messages) });
      });
      const [, ms] = await timed(async () => {
        const page = await runtime.deps.conversations.page({ userId: user, conversationId: 'c1', afterSeq: 0, limit: 200 });
        const { candidates } = await runtime.deps.extractor.extract({ messages: page, timezone: 'UTC' });
        for (const c of candidates) await applyCandidate(runtime.deps, { userId: user, candidate: c, key: candidateKey(user, 'c1', c), audit: { actor: 'bench', conversationId: 'c1' } });
      });
      direct.push(ms);
    }
    const L = stats(latency);
    const D = stats(direct);
    console.log(`conversation: ${CONVERSATION.length} messages, offline extractor, ${count} samples`);
    console.log(`end → memories visible (through Temporal)  p50 ${fmt(L.p50)}  p95 ${fmt(L.p95)}  (seed target: within 30 s; aim < 2 s)`);
    console.log(`same work called directly                   p50 ${fmt(D.p50)}  p95 ${fmt(D.p95)}`);
    console.log(`Temporal overhead ratio (p50)               ×${(L.p50 / D.p50).toFixed(2)}`);
    console.log(`pipeline throughput, 4 in flight            ${pipelinePerSecond.toFixed(2)} conversations/s`);
    console.log(`direct throughput, sequential               ${(1000 / D.mean).toFixed(2)} conversations/s`);
    await service.close();
  } finally {
    await bench.stop();
  }
}
