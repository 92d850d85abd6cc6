import type { IncomingMessage, IndexedMessage } from '../../src/core/ports/conversation';
import { runRuleTask } from '../../src/shared/rule-work';

/**
 * Messages with their conversation-search postings segmented on this thread, as the rule pool's
 * threads segment them: for tests and benches that write through the repository directly, where
 * no other user waits on the event loop.
 */
export function indexedOnThisThread<M extends IncomingMessage>(messages: readonly M[]): (M & IndexedMessage)[] {
  const postings = runRuleTask({ kind: 'index', texts: messages.map((m) => m.content) });
  return messages.map((m, i) => ({ ...m, postings: postings[i]! }));
}
