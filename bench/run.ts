import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * `npm run bench -- <name…>` runs bench/<name>.bench.ts (all of them without a name). Benchmarks
 * print medians and tails, and the ratio to a floor measured in the same run where one exists;
 * they assert nothing: these machines are shared and noisy.
 */
const dir = fileURLToPath(new URL('.', import.meta.url));
const available = readdirSync(dir).filter((f) => f.endsWith('.bench.ts')).map((f) => f.replace(/\.bench\.ts$/, ''));
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const chosen = wanted.length > 0 ? wanted : available;
for (const name of chosen) {
  if (!available.includes(name)) {
    console.error(`unknown benchmark "${name}"; available: ${available.join(', ')}`);
    process.exit(2);
  }
}
for (const name of chosen) {
  console.log(`\n=== ${name} ===`);
  const mod = (await import(`./${name}.bench.ts`)) as { run(args: string[]): Promise<void> };
  await mod.run(process.argv.slice(2).filter((a) => a.startsWith('--')));
}
// A benchmark that found something wrong (the chaos verdict) sets process.exitCode.
process.exit(process.exitCode ?? 0);
