import { createHash } from 'node:crypto';

/**
 * A named (prepared) statement: node-postgres parses it once per connection and then only binds
 * and executes it, and after five executions PostgreSQL may reuse a generic plan instead of
 * planning each call (plan_cache_mode auto). For recall's statements the planning was most of the
 * server's work (the short lists: 0.55 ms planned, 0.17 ms run), paid on the two cores the Chroma
 * query needs. Only statements whose shape holds whatever the parameters and statistics say
 * belong here (their generic plans are pinned by test/bm25-plans.int.test.ts): the name is the
 * text's hash, so two texts never share a name and one text always gets the same.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

export function prepared(text: string): PreparedStatement {
  return { name: `jm_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text };
}

/** The query config node-postgres takes for a named statement. */
export function bind(statement: PreparedStatement, values: unknown[]): { name: string; text: string; values: unknown[] } {
  return { name: statement.name, text: statement.text, values };
}
