// The worker bundles this file: every workflow the task queue runs is exported here.
export { storeMemoryWorkflow } from './store-memory';
export { extractMemoriesWorkflow } from './extract-memories';
export { conversationWorkflow, messagesAddedSignal, conversationEndedSignal, extractWorkflowId, conversationWorkflowId } from './conversation';
export { recallReinforcementWorkflow, memoriesRecalledSignal, reinforcementWorkflowId } from './recall-reinforcement';
// Proactive memory (issue #7): reminders, daily digests, nudges.
export { reminderWorkflow, reminderWorkflowId, snoozeSignal, dismissSignal, rescheduleUpdate, stateQuery } from './reminder';
export { digestWorkflow } from './digest';
export { nudgeWorkflow } from './nudge';
// Memory lifecycle (issue #5): daily forgetting sweep, weekly reinforcement.
export { memorySweepWorkflow } from './memory-sweep';
export { weeklyReinforcementWorkflow } from './weekly-reinforcement';
// Privacy (issue #12): erasure of everything stored about one user.
export { PurgeUser } from './purge-user';
// Reliability (issue #14): reconcilers run by Schedules — idle unextracted conversations, the vector outbox.
export { extractionReconcilerWorkflow, vectorOutboxWorkflow } from './reconcilers';
// The Temporal contract for callers (issue #13, src/client/temporal-contract.ts): ExtractMemories.
export { ExtractMemories } from './caller-extraction';
// Every API decision in Temporal UI (issue #13): forget, restore, erase as short workflows.
export { MemoryDecision } from './decisions';
