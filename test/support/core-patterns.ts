/**
 * Every regular expression of src/core, collected without anyone listing them, so a rule added
 * tomorrow is checked by test/regex-safety.test.ts as well:
 * - regex literals, read from the sources with the TypeScript parser;
 * - patterns built at run time (`new RegExp(template)`, the rule tables), caught by wrapping the
 *   global RegExp constructor while the modules load and while their entry points run once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface FoundPattern {
  source: string;
  flags: string;
  /** Where it was found: "src/core/x.ts:12" for a literal, "src/core/x.ts (runtime)" for a built one. */
  where: string;
}

const ROOT = join(import.meta.dirname, '..', '..');
export const CORE_DIR = join(ROOT, 'src', 'core');

export function coreFiles(dir = CORE_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return coreFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The regex literals of one source file. */
export function literalPatterns(file: string): FoundPattern[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: FoundPattern[] = [];
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(source);
      const end = literal.lastIndexOf('/');
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      out.push({ source: literal.slice(1, end), flags: literal.slice(end + 1), where: `${relative(ROOT, file)}:${line}` });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * Runs `load` with the RegExp constructor wrapped and returns every pattern constructed by code
 * of src/core (libraries such as chrono build their own and are not ours to rewrite).
 */
export async function capturePatterns(load: () => Promise<void>): Promise<FoundPattern[]> {
  const original = globalThis.RegExp;
  const found: FoundPattern[] = [];
  const record = (args: unknown[]): void => {
    const [pattern, flags] = args;
    // The constructing frame is the first one outside this file: a library (chrono builds its
    // parsers lazily, called from src/core) constructs its own, which are not ours to rewrite.
    const stack = new Error().stack ?? '';
    const frame = stack.split('\n').slice(1).find((l) => !l.includes('core-patterns.ts'));
    if (!frame?.includes('/src/core/')) return;
    const file = /\/(src\/core\/[^:)]+)/u.exec(frame)?.[1] ?? 'src/core';
    const re = pattern instanceof original ? pattern : undefined;
    found.push({ source: re ? re.source : String(pattern), flags: typeof flags === 'string' ? flags : (re?.flags ?? ''), where: `${file} (runtime)` });
  };
  globalThis.RegExp = new Proxy(original, {
    construct(target, args, newTarget) {
      record(args);
      return Reflect.construct(target, args, newTarget === globalThis.RegExp ? target : newTarget) as object;
    },
    apply(target, thisArg, args) {
      record(args);
      return Reflect.apply(target, thisArg, args) as unknown;
    },
  });
  try {
    await load();
  } finally {
    globalThis.RegExp = original;
  }
  return found;
}

/** Dynamic imports of every module of src/core (fresh only if the caller has not imported them yet). */
export async function importCore(): Promise<void> {
  for (const file of coreFiles()) await import(file);
}

export function dedupe(patterns: readonly FoundPattern[]): FoundPattern[] {
  const seen = new Map<string, FoundPattern>();
  for (const p of patterns) {
    const key = `${p.flags}/${p.source}`;
    if (!seen.has(key)) seen.set(key, p);
  }
  return [...seen.values()];
}
