import type { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { ChatOpenAI } from '@langchain/openai';
import type { AppConfig } from '../../config';

type LlmConfig = Exclude<AppConfig['llm'], { provider: 'none' }>;

/**
 * The provider integrations are imported on first use, not with this module: together they took
 * about 0.7 s of every worker start, also with LLM_PROVIDER=none (docs/benchmarks.md, "Worker
 * restart"). `loadChatModel` is awaited once where a process learns its config (src/runtime.ts);
 * from then on `createChatModel` stays synchronous for the adapters built around it.
 */
const loaded: { anthropic?: typeof ChatAnthropic; openai?: typeof ChatOpenAI } = {};

/** Imports the integration of `llm.provider` (once per process). */
export async function loadChatModel(llm: LlmConfig): Promise<void> {
  if (llm.provider === 'anthropic') loaded.anthropic ??= (await import('@langchain/anthropic')).ChatAnthropic;
  else loaded.openai ??= (await import('@langchain/openai')).ChatOpenAI;
}

/**
 * The chat model from config: any OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, Ollama,
 * vLLM…) through `ChatOpenAI`, or Anthropic through its own LangChain integration. Callers set
 * the time budget and retries for their path (extraction waits longer than a chat message can).
 * Throws if {@link loadChatModel} has not run for this provider: a silent fallback would hide a
 * wiring mistake behind the offline path.
 */
export function createChatModel(llm: LlmConfig, opts: { timeoutMs?: number; maxRetries?: number } = {}): BaseChatModel {
  const timeout = opts.timeoutMs ?? 60_000;
  const maxRetries = opts.maxRetries ?? 1;
  if (llm.provider === 'anthropic') {
    if (!loaded.anthropic) throw new Error('createChatModel: await loadChatModel(config.llm) first (the Anthropic integration is imported lazily)');
    return new loaded.anthropic({ model: llm.model, apiKey: llm.apiKey, temperature: 0, maxRetries, clientOptions: { timeout } });
  }
  if (!loaded.openai) throw new Error('createChatModel: await loadChatModel(config.llm) first (the OpenAI integration is imported lazily)');
  return new loaded.openai({ model: llm.model, apiKey: llm.apiKey, temperature: 0, maxRetries, timeout, configuration: { baseURL: llm.baseUrl } });
}

/** {@link loadChatModel} then {@link createChatModel}, for a caller that is async anyway. */
export async function openChatModel(llm: LlmConfig, opts: { timeoutMs?: number; maxRetries?: number } = {}): Promise<BaseChatModel> {
  await loadChatModel(llm);
  return createChatModel(llm, opts);
}
