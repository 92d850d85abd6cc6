import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { createChatModel } from '../adapters/llm/chat-model';
import type { AppConfig } from '../config';
import type { DigestSections } from '../core/proactive/digest-content';

export interface WrittenDigest {
  text: string;
  generatedBy: 'llm' | 'template';
  /** Why the template was used although a model is configured. */
  fallbackReason?: string;
}

const PROMPT = `You write a user's end-of-day digest for their personal assistant, like a thoughtful friend would.
Use ONLY the facts in the JSON you are given; invent nothing. Write in the language given as "lang" (zh = Simplified Chinese).
Keep four short sections with these headings: 今日对话 / Conversations, 重要记忆 / Important memories, 待解答 / Open questions, 建议 / Suggestions.
At most 180 words (or 300 Chinese characters). Plain text, no Markdown tables.`;

/**
 * The digest's wording: the model's when one is configured and answers, otherwise the template.
 * A failing model falls back to the template (the 22:00 digest must arrive); the reason travels
 * in the activity result, visible in the workflow history.
 */
export async function writeDigest(llm: AppConfig['llm'], sections: DigestSections, template: string): Promise<WrittenDigest> {
  if (llm.provider === 'none') return { text: template, generatedBy: 'template' };
  try {
    const model = createChatModel(llm);
    const answer = await model.invoke([new SystemMessage(PROMPT), new HumanMessage(JSON.stringify(sections))]);
    const text = answer.text.trim();
    if (text.length < 20) return { text: template, generatedBy: 'template', fallbackReason: 'model reply too short' };
    return { text, generatedBy: 'llm' };
  } catch (err) {
    return { text: template, generatedBy: 'template', fallbackReason: `model failed: ${(err as Error).message}`.slice(0, 300) };
  }
}
