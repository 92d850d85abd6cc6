import { E5StatementEncoder } from '../src/adapters/embeddings/e5-statement-encoder';
import { EmbeddingsEndpoint } from '../src/adapters/embeddings/embeddings-endpoint';
import { loadConfig } from '../src/config';
import { startBenchEmbedder } from './support';
import { CachingEncoder } from '../test/support/net-eval';
import { guardTable, judgeGuardSplit, type GuardVerdict } from '../test/support/guard-eval';

/**
 * `npm run bench -- extract-guards [--errors] [--tune-errors]`: the guard set through the product
 * path (rules, then the net over the real e5 server), pass counts by kind for the held-out split
 * (the one no rule was tuned on) beside the tune split, and the lines each gets wrong.
 */
export async function run(args: string[]): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const { baseUrl, model, apiKey, stop } = await startBenchEmbedder(config);
  try {
    const encoder = new CachingEncoder(new E5StatementEncoder(new EmbeddingsEndpoint({ baseUrl, model, apiKey })));
    const results: Record<'holdout' | 'tune', { rules: GuardVerdict[]; net: GuardVerdict[] }> = {
      holdout: { rules: await judgeGuardSplit('holdout'), net: await judgeGuardSplit('holdout', encoder) },
      tune: { rules: await judgeGuardSplit('tune'), net: await judgeGuardSplit('tune', encoder) },
    };
    console.log('| kind | holdout: rules | holdout: rules+net | tune: rules | tune: rules+net |\n|---|---:|---:|---:|---:|');
    const rows = (v: GuardVerdict[]) => guardTable(v);
    const cells = [rows(results.holdout.rules), rows(results.holdout.net), rows(results.tune.rules), rows(results.tune.net)];
    cells[0]!.forEach((row, i) => console.log(`| ${row.kind} | ${cells.map((c) => `${c[i]!.passed}/${c[i]!.total}`).join(' | ')} |`));
    for (const [split, flag] of [['holdout', '--errors'], ['tune', '--tune-errors']] as const) {
      if (!args.includes(flag)) continue;
      console.log(`\n${split} lines the product path gets wrong:`);
      for (const v of results[split].net.filter((x) => !x.pass)) console.log(`  [${v.line.kind}, expect ${v.line.expect}] ${v.line.text}  →  ${JSON.stringify(v.kept)}`);
    }
  } finally {
    await stop();
  }
}
