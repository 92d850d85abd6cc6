import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as memory from '../src/memory/contract';
import * as privacy from '../src/privacy/contract';
import * as proactive from '../src/proactive/contract';
import * as bundle from '../workflows';

/** Module specifiers of one file, read with the compiler (type-only imports and `import('…')` types included). */
function specifiers(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) out.push(n.moduleSpecifier.text);
    if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) out.push(n.argument.literal.text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const registered = (name: string): { name: string } => (bundle as Record<string, unknown>)[name] as { name: string };

describe('the memory, proactive and privacy contracts', () => {
  it('name workflows that the bundle exports under those names (Temporal registers them by function name)', () => {
    const names = [...Object.values(memory.MemoryWorkflows), ...Object.values(proactive.ProactiveWorkflows), ...Object.values(privacy.PrivacyWorkflows)];
    expect(names).toEqual(['storeMemoryWorkflow', 'recallReinforcementWorkflow', 'MemoryDecision', 'reminderWorkflow', 'digestWorkflow', 'nudgeWorkflow', 'recallNudgeWorkflow', 'PurgeUser']);
    for (const name of names) {
      expect(typeof registered(name), name).toBe('function');
      expect(registered(name).name).toBe(name);
    }
  });

  it('are where the bundle takes its signals, update, query and ids from, with the names of the recorded histories', () => {
    expect(bundle.memoriesRecalledSignal).toBe(memory.memoriesRecalledSignal);
    expect(memory.memoriesRecalledSignal.name).toBe('memoriesRecalledSignal');
    expect(bundle.reinforcementWorkflowId('u1')).toBe('reinforce:u1');
    expect(bundle.snoozeSignal).toBe(proactive.snoozeSignal);
    expect(bundle.dismissSignal).toBe(proactive.dismissSignal);
    expect(bundle.rescheduleUpdate).toBe(proactive.rescheduleUpdate);
    expect(bundle.stateQuery).toBe(proactive.stateQuery);
    expect([proactive.snoozeSignal.name, proactive.dismissSignal.name, proactive.rescheduleUpdate.name, proactive.stateQuery.name]).toEqual(['snoozeSignal', 'dismissSignal', 'rescheduleUpdate', 'stateQuery']);
    expect(bundle.reminderWorkflowId('u1', 'r1')).toBe('reminder:u1:r1');
    expect(proactive.reminderWorkflowId('u1', 'r1')).toBe('reminder:u1:r1');
  });

  it('are all that starters and activities take from Temporal code: nothing of workflows/ but its pure shared modules', () => {
    const pureShared = ['workflows/shared/search-attributes', 'workflows/shared/payload-subject'];
    const files = [
      ...['src/memory', 'src/proactive', 'src/privacy', 'src/lifecycle', 'src/conversation', 'src/persona', 'src/api', 'src/api/routes'].flatMap((d) =>
        readdirSync(d)
          .filter((f) => f.endsWith('.ts'))
          .map((f) => join(d, f)),
      ),
      ...readdirSync('activities', { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join('activities', f)),
    ];
    for (const file of files) {
      const wf = specifiers(file).filter((s) => s.includes('workflows') && !pureShared.some((p) => s.endsWith(p)));
      expect(wf, file).toEqual([]);
    }
  });
});
