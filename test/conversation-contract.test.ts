import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as contract from '../src/conversation/contract';
import * as bundle from '../workflows';

/** Module specifiers of one file, read with the compiler (type-only imports included). */
function specifiers(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  return sf.statements.flatMap((s) => ((ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) ? [s.moduleSpecifier.text] : []));
}

describe('the conversation capability contract', () => {
  it('names workflows that the bundle exports under those names (Temporal registers them by function name)', () => {
    for (const name of Object.values(contract.ConversationWorkflows)) {
      expect(typeof (bundle as Record<string, unknown>)[name], name).toBe('function');
      expect(((bundle as Record<string, unknown>)[name] as { name: string }).name).toBe(name);
    }
  });

  it('is where the bundle takes its signals and ids from, with the names of the recorded histories', () => {
    expect(bundle.messagesAddedSignal).toBe(contract.messagesAddedSignal);
    expect(bundle.conversationEndedSignal).toBe(contract.conversationEndedSignal);
    expect([contract.messagesAddedSignal.name, contract.conversationEndedSignal.name]).toEqual(['messagesAddedSignal', 'conversationEndedSignal']);
    expect(bundle.extractWorkflowId('u1', 'c1')).toBe('extract:u1:c1');
    expect(contract.conversationWorkflowId('u1', 'c1')).toBe('conversation:u1:c1');
  });

  it('is all that the conversation use cases take from Temporal code: nothing of workflows/ but its search attributes', () => {
    const dir = 'src/conversation';
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const wf = specifiers(join(dir, file)).filter((s) => s.includes('workflows') && !s.endsWith('workflows/shared/search-attributes'));
      expect(wf, file).toEqual([]);
    }
    expect(specifiers('src/conversation/contract.ts').filter((s) => s.startsWith('.'))).toEqual(['../client/temporal-contract', '../core/dto']);
  });
});
