import { E5StatementEncoder } from '../src/adapters/embeddings/e5-statement-encoder';
import { EmbeddingsEndpoint } from '../src/adapters/embeddings/embeddings-endpoint';
import { loadConfig } from '../src/config';
import { startBenchEmbedder } from './support';
import { CachingEncoder } from '../test/support/net-eval';
import { changeTable, judgeChangeSplit, type ChangeVerdict } from '../test/support/change-eval';

/**
 * `npm run bench -- change-statements [--tune] [--errors] [--tune-errors]`: the change-statement set
 * (new, ended, resumed and recovered states of the user beside plans, wishes, questions, other
 * people, hypotheticals and small talk) through the product path (rules, then the net over the
 * real e5 server): pass counts by label for the held-out split beside the tune split, and the
 * lines each gets wrong; `--tune` scores the tune split alone.
 */
export async function run(args: string[]): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const { baseUrl, model, apiKey, stop } = await startBenchEmbedder(config);
  try {
    const encoder = new CachingEncoder(new E5StatementEncoder(new EmbeddingsEndpoint({ baseUrl, model, apiKey })));
    // While rules are being changed, `--tune` keeps the held-out split out of sight.
    const splits = args.includes('--tune') ? (['tune'] as const) : (['holdout', 'tune'] as const);
    const results = new Map<string, { rules: ChangeVerdict[]; net: ChangeVerdict[] }>();
    for (const split of splits) results.set(split, { rules: await judgeChangeSplit(split), net: await judgeChangeSplit(split, encoder) });
    console.log(`| label | ${splits.map((s) => `${s}: rules | ${s}: rules+net`).join(' | ')} |\n|---|${splits.map(() => '---:|---:|').join('')}`);
    const cells = splits.flatMap((s) => [changeTable(results.get(s)!.rules), changeTable(results.get(s)!.net)]);
    cells[0]!.forEach((row, i) => console.log(`| ${row.label} | ${cells.map((c) => `${c[i]!.passed}/${c[i]!.total}`).join(' | ')} |`));
    for (const [split, flag] of [['holdout', '--errors'], ['tune', '--tune-errors']] as const) {
      const verdicts = results.get(split);
      if (!verdicts || !args.includes(flag)) continue;
      console.log(`\n${split} lines the product path gets wrong:`);
      for (const v of verdicts.net.filter((x) => !x.pass)) console.log(`  [${v.line.label}, expect ${v.line.expect}] ${v.line.text}  →  ${JSON.stringify(v.kept)}`);
    }
  } finally {
    await stop();
  }
}
