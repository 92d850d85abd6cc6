import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import { createChatModel, loadChatModel, openChatModel } from '../src/adapters/llm/chat-model';
import { loadConfig } from '../src/config';

type Llm = Exclude<ReturnType<typeof loadConfig>['llm'], { provider: 'none' }>;
const anthropic = loadConfig({ LLM_PROVIDER: 'anthropic', LLM_API_KEY: 'sk-ant-test', LLM_MODEL: 'claude-sonnet-4-5' }).llm as Llm;
const compatible = loadConfig({ LLM_PROVIDER: 'openai-compatible', LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_MODEL: 'qwen2.5' }).llm as Llm;

// Which LangChain integration each provider gets, with the caller's time budget. No model call:
// none is reachable offline. The integrations are imported lazily (a start with LLM_PROVIDER=none
// does not pay for them), so the order matters: the first case runs before anything loaded them.
describe('createChatModel', () => {
  it('refuses to build a model whose integration was not loaded yet, naming the fix', () => {
    expect(() => createChatModel(compatible)).toThrow(/loadChatModel/);
    expect(() => createChatModel(anthropic)).toThrow(/loadChatModel/);
  });

  it('uses ChatAnthropic for Anthropic and ChatOpenAI for any OpenAI-compatible endpoint, once loaded', async () => {
    await loadChatModel(anthropic);
    const claude = createChatModel(anthropic, { maxRetries: 0 });
    // The lazily imported class is the package's own: instanceof holds against a static import.
    expect(claude).toBeInstanceOf(ChatAnthropic);
    expect((claude as ChatAnthropic).model).toBe('claude-sonnet-4-5');
    // Loading one provider does not load the other.
    expect(() => createChatModel(compatible)).toThrow(/loadChatModel/);

    const qwen = await openChatModel(compatible, { timeoutMs: 2_000 });
    expect(qwen).toBeInstanceOf(ChatOpenAI);
    expect((qwen as ChatOpenAI).model).toBe('qwen2.5');
    expect((qwen as ChatOpenAI).timeout).toBe(2_000);
    expect(createChatModel(compatible)).toBeInstanceOf(ChatOpenAI);
  });
});
