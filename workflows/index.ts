// The worker bundles this file: every workflow the task queue runs is exported here.
export { storeMemoryWorkflow } from './store-memory';
export { extractMemoriesWorkflow } from './extract-memories';
export { conversationWorkflow, messagesAddedSignal, conversationEndedSignal, extractWorkflowId, conversationWorkflowId } from './conversation';
export { recallReinforcementWorkflow, memoriesRecalledSignal, reinforcementWorkflowId } from './recall-reinforcement';
// Proactive memory, where the service speaks first: reminders, daily digests, nudges.
export { reminderWorkflow, reminderWorkflowId, snoozeSignal, dismissSignal, rescheduleUpdate, stateQuery } from './reminder';
export { digestWorkflow } from './digest';
export { nudgeWorkflow } from './nudge';
// Memory lifecycle, so memories fade and the important ones stay: daily sweep, weekly reinforcement.
export { memorySweepWorkflow } from './memory-sweep';
export { weeklyReinforcementWorkflow } from './weekly-reinforcement';
// Privacy: erasure of everything stored about one user, on their request.
export { PurgeUser } from './purge-user';
// Reliability (issue #14): reconcilers run by Schedules — idle unextracted conversations, the vector outbox.
export { exchangeIndexWorkflow, extractionReconcilerWorkflow, vectorOutboxWorkflow } from './reconcilers';
// The Temporal contract for callers (issue #13, src/client/temporal-contract.ts): ExtractMemories.
export { ExtractMemories } from './caller-extraction';
// Every API decision in Temporal UI (issue #13): forget, restore, erase as short workflows.
export { MemoryDecision } from './decisions';
