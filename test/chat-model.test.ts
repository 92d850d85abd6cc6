import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import { createChatModel } from '../src/adapters/llm/chat-model';
import { loadConfig } from '../src/config';

// Which LangChain integration each provider gets, with the caller's time budget. No model call:
// none is reachable offline.
describe('createChatModel', () => {
  it('uses ChatAnthropic for Anthropic and ChatOpenAI for any OpenAI-compatible endpoint', () => {
    const anthropic = loadConfig({ LLM_PROVIDER: 'anthropic', LLM_API_KEY: 'sk-ant-test', LLM_MODEL: 'claude-sonnet-4-5' }).llm;
    const claude = createChatModel(anthropic as Exclude<typeof anthropic, { provider: 'none' }>, { maxRetries: 0 });
    expect(claude).toBeInstanceOf(ChatAnthropic);
    expect((claude as ChatAnthropic).model).toBe('claude-sonnet-4-5');

    const compatible = loadConfig({ LLM_PROVIDER: 'openai-compatible', LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_MODEL: 'qwen2.5' }).llm;
    const qwen = createChatModel(compatible as Exclude<typeof compatible, { provider: 'none' }>, { timeoutMs: 2_000 });
    expect(qwen).toBeInstanceOf(ChatOpenAI);
    expect((qwen as ChatOpenAI).model).toBe('qwen2.5');
    expect((qwen as ChatOpenAI).timeout).toBe(2_000);
  });
});
