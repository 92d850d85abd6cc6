import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { z } from 'zod';
import type { PersonaCondenser } from '../../core/persona/ports';
import { extractJsonObject } from './extraction-schema';

const replySchema = z.object({ lines: z.array(z.object({ text: z.string(), facts: z.array(z.coerce.number().int().positive()).min(1) })).min(1) });

/** The persona's optional model step through any LangChain chat model: one call, its reply checked by the core. */
export class LlmPersonaCondenser implements PersonaCondenser {
  readonly name: string;

  constructor(
    private readonly model: BaseChatModel,
    modelName: string,
  ) {
    this.name = `llm:${modelName}`;
  }

  async condense(input: { system: string; prompt: string; signal?: AbortSignal }): Promise<{ lines: { text: string; facts: number[] }[] } | { unusable: string }> {
    const answer = await this.model.invoke([new SystemMessage(input.system), new HumanMessage(input.prompt)], { signal: input.signal });
    let parsed;
    try {
      parsed = replySchema.safeParse(extractJsonObject(answer.text));
    } catch (err) {
      return { unusable: err instanceof Error ? err.message : String(err) };
    }
    if (!parsed.success) return { unusable: `reply is not {"lines": [{"text", "facts"}]}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}` };
    return { lines: parsed.data.lines };
  }
}
