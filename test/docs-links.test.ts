import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenReason, extractLinks, headingAnchors } from './support/markdown-links';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DOCS = join(ROOT, 'docs');
const files = [join(ROOT, 'README.md'), ...readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => join(DOCS, f))];

describe('links in README.md and docs/*.md', () => {
  it('every relative link resolves to a file in the repository, and every #anchor to a heading', () => {
    const links = files.flatMap((file) => extractLinks(file, readFileSync(file, 'utf8')));
    expect(links.length).toBeGreaterThan(20);
    const broken = links.flatMap((link) => {
      const reason = brokenReason(link, ROOT);
      return reason ? [`${link.file.slice(ROOT.length)}:${link.line}: ${reason}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('the README links every page in docs/', () => {
    const readme = extractLinks(join(ROOT, 'README.md'), readFileSync(join(ROOT, 'README.md'), 'utf8')).map((l) => l.target.split('#')[0]);
    for (const page of readdirSync(DOCS).filter((f) => f.endsWith('.md'))) expect(readme, page).toContain(`docs/${page}`);
  });
});

describe('the link checker', () => {
  const file = join(ROOT, 'docs', 'example.md');

  it('finds inline links, images and reference definitions, but not inside code', () => {
    const text = ['See [a](a.md), ![pic](img.png "title") and `[not](code.md)`.', '```', '[nor](fenced.md)', '```', '[ref]: ../README.md#top'].join('\n');
    expect(extractLinks(file, text).map((l) => [l.line, l.target])).toEqual([
      [1, 'a.md'],
      [1, 'img.png'],
      [5, '../README.md#top'],
    ]);
  });

  it("names headings as GitHub does, duplicates numbered", () => {
    const anchors = headingAnchors(['# Security and privacy', '## Export — `GET /v1/users/{userId}/export`', '### `PG_BIN_DIR` and [links](x.md)', '## Notes', '## Notes', '```', '# not a heading', '```'].join('\n'));
    expect([...anchors]).toEqual(['security-and-privacy', 'export--get-v1usersuseridexport', 'pg_bin_dir-and-links', 'notes', 'notes-1']);
  });

  it('reports missing files, missing anchors and links that leave the repository; accepts URLs', () => {
    const at = (target: string) => brokenReason({ file, line: 1, target }, ROOT);
    expect(at('https://example.com/x')).toBeUndefined();
    expect(at('security.md#what-an-operator-must-configure')).toBeUndefined();
    expect(at('nowhere.md')).toMatch(/no such file/);
    expect(at('security.md#no-such-heading')).toMatch(/no heading for #no-such-heading/);
    expect(at('../../outside.md')).toMatch(/outside the repository/);
  });
});
