import { migrate } from '../adapters/postgres/migrate';
import { loadConfig } from '../config';
import { startStack } from '../stack';
import { loadDotEnv } from './env-file';

/** Applies pending migrations to DATABASE_URL (or the local server) and exits. */
async function main(): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const stack = await startStack({ ...config }, {});
  const applied = await migrate(stack.databaseUrl, (msg) => console.log(msg));
  console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'schema up to date');
  await stack.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
