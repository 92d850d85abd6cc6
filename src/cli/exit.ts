import { SchemaBehindError } from '../adapters/postgres/migrate';
import { ConfigError } from '../config';
import { StackStartError } from '../stack/readiness';
import { StaleBuildError } from '../shared/workflow-bundle';

/**
 * Ends an entry point that failed. What an operator can fix (a dependency that does not answer, a
 * port in use, a bad variable) gets one line naming it; anything else is a bug and keeps its stack.
 */
export function exitWith(entry: string, err: unknown): never {
  if (err instanceof StackStartError || err instanceof ConfigError || err instanceof SchemaBehindError || err instanceof StaleBuildError) console.error(`[${entry}] cannot start: ${err.message}`);
  else console.error(err);
  process.exit(1);
}
