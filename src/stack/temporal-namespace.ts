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
    await connection.workflowService.describeNamespace({ namespace });
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: retention },
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: retention,
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
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, typeMap[type]])),
    });
  }
}

function isNotFound(err: unknown): boolean {
  // gRPC status 5 = NOT_FOUND.
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 5;
}
