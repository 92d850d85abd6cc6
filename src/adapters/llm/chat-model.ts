import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatOpenAI } from '@langchain/openai';
import type { AppConfig } from '../../config';

/**
 * The chat model from config: any OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, Ollama,
 * vLLM…) through `ChatOpenAI`, or Anthropic through its own LangChain integration. Callers set
 * the time budget and retries for their path (extraction waits longer than a chat message can).
 */
export function createChatModel(llm: Exclude<AppConfig['llm'], { provider: 'none' }>, opts: { timeoutMs?: number; maxRetries?: number } = {}): BaseChatModel {
  const timeout = opts.timeoutMs ?? 60_000;
  const maxRetries = opts.maxRetries ?? 1;
  if (llm.provider === 'anthropic') {
    return new ChatAnthropic({ model: llm.model, apiKey: llm.apiKey, temperature: 0, maxRetries, clientOptions: { timeout } });
  }
  return new ChatOpenAI({ model: llm.model, apiKey: llm.apiKey, temperature: 0, maxRetries, timeout, configuration: { baseURL: llm.baseUrl } });
}
