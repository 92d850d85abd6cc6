/**
 * Export of everything stored about one user (GET /v1/users/{userId}/export, right of access and
 * portability): one JSON document, written incrementally from keyset-paged queries so a user with
 * millions of messages costs a page of memory, not the whole user.
 */
import { open, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { userExists } from '../account/settings';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { resolveSettings } from '../core/user-settings';
import type { ExportSection } from '../core/ports/privacy';
import type { AppConfig } from '../config';
import type { ServiceDeps } from '../shared/deps';

/** Format tag of the document; bump it when a section changes shape. */
export const EXPORT_FORMAT = 'jarvis-memory.export/1';
/** Rows per query. */
export const EXPORT_PAGE = 500;

/** The sections of an export, in document order (besides `format`, `exportedAt`, `user`, `settings`, `profile` and `scenes`). */
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
  /** Pages of rows read so far (the export's cost, in `exports` budget units). */
  readonly stats: { pages: number };
}

/**
 * Opens the export of the user stored under `userKey`. The document names the user by
 * `externalUserId` (the tenant's own id), never by the internal key: internal references (workflow
 * ids, idempotency keys) are not exported, and any other string that contains the key has it
 * replaced. Unknown user → not_found, before anything is streamed.
 *
 * The whole document is read in one REPEATABLE READ READ ONLY transaction, so it is a consistent
 * snapshot (a memory and its history, a message and the episode quoting it agree). The
 * transaction holds a pooled connection while the chunks are read: {@link spoolUserExport} reads
 * them to a file at the database's speed, so a slow client never holds it.
 */
export async function openUserExport(
  deps: Pick<ServiceDeps, 'exports' | 'users'> & { config: Pick<AppConfig, 'proactive'> & Partial<Pick<AppConfig, 'exports'>> },
  input: { userKey: string; externalUserId: string; now: Date; pageSize?: number },
): Promise<UserExport> {
  if (!(await userExists(deps, input.userKey))) throw new MemoryServiceError(ErrorCode.notFound, 'unknown user', { userId: input.externalUserId });
  const safeId = input.externalUserId.replace(/[^\w.-]/g, '_').slice(0, 80);
  const stats = { pages: 0 };
  return {
    fileName: `jarvis-memory-export-${safeId}-${input.now.toISOString().slice(0, 10)}.json`,
    chunks: documentChunks(deps, { ...input, pageSize: input.pageSize ?? EXPORT_PAGE }, stats),
    stats,
  };
}

async function* documentChunks(
  deps: Parameters<typeof openUserExport>[0],
  input: { userKey: string; externalUserId: string; now: Date; pageSize: number },
  stats: { pages: number },
): AsyncGenerator<string, void, undefined> {
  const json = jsonWithout(input.userKey, input.externalUserId);
  const limits = deps.config.exports;
  const snapshot = await deps.exports.openSnapshot({ statementTimeoutMs: limits?.statementTimeoutMs, idleTimeoutMs: limits?.statementTimeoutMs });
  let completed = false;
  try {
    const user = await snapshot.user({ userKey: input.userKey });
    const settings = user ? resolveSettings(user.timezone, user.settings, { digestTime: deps.config.proactive.digestDefaultTime }) : null;
    yield `{"format":${json(EXPORT_FORMAT)},"exportedAt":${json(input.now.toISOString())}` +
      `,"user":${json(user ? { userId: input.externalUserId, tenantId: user.tenantId, createdAt: user.createdAt } : null)}` +
      `,"settings":${json(user ? { ...settings, stored: user.settings } : null)}` +
      `,"profile":${json(await snapshot.profile({ userKey: input.userKey }))}` +
      `,"scenes":${json(await snapshot.scenes({ userKey: input.userKey }))}`;
    for (const section of EXPORT_SECTIONS) {
      yield `,${json(section)}:[`;
      let after: unknown = null;
      let first = true;
      do {
        const page = await snapshot.page({ section, userKey: input.userKey, after, limit: input.pageSize });
        stats.pages++;
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

/** An export read to a spool file: the pooled connection is back before the first byte is sent. */
export interface SpooledExport {
  /** The document, from a file already unlinked: it disappears when the stream closes, however it ends. */
  stream: Readable;
  bytes: number;
}

/**
 * Reads the whole export into a temporary file as fast as PostgreSQL answers, closes the snapshot,
 * and returns a stream over the file. The consistency is the snapshot's (one REPEATABLE READ
 * transaction for the whole document); what a slow or paused client holds is a file descriptor,
 * not a database connection. Past `deadlineMs` of reading the snapshot is abandoned (rolled back)
 * and the export fails with `dependency_timeout`, before anything was sent.
 */
export async function spoolUserExport(exported: UserExport, opts: { deadlineMs: number; dir?: string }): Promise<SpooledExport> {
  const dir = await mkdtemp(join(opts.dir ?? tmpdir(), 'jarvis-export-'));
  const path = join(dir, 'export.json');
  const started = Date.now();
  let bytes = 0;
  try {
    const file = await open(path, 'w+', 0o600);
    try {
      for await (const chunk of exported.chunks) {
        if (Date.now() - started > opts.deadlineMs) {
          // Leaving the loop returns the generator: the snapshot is rolled back and released.
          throw new MemoryServiceError(ErrorCode.dependencyTimeout, `the export took longer than ${opts.deadlineMs} ms to read`, { deadlineMs: opts.deadlineMs });
        }
        const buffer = Buffer.from(chunk, 'utf8');
        await file.write(buffer);
        bytes += buffer.length;
      }
    } catch (err) {
      await file.close();
      throw err;
    }
    // The open handle keeps the file readable after its name is gone; closing the stream frees it.
    const stream = file.createReadStream({ start: 0, autoClose: true });
    return { stream, bytes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
