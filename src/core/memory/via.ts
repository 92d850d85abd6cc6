/**
 * How a memory arrived, and what that means for trust. Extraction reads the user's own words in a
 * conversation and screens them (src/core/extraction/provenance.ts); a direct write — a chat app
 * with the tenant key (`api`) or an agent's `memory_add` over MCP (`mcp`) — is text an LLM or an
 * app chose to store, which a web page or a tool result may have steered. Such writes are not the
 * user's words: they never get full confidence, and a standing instruction they write waits for the
 * user's confirmation before it is injected as one.
 */
import { MemoryVia, type MemoryType } from '../types';

export { MEMORY_VIAS, MemoryVia } from '../types';

/** Ways of writing a memory directly (not from a conversation's extraction). */
export type DirectVia = Exclude<MemoryVia, 'extraction'>;

/** The highest confidence a directly written memory gets: it is what a writer claims, not what the user said. */
export const DIRECT_WRITE_MAX_CONFIDENCE = 0.8;

export function isDirectVia(via: MemoryVia): via is DirectVia {
  return via !== MemoryVia.extraction;
}

/** The confidence a directly written memory is stored with: the writer's value (default the cap), never above the cap. */
export function directWriteConfidence(requested: number | undefined): number {
  return Math.min(requested ?? DIRECT_WRITE_MAX_CONFIDENCE, DIRECT_WRITE_MAX_CONFIDENCE);
}

/**
 * Whether a new memory waits for the user's confirmation: a standing instruction written directly
 * (any scope — a task instruction is still an instruction to the assistant). Other types are not
 * held: recall injects them only in the reference-data block, which says they are not
 * instructions, with the lower confidence of a direct write.
 */
export function pendingOnWrite(input: { via: MemoryVia; type: MemoryType }): boolean {
  return isDirectVia(input.via) && input.type === 'instruction';
}
