import { ChatOpenAI } from '@langchain/openai';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { AppConfig } from '../../config';

/**
 * The chat model for extraction, from config. Any OpenAI-compatible endpoint works (OpenAI,
 * DeepSeek, Qwen, Ollama, vLLM…); Anthropic is reached through its OpenAI-compatible endpoint,
 * so one LangChain integration covers every provider.
 */
export function createChatModel(llm: Exclude<AppConfig['llm'], { provider: 'none' }>, opts: { timeoutMs?: number; maxRetries?: number } = {}): BaseChatModel {
  const baseURL = llm.provider === 'anthropic' ? 'https://api.anthropic.com/v1/' : llm.baseUrl;
  return new ChatOpenAI({ model: llm.model, apiKey: llm.apiKey, temperature: 0, maxRetries: opts.maxRetries ?? 1, timeout: opts.timeoutMs ?? 60_000, configuration: { baseURL } });
}
