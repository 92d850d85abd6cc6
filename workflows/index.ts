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
// Reconcilers run by Schedules, so work stored while Temporal or Chroma was down still lands: idle unextracted conversations, open reminders whose workflow never started, the vector outbox, and the exchange indexer (new messages embedded for dense conversation search).
export { exchangeIndexWorkflow, extractionReconcilerWorkflow, reminderReconcilerWorkflow, vectorOutboxWorkflow } from './reconcilers';
// The Temporal contract for callers that live on the namespace (src/client/temporal-contract.ts): ExtractMemories.
export { ExtractMemories } from './caller-extraction';
// Every API decision as a short workflow (forget, restore, erase), so each one shows in Temporal UI with who asked.
export { MemoryDecision } from './decisions';
// The persona (read path L3): a short profile of the user, rebuilt when their memories change.
export { RebuildPersona, memoriesChangedSignal, personaWorkflowId } from './persona';
