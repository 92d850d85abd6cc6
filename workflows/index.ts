// The worker bundles this file: every workflow the task queue runs is exported here.
export { storeMemoryWorkflow } from './memory/store-memory';
export { extractMemoriesWorkflow } from './conversation/extract-memories';
export { conversationWorkflow, messagesAddedSignal, conversationEndedSignal, extractWorkflowId, conversationWorkflowId } from './conversation/conversation';
export { recallReinforcementWorkflow, memoriesRecalledSignal, reinforcementWorkflowId } from './memory/recall-reinforcement';
// Proactive memory, where the service speaks first: reminders, daily digests, nudges.
export { reminderWorkflow, reminderWorkflowId, snoozeSignal, dismissSignal, rescheduleUpdate, stateQuery } from './proactive/reminder';
export { digestWorkflow } from './proactive/digest';
export { nudgeWorkflow } from './proactive/nudge';
export { recallNudgeWorkflow } from './proactive/recall-nudge';
// Memory lifecycle, so memories fade and the important ones stay: daily sweep, weekly reinforcement.
export { memorySweepWorkflow } from './lifecycle/memory-sweep';
export { weeklyReinforcementWorkflow } from './lifecycle/weekly-reinforcement';
// Privacy: erasure of everything stored about one user, on their request.
export { PurgeUser } from './privacy/purge-user';
// Reconcilers run by Schedules, so work stored while Temporal or Chroma was down still lands: idle unextracted conversations, open reminders whose workflow never started, the vector outbox, and the exchange indexer (new messages embedded for dense conversation search).
export { exchangeIndexWorkflow, extractionReconcilerWorkflow, vectorOutboxWorkflow } from './conversation/reconcilers';
export { reminderReconcilerWorkflow } from './proactive/reminder-reconciler';
// The Temporal contract for callers that live on the namespace (src/client/temporal-contract.ts): ExtractMemories.
export { ExtractMemories } from './conversation/caller-extraction';
// Every API decision as a short workflow (forget, restore, erase), so each one shows in Temporal UI with who asked.
export { MemoryDecision } from './memory/decisions';
// The persona (read path L3): a short profile of the user, rebuilt when their memories change.
export { RebuildPersona, memoriesChangedSignal, personaWorkflowId } from './persona/persona';
