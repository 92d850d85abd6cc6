import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { emotionScore } from '../../core/emotion';
import type { ConversationMessage, MemoryCandidate } from '../../core/types';
import type { ExtractionOutput, Extractor } from '../../services/extractor';
import { parseExtractionReply, type LlmMemory } from './extraction-schema';

const SYSTEM_PROMPT = `You extract long-term memories about the USER from a conversation with their assistant.
Rules:
- Only what was said explicitly. Never guess, infer or generalise.
- Write each memory in the language the user used (Chinese stays Chinese), as a short first-person clause close to their words.
- type: fact | preference | goal | pain_point | event | instruction | decision | assistant_contribution.
  assistant_contribution = a concrete recommendation, advice, explanation or commitment made BY THE ASSISTANT that the user asked for or took up (never the user's own preference). Chit-chat yields nothing.
- scope: "task" when the statement only applies to the current task ("这个需求用 Python"), else "global".
- intent: "update" when it changes or negates something said before ("我现在可以吃花生了", "I no longer…", "I moved to…"), "forget" for explicit forget requests; else "assert". subject: the words naming what changed or should be forgotten.
- confidence 0..1 (hedged statements < 0.7), importance 0..1 (health and urgent problems high).
- expiresAt (ISO 8601) only for short-lived states and events.
- messageIds: the ids of the messages the memory comes from.
Reply with ONE JSON object: {"memories": [{"text", "type", "confidence", "importance", "keywords", "entities": [{"name","kind"}], "relations": [{"source","relation","target"}], "scope", "expiresAt", "emotionTags", "messageIds", "intent", "subject"}]}. No prose.`;

/**
 * Extraction through any LangChain chat model (OpenAI-compatible endpoints: OpenAI, DeepSeek,
 * Qwen, Ollama, vLLM…). A malformed reply is retried once with the validation errors; if it is
 * still unusable the safe fallback (the offline rules) decides, so nothing wrong is written. The
 * report of what went wrong travels with the result into the activity's output (workflow history).
 */
export class LlmExtractor implements Extractor {
  readonly name: string;

  constructor(
    private readonly model: BaseChatModel,
    private readonly fallback: Extractor,
    modelName: string,
    private readonly maxAttempts = 2,
  ) {
    this.name = `llm:${modelName}`;
  }

  async extract(input: { messages: ConversationMessage[]; timezone: string }): Promise<ExtractionOutput> {
    const transcript = input.messages.map((m) => `[${m.id}] (${m.at.toISOString()}) ${m.role}: ${m.content}`).join('\n');
    const conversation: BaseMessage[] = [new SystemMessage(SYSTEM_PROMPT), new HumanMessage(`Timezone: ${input.timezone}\nConversation:\n${transcript}`)];
    const problems: string[] = [];
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      // Transport failures propagate: the activity's retry policy (with backoff) handles them,
      // falling back to rules would silently lower quality during a short outage.
      const answer = await this.model.invoke(conversation);
      const reply = answer.text;
      try {
        const parsed = parseExtractionReply(reply);
        problems.push(...parsed.problems.map((p) => `attempt ${attempt}: ${p}`));
        if (parsed.problems.length === 0 || parsed.memories.length > 0) {
          return { candidates: this.toCandidates(parsed.memories, input.messages), report: { extractor: this.name, attempts: attempt, problems, fellBack: false } };
        }
      } catch (err) {
        problems.push(`attempt ${attempt}: ${err instanceof Error ? err.message : String(err)}`);
      }
      conversation.push(new HumanMessage(`Your reply was not valid: ${problems.at(-1)}. Reply again with only the JSON object.`));
    }
    const fallback = await this.fallback.extract(input);
    return { candidates: fallback.candidates, report: { extractor: this.name, attempts: this.maxAttempts, problems, fellBack: true } };
  }

  private toCandidates(memories: LlmMemory[], messages: ConversationMessage[]): MemoryCandidate[] {
    const byId = new Map(messages.map((m) => [m.id, m]));
    return memories.flatMap((m) => {
      // A memory must point at real messages of this conversation; otherwise it has no provenance.
      const sources = m.messageIds.map((id) => byId.get(id)).filter((x): x is ConversationMessage => x !== undefined);
      if (sources.length === 0) return [];
      const role = m.type === 'assistant_contribution' ? 'assistant' : 'user';
      const emotion = emotionScore(sources.map((s) => s.content).join(' '));
      return [
        {
          text: m.text,
          type: m.type,
          confidence: m.confidence,
          importance: Math.max(m.importance, emotion.score * 0.9),
          keywords: m.keywords,
          entities: m.entities.filter((e) => e.name),
          relations: m.relations.filter((r) => r.source && r.target),
          scope: m.scope,
          ...(m.expiresAt ? { expiresAt: new Date(m.expiresAt) } : {}),
          emotionTags: [...new Set([...m.emotionTags, ...emotion.tags])],
          messageIds: sources.map((s) => s.id),
          role,
          saidAt: sources[sources.length - 1]!.at,
          intent: m.intent,
          ...(m.subject ? { subject: m.subject } : {}),
        } satisfies MemoryCandidate,
      ];
    });
  }
}
