import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTES } from '../../workflows/shared/search-attributes';

const { IndexedValueType } = proto.temporal.api.enums.v1;
const typeMap = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  Text: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  Bool: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
} as const;

/**
 * Makes the namespace match the audit promise on any Temporal (dev server or cluster): it exists,
 * keeps closed workflows for `retentionDays` (start-dev defaults to 24 h, which would erase the
 * audit trail), and has the project's search attributes. Idempotent.
 */
export async function ensureNamespace(
  connection: Connection,
  namespace: string,
  retentionDays: number,
): Promise<void> {
  const retention = msToTs(retentionDays * 86_400_000);
  try {
    const described = await connection.workflowService.describeNamespace({ namespace });
    // Written only when it differs: a managed namespace (Temporal Cloud) may refuse the write
    // (its retention is set where the namespace is managed) while it already holds the value.
    const current = described.config?.workflowExecutionRetentionTtl?.seconds;
    if (current === undefined || current === null || Number(current) !== retentionDays * 86_400) {
      await connection.workflowService.updateNamespace({ namespace, config: { workflowExecutionRetentionTtl: retention } }).catch((err: unknown) => {
        throw refused(err, `setting its retention to ${retentionDays} days`, 'set the retention where the namespace is managed (Temporal Cloud: its UI or tcld), or TEMPORAL_RETENTION_DAYS to the retention it has');
      });
    }
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: retention }).catch((e: unknown) => {
      throw refused(e, 'creating it', 'create the namespace where namespaces are managed (Temporal Cloud: its UI or tcld), or name an existing one in TEMPORAL_NAMESPACE');
    });
  }

  // A namespace registered a moment ago is NOT_FOUND until the server's namespace cache refreshes.
  let existing;
  for (let attempt = 0; ; attempt++) {
    try {
      existing = await connection.operatorService.listSearchAttributes({ namespace });
      break;
    } catch (err) {
      if (!isNotFound(err) || attempt >= 60) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !(name in existing.customAttributes));
  if (missing.length > 0) {
    await connection.operatorService
      .addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, typeMap[type]])),
      })
      .catch((err: unknown) => {
        throw refused(err, `adding its search attributes ${missing.map(([name, type]) => `${name} (${type})`).join(', ')}`, 'add them where the namespace is managed (Temporal Cloud: its UI or tcld)');
      });
  }
}

/**
 * A change to the namespace the server refused (gRPC PERMISSION_DENIED): a managed namespace whose
 * settings are made elsewhere. The message says what was asked and where to make it; anything
 * else is passed on as it is.
 */
function refused(err: unknown, what: string, remedy: string): unknown {
  const code = typeof err === 'object' && err !== null ? (err as { code?: number }).code : undefined;
  // gRPC status 7 = PERMISSION_DENIED.
  if (code !== 7) return err;
  return new Error(`Temporal refused ${what} for this namespace (permission denied): ${remedy}`, { cause: err });
}

function isNotFound(err: unknown): boolean {
  // gRPC status 5 = NOT_FOUND.
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 5;
}
