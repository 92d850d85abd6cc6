/**
 * Export of everything stored about one user (GET /v1/users/{userId}/export, right of access and
 * portability): one JSON document, written incrementally from keyset-paged queries so a user with
 * millions of messages costs a page of memory, not the whole user.
 */
import { userExists } from './settings';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { resolveSettings } from '../core/proactive/settings';
import type { ExportSection } from '../core/ports';
import type { ServiceDeps } from './deps';

/** Format tag of the document; bump it when a section changes shape. */
export const EXPORT_FORMAT = 'jarvis-memory.export/1';
/** Rows per query. */
export const EXPORT_PAGE = 500;

/** The sections of an export, in document order (besides `format`, `exportedAt`, `user`, `settings` and `profile`). */
export const EXPORT_SECTIONS = [
  'memories',
  'otherEvents',
  'conversations',
  'messages',
  'episodes',
  'reminders',
  'notifications',
  'digests',
  'entities',
  'relations',
] as const satisfies readonly ExportSection[];
export type { ExportSection };

export interface UserExport {
  /** A download name without the internal key ("jarvis-memory-export-<external id>-<date>.json"). */
  fileName: string;
  /** The document in chunks (one page of rows each); the snapshot is released when it ends or is abandoned. */
  chunks: AsyncGenerator<string, void, undefined>;
}

/**
 * Opens the export of the user stored under `userKey`. The document names the user by
 * `externalUserId` (the tenant's own id), never by the internal key: internal references (workflow
 * ids, idempotency keys) are not exported, and any other string that contains the key has it
 * replaced. Unknown user → not_found, before anything is streamed.
 *
 * The whole document is read in one REPEATABLE READ READ ONLY transaction, so it is a consistent
 * snapshot (a memory and its history, a message and the episode quoting it agree) however long
 * the download takes; that holds one pooled connection for the duration.
 */
export async function openUserExport(deps: Pick<ServiceDeps, 'exports' | 'users' | 'config'>, input: { userKey: string; externalUserId: string; now: Date; pageSize?: number }): Promise<UserExport> {
  if (!(await userExists(deps, input.userKey))) throw new MemoryServiceError(ErrorCode.notFound, 'unknown user', { userId: input.externalUserId });
  const safeId = input.externalUserId.replace(/[^\w.-]/g, '_').slice(0, 80);
  return {
    fileName: `jarvis-memory-export-${safeId}-${input.now.toISOString().slice(0, 10)}.json`,
    chunks: documentChunks(deps, { ...input, pageSize: input.pageSize ?? EXPORT_PAGE }),
  };
}

async function* documentChunks(deps: Pick<ServiceDeps, 'exports' | 'config'>, input: { userKey: string; externalUserId: string; now: Date; pageSize: number }): AsyncGenerator<string, void, undefined> {
  const json = jsonWithout(input.userKey, input.externalUserId);
  const snapshot = await deps.exports.openSnapshot();
  let completed = false;
  try {
    const user = await snapshot.user({ userKey: input.userKey });
    const settings = user ? resolveSettings(user.timezone, user.settings, { digestTime: deps.config.proactive.digestDefaultTime }) : null;
    yield `{"format":${json(EXPORT_FORMAT)},"exportedAt":${json(input.now.toISOString())}` +
      `,"user":${json(user ? { userId: input.externalUserId, tenantId: user.tenantId, createdAt: user.createdAt } : null)}` +
      `,"settings":${json(user ? { ...settings, stored: user.settings } : null)}` +
      `,"profile":${json(await snapshot.profile({ userKey: input.userKey }))}`;
    for (const section of EXPORT_SECTIONS) {
      yield `,${json(section)}:[`;
      let after: unknown = null;
      let first = true;
      do {
        const page = await snapshot.page({ section, userKey: input.userKey, after, limit: input.pageSize });
        if (page.rows.length > 0) {
          yield `${first ? '' : ','}${page.rows.map((r) => json(r)).join(',')}`;
          first = false;
        }
        after = page.next;
      } while (after !== null);
      yield ']';
    }
    yield '}\n';
    completed = true;
  } finally {
    // Also reached when the download is abandoned: the stream's destroy returns the generator.
    await snapshot.close({ completed });
  }
}

/** JSON.stringify that replaces the internal user key with the external id inside any string. */
function jsonWithout(userKey: string, externalUserId: string): (value: unknown) => string {
  if (userKey === externalUserId || userKey === '') return (value) => JSON.stringify(value);
  return (value) => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' && v.includes(userKey) ? v.split(userKey).join(externalUserId) : v));
}
