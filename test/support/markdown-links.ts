import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A link written in a Markdown file, with the line it is on. */
export interface MarkdownLink {
  file: string;
  line: number;
  target: string;
}

/** Markdown without fenced code blocks and inline code spans (their brackets are not links). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`+[^`]*`+/g, '');
  });
}

/** Inline links and images `[text](target "title")` and reference definitions `[id]: target`. */
export function extractLinks(file: string, text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  prose(text).forEach((line, i) => {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, line: i + 1, target: m[1]! });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (definition) links.push({ file, line: i + 1, target: definition[1]! });
  });
  return links;
}

/**
 * The anchors GitHub gives a file's headings: the heading's text (link targets, emphasis and code
 * marks dropped) in lower case, punctuation removed except `-` and `_`, spaces turned to `-`;
 * a repeated heading gets `-1`, `-2`… Explicit `<a id="…">` / `name="…"` anchors count too.
 */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*(?:#+\s*)?$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\s-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Why a link does not resolve inside the repository, or undefined when it does. */
export function brokenReason(link: MarkdownLink, repoRoot: string): string | undefined {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: — outside the repository
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = decodeURIComponent(pathPart);
  const resolved = path === '' ? link.file : path.startsWith('/') ? resolve(repoRoot, `.${path}`) : resolve(dirname(link.file), path);
  if (!resolved.startsWith(repoRoot)) return `points outside the repository (${target})`;
  if (!existsSync(resolved)) return `no such file: ${target}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return `an anchor into a file that is not Markdown: ${target}`;
  if (!headingAnchors(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor).toLowerCase())) return `no heading for #${anchor} in ${path || 'this file'}`;
  return undefined;
}
