import { dataBlock, dataBlockRule, jsonLine, type ContentTag } from '../text/prompt-data';
import type { MemoryCandidate } from '../types';
import type { Decision, DecideOptions, Neighbour } from './decide';
import type { LlmProposal } from '../ports/memory';

// The conflict judge's port names the model's answer, so its shape lives with the port.
export type { LlmProposal };

/**
 * The LLM conflict resolver's pure half (the rule-based resolver stays the default: it needs no
 * model and cannot be talked into anything). A model judges what rules judge poorly — "Globex
 * hired me last month" against "I work at Initech", which shares no word with it — but only inside rails
 * the rules keep: it is asked only when there is something to weigh, it sees neighbours under
 * labels (never ids), and its answer is checked against the neighbours that are active when the
 * decision is applied.
 */

/**
 * Whether a model is worth asking: rules stay final for low confidence, explicit forget requests,
 * a word-for-word restatement, and a candidate with no neighbour to conflict with.
 */
export function needsJudgement(candidate: MemoryCandidate, neighbours: readonly Neighbour[], options: Pick<DecideOptions, 'minConfidence'>): boolean {
  if (candidate.confidence < options.minConfidence || candidate.intent === 'forget') return false;
  const sameSpeaker = neighbours.filter((n) => (n.memory.source.role ?? 'user') === candidate.role);
  return sameSpeaker.length > 0 && !sameSpeaker.some((n) => n.sameNormalizedFact);
}

/** Labels the same-speaker neighbours the model may act on, in a stable order. */
export function labelNeighbours(candidate: MemoryCandidate, neighbours: readonly Neighbour[]): { label: string; neighbour: Neighbour }[] {
  return neighbours
    .filter((n) => (n.memory.source.role ?? 'user') === candidate.role)
    .map((neighbour, i) => ({ label: `n${i + 1}`, neighbour }));
}

export const RESOLVER_SYSTEM_PROMPT = `You keep a person's long-term memory consistent. A new statement arrives; similar memories already exist.
${dataBlockRule('MEMORIES', 'The statement and the memories')} The first line is the new statement ("new"), the others are the existing memories, each with its "label".
Choose ONE action:
- "reinforce": it says the same thing as one memory (targets: that one).
- "update": it restates one memory with more or corrected detail (targets: that one).
- "supersede": it makes one or more memories no longer true (moved, changed job, stopped, can now…) (targets: those).
- "create": it is new information that contradicts nothing.
- "ignore": it adds nothing worth keeping.
Judge only what the texts state about the person. A statement scoped to the current task never replaces a global preference.
Reply with ONE JSON object: {"action": "...", "targets": ["n1"], "reason": "short, in English"}. No prose.`;

/** The human turn: the candidate and the labelled neighbours, one JSON line each, in a data block tagged by `tagOf`. */
export function resolverPrompt(candidate: MemoryCandidate, labelled: readonly { label: string; neighbour: Neighbour }[], tagOf: ContentTag): string {
  const lines = [
    jsonLine({ new: true, type: candidate.type, scope: candidate.scope, text: candidate.text }),
    ...labelled.map(({ label, neighbour: n }) => jsonLine({ label, type: n.memory.type, scope: n.memory.scope, text: n.memory.text })),
  ];
  return dataBlock('MEMORIES', lines, tagOf);
}

/**
 * Turns a proposal into a decision against the neighbours active now, or explains why it cannot
 * be used (then the rules decide). Targets must be labelled neighbours that are still there; a
 * task-scoped statement cannot replace a global memory; reinforce/update name exactly one target.
 */
export function decisionFromProposal(
  candidate: MemoryCandidate,
  proposal: LlmProposal,
  labelled: readonly { label: string; neighbour: Neighbour }[],
  activeNow: ReadonlySet<string>,
  judge: string,
): { decision: Decision } | { rejected: string } {
  const byLabel = new Map(labelled.map((l) => [l.label, l.neighbour]));
  const targets = [...new Set(proposal.targets)].map((t) => ({ label: t, neighbour: byLabel.get(t) }));
  const unknown = targets.filter((t) => !t.neighbour).map((t) => t.label);
  if (unknown.length > 0) return { rejected: `named unknown memories ${unknown.join(', ')}` };
  const gone = targets.filter((t) => !activeNow.has(t.neighbour!.memory.id)).map((t) => t.label);
  if (gone.length > 0) return { rejected: `${gone.join(', ')} changed while the model was deciding` };
  const ids = targets.map((t) => t.neighbour!.memory.id);
  const reason = `${judge}: ${proposal.reason.slice(0, 300) || proposal.action}`;
  switch (proposal.action) {
    case 'create':
    case 'ignore':
      return { decision: { action: proposal.action, reason } };
    case 'reinforce':
    case 'update':
      if (ids.length !== 1) return { rejected: `${proposal.action} needs exactly one target, got ${ids.length}` };
      return { decision: { action: proposal.action, targetId: ids[0]!, reason } };
    case 'supersede': {
      if (ids.length === 0) return { rejected: 'supersede without a target' };
      const overridesGlobal = candidate.scope === 'task' && targets.some((t) => t.neighbour!.memory.scope === 'global');
      if (overridesGlobal) return { rejected: 'a task-scoped statement cannot replace a global memory' };
      return { decision: { action: 'supersede', targetIds: ids, reason } };
    }
  }
}
