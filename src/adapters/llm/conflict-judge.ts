import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { z } from 'zod';
import type { LlmProposal } from '../../core/decisions/llm-resolution';
import type { ConflictJudge } from '../../core/ports/memory';
import { extractJsonObject } from './extraction-schema';

const proposalSchema = z.object({
  action: z.enum(['create', 'reinforce', 'update', 'supersede', 'ignore']),
  targets: z.array(z.string()).default([]),
  reason: z.string().default(''),
});

/**
 * The LLM conflict resolver's model call through any LangChain chat model. One attempt: an
 * unusable answer costs nothing, the rules decide instead (and the audit says so); a transport
 * error propagates so the activity's retry policy handles an outage.
 */
export class LlmConflictJudge implements ConflictJudge {
  readonly name: string;

  constructor(
    private readonly model: BaseChatModel,
    modelName: string,
  ) {
    this.name = `llm:${modelName}`;
  }

  async propose(input: { system: string; prompt: string }): Promise<{ proposal: LlmProposal } | { unusable: string }> {
    const answer = await this.model.invoke([new SystemMessage(input.system), new HumanMessage(input.prompt)]);
    const reply = answer.text;
    let parsed;
    try {
      parsed = proposalSchema.safeParse(extractJsonObject(reply));
    } catch (err) {
      return { unusable: err instanceof Error ? err.message : String(err) };
    }
    if (!parsed.success) return { unusable: `reply is not {"action", "targets", "reason"}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}` };
    return { proposal: parsed.data };
  }
}
