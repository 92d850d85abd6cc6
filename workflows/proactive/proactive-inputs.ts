// The proactive capability's inputs and results live in its contract; named here too for the workflows.
export type {
  DigestWorkflowInput,
  DigestWorkflowResult,
  DismissInput,
  NudgeWorkflowInput,
  NudgeWorkflowResult,
  RescheduleInput,
  ReminderWorkflowInput,
  SnoozeInput,
} from '../../src/proactive/contract';
