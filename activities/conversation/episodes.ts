import { Context } from '@temporalio/activity';
import type { ServiceDeps } from '../../src/shared/deps';
import { writeEpisodes, type WriteEpisodesResult } from '../../src/conversation/episodes';
import { withTypedFailures } from '../shared/failures';

/** Input of the writeEpisodes activity. */
export interface WriteEpisodesInput {
  userId: string;
  conversationId: string;
}

/**
 * Episode activities: what a conversation was about, for questions about the past that no extracted
 * memory answers. `writeEpisodes` runs in ExtractMemories after the decisions, so
 * a forget request of the same conversation is already known and left out of the summaries.
 * The episode rows record the workflow and run that wrote them (the audit), and the activity's
 * result in Temporal UI lists ids, days and counts only — no user text.
 */
export function createEpisodeActivities(deps: ServiceDeps) {
  return withTypedFailures({
    async writeEpisodes(input: WriteEpisodesInput): Promise<WriteEpisodesResult> {
      const execution = Context.current().info.workflowExecution;
      return writeEpisodes(deps, { ...input, workflowId: execution?.workflowId, runId: execution?.runId });
    },
  });
}
