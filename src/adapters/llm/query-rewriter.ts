import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import { REWRITE_SYSTEM_PROMPT, rewritePrompt, rewrittenQueries } from '../../core/recall/query-rewrite';
import type { QueryRewriter } from '../../core/ports/recall';
import { contentTag } from '../../shared/ids';
import { extractJsonObject } from './extraction-schema';

const replySchema = z.object({ queries: z.array(z.string()).min(1) });

/**
 * Query rewriting through any LangChain chat model. One attempt: it runs while the user waits,
 * so a malformed reply or a transport error is reported (the recall keeps the original query's
 * results) rather than retried.
 */
export class LlmQueryRewriter implements QueryRewriter {
  constructor(private readonly model: BaseChatModel) {}

  async rewrite(input: { query: string; recentMessages: readonly string[]; signal?: AbortSignal }): Promise<string[]> {
    let reply: string;
    try {
      const answer = await this.model.invoke([new SystemMessage(REWRITE_SYSTEM_PROMPT), new HumanMessage(rewritePrompt(input.query, input.recentMessages, contentTag))], { signal: input.signal });
      reply = answer.text;
    } catch (err) {
      throw new MemoryServiceError(ErrorCode.llmUnavailable, `query rewrite: the model call failed: ${err instanceof Error ? err.message : String(err)}`, {}, { cause: err });
    }
    let parsed;
    try {
      parsed = replySchema.safeParse(extractJsonObject(reply));
    } catch (err) {
      throw new MemoryServiceError(ErrorCode.llmUnavailable, `query rewrite: unreadable reply: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!parsed.success) throw new MemoryServiceError(ErrorCode.llmUnavailable, `query rewrite: reply is not {"queries": [...]}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    return rewrittenQueries(input.query, parsed.data.queries);
  }
}
