import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * `npm run bench -- <name…> [args]` runs bench/<name>.bench.ts (all of them without a name), passing
 * it what follows the names (e.g. `npm run bench -- locomo <dir>`). Benchmarks
 * print medians and tails, and the ratio to a floor measured in the same run where one exists;
 * they assert nothing: these machines are shared and noisy.
 */
const dir = fileURLToPath(new URL('.', import.meta.url));
const available = readdirSync(dir).filter((f) => f.endsWith('.bench.ts')).map((f) => f.replace(/\.bench\.ts$/, ''));
// Leading words name benchmarks; what follows the names (a data folder, option values) is the benchmarks' own.
const argv = process.argv.slice(2);
const firstOther = argv.findIndex((a) => a.startsWith('--') || !available.includes(a));
const wanted = argv.slice(0, firstOther < 0 ? argv.length : firstOther);
const rest = argv.slice(wanted.length);
if (wanted.length === 0 && rest[0] !== undefined && !rest[0].startsWith('--')) wanted.push(rest.shift()!);
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
  await mod.run(rest);
}
// A benchmark that found something wrong (the chaos verdict) sets process.exitCode.
process.exit(process.exitCode ?? 0);
