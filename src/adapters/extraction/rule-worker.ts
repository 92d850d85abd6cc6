/**
 * The body of a rule-pool worker thread (rule-pool.ts): one rule task per call. The task says
 * when it starts on its port, so its time limit counts its own run, never its wait in the queue.
 */
import type { MessagePort } from 'node:worker_threads';
import { runRuleTask, type RuleTask } from '../../shared/rule-work';

// The first use loads jieba's dictionary and compiles the patterns: done while the thread starts,
// so a message's or a batch's time limit never pays for it.
runRuleTask({ kind: 'message', messages: [{ id: 'warm-up', role: 'user', content: '我对花生过敏，明天下午三点提醒我。I like green tea.', at: new Date(0) }], index: 0, timezone: 'UTC', withStatements: true });
runRuleTask({ kind: 'message', messages: [{ id: 'warm-up', role: 'assistant', content: '好的，我推荐你试试燕麦奶。', at: new Date(0) }], index: 0, timezone: 'UTC', withStatements: true });
runRuleTask({ kind: 'index', texts: ['我对花生过敏。I like green tea.'] });

export default function ruleWorker({ task, started }: { task: RuleTask; started: MessagePort }) {
  started.postMessage('started');
  started.close();
  return runRuleTask(task);
}
