import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config';
import { checkScenario, formatReport, ingestScenario, summarize, type RouteMode, type ScenarioOutcome } from '../eval/runner';
import { loadScenarios } from '../eval/scenarios';
import { createRuntime } from '../runtime';
import { startStack } from '../stack';
import { loadDotEnv } from './env-file';
import { serveInProcess } from './in-process';

/** The shared evaluation set as copied into the repository (test/fixtures/eval/README.md). */
const DEFAULT_SCENARIOS = ['scenarios.jsonl', 'episodic.jsonl'].map((f) => fileURLToPath(new URL(`../../test/fixtures/eval/${f}`, import.meta.url)));

/**
 * `npm run eval [-- files…]`: replays the bilingual scenarios through the public API of a fresh
 * in-process service (its own stack unless URLs are configured) and prints pass rates overall, by
 * tag, and by recall route (fused, ANN only, BM25 only) so each route's contribution shows.
 */
async function main(): Promise<void> {
  loadDotEnv();
  const files = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const paths = files.length > 0 ? files : DEFAULT_SCENARIOS;
  const config = loadConfig({ ...process.env, DATA_DIR: process.env.EVAL_DATA_DIR ?? `.data/eval-${process.pid}`, LOG_LEVEL: 'warn', CHROMA_COLLECTION: `eval_${randomBytes(3).toString('hex')}` });
  const stack = await startStack(config, { ephemeral: true });
  const runtime = await createRuntime(config, stack);
  const service = await serveInProcess(runtime, config.tenants[0]!.key);
  const { client } = service;
  let failed = false;
  try {
    for (const path of paths) {
      const scenarios = loadScenarios(path);
      const runId = `eval${randomBytes(3).toString('hex')}`;
      for (const s of scenarios) await ingestScenario(client, s, runId);
      for (const mode of ['fused', 'ann', 'bm25'] as RouteMode[]) {
        const outcomes: ScenarioOutcome[] = [];
        for (const s of scenarios) outcomes.push(await checkScenario(client, s, runId, mode));
        const report = summarize(outcomes);
        console.log(formatReport(`${path.split('/').pop()} [${mode}]`, mode === 'fused' ? report : { ...report, failures: [] }));
        if (mode === 'fused' && report.passed < report.total) failed = true;
      }
    }
  } finally {
    await service.close();
    await runtime.close();
    await stack.stop();
  }
  process.exitCode = failed ? 1 : 0;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
