import type { MemoryClient, RecallRequest } from '../client/index';
import { contains, type Scenario } from './scenarios';

export type RouteMode = 'fused' | 'ann' | 'bm25';
const ROUTES: Record<RouteMode, RecallRequest['routes']> = { fused: undefined, ann: ['ann'], bm25: ['bm25'] };

export interface CheckOutcome {
  query: string;
  passed: boolean;
  problems: string[];
}

export interface ScenarioOutcome {
  id: string;
  tags: string[];
  mode: RouteMode;
  passed: boolean;
  checks: CheckOutcome[];
}

/**
 * Replays one scenario's conversations through the public API (messages at their own time, then
 * end?wait=true) under user ids prefixed with `runId`, so runs never see each other's data.
 */
export async function ingestScenario(client: MemoryClient, scenario: Scenario, runId: string): Promise<void> {
  for (const conv of scenario.conversations) {
    const userId = `${runId}-${conv.user}`;
    const conversationId = `${scenario.id}-${conv.id}`;
    const start = new Date(conv.at).getTime();
    await client.addMessages(
      userId,
      conversationId,
      conv.messages.map((m, i) => ({ id: m.id, role: m.role, content: m.content, at: m.at ?? new Date(start + i * 30_000).toISOString() })),
    );
    await client.endConversation(userId, conversationId, { wait: true });
  }
}

/** Runs a scenario's checks against recall in one route mode. */
export async function checkScenario(client: MemoryClient, scenario: Scenario, runId: string, mode: RouteMode): Promise<ScenarioOutcome> {
  const checks: CheckOutcome[] = [];
  for (const c of scenario.checks) {
    const userId = `${runId}-${c.user}`;
    const result = await client.recall(userId, { query: c.query, now: c.at, tokenBudget: c.tokenBudget, routes: ROUTES[mode] });
    const context = `${result.context.system}\n${result.context.userPrefix}`;
    const problems: string[] = [];
    for (const group of c.expect) if (!group.some((s) => contains(context, s))) problems.push(`missing one of ${JSON.stringify(group)}`);
    for (const s of c.forbid) if (contains(context, s)) problems.push(`forbidden "${s}" injected`);
    if (c.expectMemories !== undefined && c.expect[0]) {
      const { memories } = await client.listMemories(userId, { status: 'active', limit: 200 });
      const n = memories.filter((m) => c.expect[0]!.some((s) => contains(m.text, s))).length;
      if (n !== c.expectMemories) problems.push(`expected ${c.expectMemories} active memories matching ${JSON.stringify(c.expect[0])}, found ${n}`);
    }
    if (result.error) problems.push(`recall error ${result.error.code}: ${result.error.message}`);
    if (problems.length > 0 && process.env.EVAL_VERBOSE) problems.push(`context was: ${JSON.stringify(context)}; memories: ${JSON.stringify(result.memories.map((m) => [m.type, m.score.toFixed(4), m.routes.join('+'), m.text]))}`);
    checks.push({ query: c.query, passed: problems.length === 0, problems });
  }
  return { id: scenario.id, tags: scenario.tags, mode, passed: checks.every((c) => c.passed), checks };
}

export interface EvalReport {
  total: number;
  passed: number;
  byTag: Record<string, { total: number; passed: number }>;
  failures: ScenarioOutcome[];
}

export function summarize(outcomes: ScenarioOutcome[]): EvalReport {
  const byTag: EvalReport['byTag'] = {};
  for (const o of outcomes) {
    for (const tag of o.tags) {
      byTag[tag] ??= { total: 0, passed: 0 };
      byTag[tag].total++;
      if (o.passed) byTag[tag].passed++;
    }
  }
  return { total: outcomes.length, passed: outcomes.filter((o) => o.passed).length, byTag, failures: outcomes.filter((o) => !o.passed) };
}

export function formatReport(title: string, r: EvalReport): string {
  const pct = (p: number, t: number) => (t === 0 ? '—' : `${((100 * p) / t).toFixed(1)}%`);
  const lines = [`${title}: ${r.passed}/${r.total} passed (${pct(r.passed, r.total)})`];
  for (const [tag, s] of Object.entries(r.byTag).sort()) lines.push(`  ${tag.padEnd(14)} ${String(s.passed).padStart(3)}/${String(s.total).padEnd(3)} ${pct(s.passed, s.total)}`);
  for (const f of r.failures) for (const c of f.checks.filter((x) => !x.passed)) lines.push(`  ✗ ${f.id} [${f.mode}] "${c.query}": ${c.problems.join('; ')}`);
  return lines.join('\n');
}
