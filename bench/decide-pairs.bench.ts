import { E5StatementEncoder } from '../src/adapters/embeddings/e5-statement-encoder';
import { EmbeddingsEndpoint } from '../src/adapters/embeddings/embeddings-endpoint';
import { loadConfig } from '../src/config';
import { DEFAULT_DECIDE_OPTIONS, type DecideOptions } from '../src/core/decisions/decide';
import { startBenchEmbedder } from './support';
import { CachingEncoder } from '../test/support/net-eval';
import { ACCEPTED, loadPairs, PAIR_SETS, outcomeOf, preparePair, type PairLabel, type PairSet, type PreparedPair } from '../test/support/decide-pairs';

const LABELS: PairLabel[] = ['same', 'update', 'opposite', 'different'];

function score(prepared: readonly PreparedPair[], options: DecideOptions): { perLabel: Record<PairLabel, [number, number]>; missed: number; right: number; judged: number } {
  const perLabel = Object.fromEntries(LABELS.map((l) => [l, [0, 0]])) as Record<PairLabel, [number, number]>;
  let missed = 0;
  for (const p of prepared) {
    const outcome = outcomeOf(p, options);
    if (outcome === 'not-extracted') {
      missed++;
      continue;
    }
    const cell = perLabel[p.pair.label];
    cell[1]++;
    if (ACCEPTED[p.pair.label].includes(outcome)) cell[0]++;
  }
  const right = LABELS.reduce((s, l) => s + perLabel[l][0], 0);
  const judged = LABELS.reduce((s, l) => s + perLabel[l][1], 0);
  return { perLabel, missed, right, judged };
}

const row = (name: string, s: ReturnType<typeof score>) =>
  `| ${name} | ${LABELS.map((l) => `${s.perLabel[l][0]}/${s.perLabel[l][1]}`).join(' | ')} | ${s.right}/${s.judged} | ${s.missed} |`;

/**
 * `npm run bench -- decide-pairs [--set=1|2|3] [--grid] [--errors|--tune-errors] [--tune-only]`: the conflict resolver on labelled pairs
 * (an earlier and a later message) through the product path over the real e5 server: how often a
 * restatement is merged, a change replaces the old value, and a different fact is kept beside it,
 * for the held-out split and the tune split. `--grid` also scores other duplicate thresholds
 * (similarity × word overlap) on both, to choose on tune and read on held-out. Every pair set is
 * scored unless `--set` names one; `--tune-only` leaves the held-out splits unread, for tuning.
 */
export async function run(args: string[]): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const { baseUrl, model, apiKey, stop } = await startBenchEmbedder(config);
  try {
    const endpoint = new EmbeddingsEndpoint({ baseUrl, model, apiKey });
    const net = new CachingEncoder(new E5StatementEncoder(endpoint));
    const passages = { passages: (texts: readonly string[]) => endpoint.embed({ texts, inputType: 'passage' }) };
    const setArg = args.find((a) => a.startsWith('--set='))?.slice('--set='.length);
    const sets: PairSet[] = setArg === undefined ? [...PAIR_SETS] : PAIR_SETS.filter((s) => String(s) === setArg);
    if (sets.length === 0) throw new Error(`--set=${setArg}: no such pair set (${PAIR_SETS.join(', ')})`);
    // While rules are being changed the held-out split must not be looked at, not even its totals.
    const shownSplits = args.includes('--tune-only') ? (['tune'] as const) : (['holdout', 'tune'] as const);
    if (args.includes('--tune-only') && args.includes('--errors')) throw new Error('--tune-only and --errors (held-out errors) contradict each other');
    const header = `| options | ${LABELS.join(' | ')} | all | not extracted |\n|---|${LABELS.map(() => '---:').join('|')}|---:|---:|`;
    const grid: DecideOptions[] = [DEFAULT_DECIDE_OPTIONS];
    if (args.includes('--grid')) {
      for (const dedupSimilarity of [0.86, 0.88, 0.9, 0.92, 0.93, 0.94]) {
        for (const dedupMinOverlap of [0, 0.1, 0.2, 0.3, 0.4, 0.5]) grid.push({ ...DEFAULT_DECIDE_OPTIONS, dedupSimilarity, dedupMinOverlap });
      }
    }
    for (const set of sets) {
      const splits = { holdout: [] as PreparedPair[], tune: [] as PreparedPair[] };
      for (const split of shownSplits) for (const pair of loadPairs(split, set)) splits[split].push(await preparePair(pair, net, passages));
      for (const split of shownSplits) {
        console.log(`\nset ${set}, ${split}: ${splits[split].length} pairs`);
        console.log(header);
        for (const options of grid) console.log(row(`similarity ≥ ${options.dedupSimilarity}, overlap ≥ ${options.dedupMinOverlap}${options === DEFAULT_DECIDE_OPTIONS ? ' (today)' : ''}`, score(splits[split], options)));
      }
      if (args.includes('--errors') || args.includes('--tune-errors')) {
        const split = args.includes('--errors') ? 'holdout' : 'tune';
        console.log(`\nset ${set}, ${split} pairs today's options get wrong:`);
        for (const p of splits[split]) {
          const outcome = outcomeOf(p);
          if (outcome !== 'not-extracted' && !ACCEPTED[p.pair.label].includes(outcome)) {
            const sims = p.similarity.map((m) => [...m.values()].map((x) => x.toFixed(3)).join('/')).join(' ');
            console.log(`  [${p.pair.label} → ${outcome}; sim ${sims}] ${p.pair.a}  ⇒  ${p.pair.b}`);
          }
        }
        console.log(`set ${set}, ${split} pairs with no memory on one side:`);
        for (const p of splits[split]) if (outcomeOf(p) === 'not-extracted') console.log(`  [${p.pair.label}; a ${p.memories.length}, b ${p.candidates.length}] ${p.pair.a}  ⇒  ${p.pair.b}`);
      }
    }
  } finally {
    await stop();
  }
}
