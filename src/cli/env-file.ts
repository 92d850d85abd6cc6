import { existsSync } from 'node:fs';

/** Loads `.env` into the environment when present (Node's own parser); config reads it next. */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
