import { Context } from '@temporalio/activity';

/** Who wrote a memory event, as the running activity's workflow: the audit trail names the run that did it. */
export function auditOf(conversationId?: string) {
  const info = Context.current().info;
  return { workflowId: info.workflowExecution?.workflowId, runId: info.workflowExecution?.runId, conversationId, actor: `workflow:${info.workflowType}` };
}
