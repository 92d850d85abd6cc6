import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { FakeListChatModel } from '@langchain/core/utils/testing';

/**
 * LangChain's scripted chat model that also records every prompt it was sent, so tests can check
 * what a model would have read. Replies are given in order (objects are sent as JSON).
 */
export class ScriptedChatModel extends FakeListChatModel {
  readonly prompts: BaseMessage[][] = [];

  constructor(...replies: (string | object)[]) {
    super({ responses: replies.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))) });
  }

  override async _generate(messages: BaseMessage[], options?: this['ParsedCallOptions'], runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    this.prompts.push(messages);
    return super._generate(messages, options, runManager);
  }
}
