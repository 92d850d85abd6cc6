// The capabilities' inputs and results live in their contracts; named here too for the other workflows.
export type { StoreMemoryInput } from '../../src/memory/contract';
export type { ConversationInput, ConversationOutcome, ExtractionResult, ExtractMemoriesInput, MessagesAddedInput } from '../../src/conversation/contract';
