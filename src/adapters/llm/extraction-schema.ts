import { z } from 'zod';
import { MEMORY_TYPES, type MemoryType } from '../../core/types';

/**
 * What we ask the model for, validated tolerantly: small models drop fields, send numbers as
 * strings or invent types, so defaults fill the gaps, numbers are coerced and unknown types drop
 * the item (never guessed into something else).
 */
const clamp01 = z.coerce.number().transform((x) => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0));
const stringList = z.preprocess((v) => (v == null ? [] : Array.isArray(v) ? v : [v]), z.array(z.coerce.string())).default([]);

export const llmMemorySchema = z.object({
  text: z.string().trim().min(1),
  type: z.string().transform((t, ctx): MemoryType => {
    const normalized = t.trim().toLowerCase().replace(/[\s-]+/g, '_');
    if ((MEMORY_TYPES as string[]).includes(normalized)) return normalized as MemoryType;
    ctx.addIssue({ code: 'custom', message: `unknown type "${t}"` });
    return z.NEVER;
  }),
  confidence: clamp01.default(0.8),
  importance: clamp01.default(0.5),
  keywords: stringList,
  entities: z.preprocess((v) => (Array.isArray(v) ? v : []), z.array(z.object({ name: z.coerce.string(), kind: z.coerce.string().default('thing') }).catch({ name: '', kind: '' }))).default([]),
  relations: z.preprocess((v) => (Array.isArray(v) ? v : []), z.array(z.object({ source: z.coerce.string(), relation: z.coerce.string(), target: z.coerce.string() }).catch({ source: '', relation: '', target: '' }))).default([]),
  scope: z.enum(['global', 'task']).catch('global'),
  expiresAt: z.string().datetime({ offset: true }).optional().catch(undefined),
  emotionTags: stringList,
  messageIds: stringList,
  intent: z.enum(['assert', 'update', 'forget']).catch('assert'),
  subject: z.string().optional().catch(undefined),
});

export const llmExtractionSchema = z.object({ memories: z.array(z.unknown()).default([]) });

export type LlmMemory = z.infer<typeof llmMemorySchema>;

/** Pulls the first JSON object out of a reply that may wrap it in prose or a code fence. */
export function extractJsonObject(reply: string): unknown {
  const fenced = /```(?:json)?([\s\S]*?)```/i.exec(reply);
  const body = fenced ? fenced[1]! : reply;
  const start = body.indexOf('{');
  const end = body.lastIndexOf('}');
  if (start < 0 || end <= start) throw new Error('no JSON object in the reply');
  return JSON.parse(body.slice(start, end + 1));
}

/**
 * Validates a reply: returns the valid memories and a description of every item that was
 * dropped, so the caller can retry with the errors or record them.
 */
export function parseExtractionReply(reply: string): { memories: LlmMemory[]; problems: string[] } {
  const root = llmExtractionSchema.safeParse(extractJsonObject(reply));
  if (!root.success) throw new Error(`reply does not match {"memories": [...]}: ${root.error.issues.map((i) => i.message).join('; ')}`);
  const memories: LlmMemory[] = [];
  const problems: string[] = [];
  root.data.memories.forEach((item, i) => {
    const parsed = llmMemorySchema.safeParse(item);
    if (parsed.success) memories.push(parsed.data);
    else problems.push(`memories[${i}]: ${parsed.error.issues.map((x) => `${x.path.join('.')} ${x.message}`).join(', ')}`);
  });
  return { memories, problems };
}
