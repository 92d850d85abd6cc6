import { describe, expect, inject, it } from 'vitest';
import { EmbeddingsEndpoint } from '../src/adapters/embeddings/embeddings-endpoint';
import { LangChainEmbedder } from '../src/adapters/embeddings/langchain-embedder';
import { OpenAICompatibleEmbeddings } from '../src/adapters/embeddings/openai-compatible-embeddings';
import { loadConfig } from '../src/config';
import { batchingEmbedder } from '../src/conversation/extraction-embedder';
import type { Embedder } from '../src/core/ports/memory';
import { freePort } from '../src/stack/managed-process';

/** The real e5 endpoint of the test stack, as the worker builds it. */
function e5(baseUrl: string): Embedder {
  const config = loadConfig({ ...process.env, NODE_ENV: 'test' });
  const model = config.embedder.provider === 'openai-compatible' ? config.embedder.model : 'e5';
  const endpoint = new EmbeddingsEndpoint({ baseUrl, model });
  return new LangChainEmbedder(new OpenAICompatibleEmbeddings(endpoint), new OpenAICompatibleEmbeddings(endpoint, { lane: 'background' }));
}

/** Records the document requests that reach the real embedder (texts per call, lane). */
function recorded(inner: Embedder) {
  const calls: { texts: string[]; lane: string }[] = [];
  const embedder: Embedder = {
    embedQuery: (input) => inner.embedQuery(input),
    embedDocuments: (input) => {
      calls.push({ texts: [...input.texts], lane: input.lane ?? 'interactive' });
      return inner.embedDocuments(input);
    },
  };
  return { embedder, calls };
}

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return dot / Math.sqrt(na * nb);
};

const CANDIDATES = ['User lives in Hangzhou.', '用户对花生过敏。', 'User prefers concise answers.', '用户养了一只叫豆豆的猫。', 'User goes running at 6am.', '用户的目标是年底前学会日语。'];

describe('decisions running at once share embedder requests (real e5 server)', () => {
  const url = inject('stack').embeddingsUrl;

  it('six decisions at once make one request, and each gets the vector its text gets alone', async () => {
    expect(url, 'the test stack starts the e5 embedder').toBeTruthy();
    const real = e5(url!);
    const { embedder, calls } = recorded(real);
    const batching = batchingEmbedder(embedder);
    const together = await Promise.all(CANDIDATES.map((text) => batching.embedDocuments({ texts: [text] })));
    expect(calls).toEqual([{ texts: CANDIDATES, lane: 'interactive' }]);
    for (const [i, text] of CANDIDATES.entries()) {
      const [alone] = await real.embedDocuments({ texts: [text] });
      expect(together[i]).toHaveLength(1);
      expect(cosine(together[i]![0]!, alone!)).toBeGreaterThan(0.9999);
    }
  });

  it('a request sent while another is on the wire waits for it, then goes with the others that waited', async () => {
    const { embedder, calls } = recorded(e5(url!));
    const batching = batchingEmbedder(embedder);
    const first = batching.embedDocuments({ texts: [CANDIDATES[0]!] });
    // The first request is on the wire by the next macrotask; these four arrive while it is.
    await new Promise((r) => setImmediate(r));
    const later = CANDIDATES.slice(1, 5).map((text) => batching.embedDocuments({ texts: [text] }));
    await Promise.all([first, ...later]);
    expect(calls.map((c) => c.texts)).toEqual([[CANDIDATES[0]], CANDIDATES.slice(1, 5)]);
  });

  it('the same text asked twice is embedded once; lanes are never mixed; a batch never passes its size', async () => {
    const { embedder, calls } = recorded(e5(url!));
    const batching = batchingEmbedder(embedder, 3);
    const [a, b, c] = await Promise.all([
      batching.embedDocuments({ texts: [CANDIDATES[0]!] }),
      batching.embedDocuments({ texts: [CANDIDATES[0]!, CANDIDATES[1]!] }),
      batching.embedDocuments({ texts: [CANDIDATES[2]!], lane: 'background' }),
      batching.embedDocuments({ texts: [CANDIDATES[3]!, CANDIDATES[4]!] }),
    ]);
    expect(b![0]).toEqual(a![0]);
    expect(c).toHaveLength(1);
    expect(calls).toEqual([
      { texts: [CANDIDATES[0], CANDIDATES[1]], lane: 'interactive' },
      { texts: [CANDIDATES[2]], lane: 'background' },
      { texts: [CANDIDATES[3], CANDIDATES[4]], lane: 'interactive' },
    ]);
  });

  it('an unreachable embedder fails every decision of the batch and the next batch still goes out; an empty call sends nothing', async () => {
    const down = batchingEmbedder(e5(`http://127.0.0.1:${await freePort()}/v1`));
    const results = await Promise.allSettled(CANDIDATES.slice(0, 3).map((text) => down.embedDocuments({ texts: [text] })));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/unreachable/u);
    const again = await Promise.allSettled([down.embedDocuments({ texts: [CANDIDATES[0]!] })]);
    expect(again[0]!.status).toBe('rejected');

    const { embedder, calls } = recorded(e5(url!));
    const up = batchingEmbedder(embedder);
    await expect(up.embedDocuments({ texts: [] })).resolves.toEqual([]);
    expect(calls).toEqual([]);
  });
});
