/**
 * A memory written without a type (MCP `memory_add` with text alone, as other services' memory
 * tools take it): agents should not have to classify, so the configured extractor reads the text
 * as one message of the user and its candidate gives the type, scope, importance, keywords and
 * expiry. The extractor's own provenance screen applies; what it refuses is refused whole, and an
 * inferred instruction goes through the direct-write screen like a typed one (then the pending
 * rule of agent writes holds it until the user confirms).
 */
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { screenDirectWrite } from '../core/memory/direct-write';
import type { MemoryCandidate, MemoryType } from '../core/types';
import { segmenter as jiebaSegmenter } from '../shared/segmentation';
import type { ServiceDeps } from '../shared/deps';
import { userTimeZone } from '../account/settings';
import type { StoreMemoryInput } from './contract';

/** The id of the one message the text is read as; never stored (a direct write has no message). */
const INFERRED_MESSAGE_ID = 'memory-add';

/** A store request whose type is known. */
export type TypedStoreMemoryInput = StoreMemoryInput & { type: MemoryType };

/** The candidate that says most: the most confident, the earliest on a tie. */
function strongest(candidates: readonly MemoryCandidate[]): MemoryCandidate | undefined {
  return candidates.reduce<MemoryCandidate | undefined>((best, c) => (best && best.confidence >= c.confidence ? best : c), undefined);
}

/** The request as given when it has a type; otherwise with what the extractor infers from its text. */
export async function inferStoreRequest(deps: Pick<ServiceDeps, 'extractor' | 'settings' | 'provenanceScreen'>, store: StoreMemoryInput): Promise<TypedStoreMemoryInput> {
  if (store.type) return { ...store, type: store.type };
  const timezone = await userTimeZone(deps, store.userId);
  const { candidates, report } = await deps.extractor.extract({
    messages: [{ id: INFERRED_MESSAGE_ID, role: 'user', content: store.text, at: new Date(store.at) }],
    timezone,
  });
  const best = strongest(candidates.filter((c) => c.type !== 'assistant_contribution'));
  if (!best && report.rejected.length > 0) {
    const reason = report.rejected[0]!.reason;
    throw new MemoryServiceError(ErrorCode.provenanceRefused, `refused by the provenance screen extraction applies: ${reason}`, { reason, via: store.via ?? 'api' });
  }
  // Nothing the rules recognise, yet the writer asked for it to be kept: a plain fact, as written.
  const type: MemoryType = best?.type ?? 'fact';
  const scope = store.scope ?? best?.scope;
  if (type !== 'fact') {
    const refusal = screenDirectWrite({ text: store.text, type, scope }, { provenanceScreen: deps.provenanceScreen, segmenter: jiebaSegmenter }, timezone);
    if (refusal) throw new MemoryServiceError(ErrorCode.provenanceRefused, `refused by the provenance screen extraction applies: ${refusal.reason}`, { reason: refusal.reason, via: store.via ?? 'api', type });
  }
  return {
    ...store,
    type,
    ...(scope ? { scope } : {}),
    importance: store.importance ?? best?.importance,
    keywords: store.keywords ?? (best?.keywords.length ? best.keywords : undefined),
    ...(store.expiresAt ? {} : best?.expiresAt ? { expiresAt: best.expiresAt.toISOString() } : {}),
  };
}
