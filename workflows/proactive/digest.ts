import { proxyActivities } from '@temporalio/workflow';
import type { createProactiveActivities } from '../../activities/proactive/proactive';
import type { DigestWorkflowInput, DigestWorkflowResult } from './proactive-inputs';

type Activities = ReturnType<typeof createProactiveActivities>;

const retry = { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 };
const acts = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry });
// Writing may call an LLM; the writer falls back to the template itself when the model fails.
const writer = proxyActivities<Activities>({ startToCloseTimeout: '3m', retry: { ...retry, maximumAttempts: 3 } });

/**
 * DigestWorkflow, started by the per-user Schedule `digest:{userId}` at the user's digest time
 * (or on demand): gather the day → write it (LLM or bilingual template) → store it and push it.
 * Three activities, so the history shows what was gathered, who wrote it, and whether it was sent.
 */
export async function digestWorkflow(input: DigestWorkflowInput): Promise<DigestWorkflowResult> {
  const at = new Date().toISOString();
  const { sections } = await acts.gatherDigest({ userId: input.userId, at });
  const written = await writer.writeDigest({ sections });
  const stored = await acts.storeDigest({ userId: input.userId, sections, text: written.text, generatedBy: written.generatedBy, notify: input.notify ?? true, at });
  return { userId: input.userId, date: sections.date, text: written.text, sections, generatedBy: written.generatedBy, notified: stored.notified };
}
