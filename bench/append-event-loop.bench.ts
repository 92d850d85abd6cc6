import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fmt, startBenchStack, stats } from './support';

/**
 * What another user sees while one user appends the largest batch the API allows (1,000 messages
 * of MAX_MESSAGE_CHARS of junk): the API process's event-loop delay during the append, and the
 * latency of the other user's requests (a memory list, one PostgreSQL read) sent one after another
 * until the batch is answered. Two kinds of junk: the numbers of test/message-index-bound.int.test.ts
 * and random Chinese characters (as many as the body limit lets through), the slowest text for jieba
 * we found. The API runs in this process with its rule pool (RULE_POOL_THREADS); no worker runs,
 * so nothing else competes for the pool.
 */
const KEY = 'bench-key';
const RUNS = 3;

let seed = 7;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

function numbers(max: number): string {
  let s = String(Math.floor(random() * 1e9));
  while (s.length < max - 11) s += ` ${Math.floor(random() * 1e9)}`;
  return s;
}

function chinese(max: number): string {
  let s = '';
  while (s.length < max) s += String.fromCharCode(0x4e00 + Math.floor(random() * 20_000));
  return s;
}

export async function run(): Promise<void> {
  const bench = await startBenchStack({ API_KEYS: `bench:${KEY}`, NODE_ENV: 'test', PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE: 'false' });
  const { runtime, config } = bench;
  const api = await runtime.createApi({ taskQueue: config.temporal.taskQueue });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const address = api.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    await res.arrayBuffer();
    return res.status;
  };
  const max = config.extraction.maxMessageChars;
  console.log(`API in this process, RULE_POOL_THREADS=${config.extraction.ruleThreads}, MAX_MESSAGE_CHARS=${max}, MAX_MESSAGES_BODY_BYTES=${config.maxMessagesBodyBytes}, ${RUNS} runs per kind, 1000 messages per batch`);
  try {
    // Both users exist and the pool's threads have started before anything is measured.
    await call('POST', '/v1/users/bob/conversations/warm/messages', { messages: [{ id: 'w1', role: 'user', content: '我喜欢喝咖啡' }] });
    await call('POST', '/v1/users/mallory/conversations/warm/messages', { messages: [{ id: 'w1', role: 'user', content: '我喜欢喝绿茶' }] });
    // Chinese is three bytes a character: the body limit, not MAX_MESSAGE_CHARS, bounds that batch.
    const chineseChars = Math.min(max, Math.floor((config.maxMessagesBodyBytes - 100_000) / 1000 / 3));
    for (const [kind, text] of [['numbers', () => numbers(max)], ['chinese', () => chinese(chineseChars)]] as const) {
      const delays: number[] = [];
      const worst: number[] = [];
      const other: number[] = [];
      const batches: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        const messages = Array.from({ length: 1000 }, (_, i) => ({ id: `m${i}`, role: 'user', content: text() }));
        const histogram = monitorEventLoopDelay({ resolution: 5 });
        histogram.enable();
        const t0 = performance.now();
        let done = false;
        const batch = call('POST', `/v1/users/mallory/conversations/${kind}-${r}/messages`, { messages }).then((status) => {
          done = true;
          batches.push(performance.now() - t0);
          if (status !== 202) throw new Error(`batch answered ${status}`);
        });
        while (!done) {
          const s = performance.now();
          const status = await call('GET', '/v1/users/bob/memories?limit=1');
          if (status !== 200) throw new Error(`other user's request answered ${status}`);
          other.push(performance.now() - s);
        }
        await batch;
        histogram.disable();
        delays.push(histogram.percentile(99) / 1e6);
        worst.push(histogram.max / 1e6);
      }
      const o = stats(other);
      console.log(
        `${kind.padEnd(8)} | batch ${fmt(stats(batches).p50)} | event-loop delay p99 ${delays.map(fmt).join(' / ')}, max ${worst.map(fmt).join(' / ')} | other user's ${other.length} requests p50 ${fmt(o.p50)} p95 ${fmt(o.p95)} max ${fmt(Math.max(...other))}`,
      );
    }
  } finally {
    await api.close();
    await bench.stop();
  }
}
