/**
 * Who and what an audited memory change comes from. Its own module because both the write path
 * (memory-writer.ts) and the lifecycle changes (memory-lifecycle.ts) record it, and the writer
 * calls into the lifecycle: holding it in the writer closed an import circle.
 */
export interface AuditContext {
  workflowId?: string;
  runId?: string;
  conversationId?: string;
  actor: string;
}
