// The worker bundles this file: every workflow the task queue runs is exported here.
export { storeMemoryWorkflow } from './store-memory';
export { extractMemoriesWorkflow } from './extract-memories';
export { conversationWorkflow, messagesAddedSignal, conversationEndedSignal, extractWorkflowId } from './conversation';
export { recallReinforcementWorkflow, memoriesRecalledSignal, reinforcementWorkflowId } from './recall-reinforcement';
