import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ConfigError, envSchema, loadConfig } from '../config';

/**
 * `npm run docs:config`: writes docs/configuration.md from the two places configuration is
 * defined — the zod schema in src/config/index.ts (every variable, its default and the values it
 * accepts) and .env.example (sections and the comments that explain each variable). `--check`
 * only compares; test/config-docs.test.ts does the same, so the page cannot fall behind the code.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CONFIG_DOCS_PATH = `${ROOT}docs/configuration.md`;
export const ENV_EXAMPLE_PATH = `${ROOT}.env.example`;

export interface ExampleVariable {
  name: string;
  value: string;
  section: string;
  /** The comment lines directly above the variable. */
  description: string;
}

export interface ExampleSection {
  title: string;
  /** Comment paragraphs under the section heading that a blank line separates from any variable. */
  notes: string[];
  variables: ExampleVariable[];
}

/**
 * Reads .env.example: `# --- Title ---` starts a section; the comment lines directly above a
 * variable describe it (every variable needs its own); a comment paragraph followed by a blank
 * line is a note on the section. Lines before the first section are the file's own header.
 */
export function parseEnvExample(text: string): ExampleSection[] {
  const sections: ExampleSection[] = [];
  let comments: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // eslint-disable-next-line regexp/no-super-linear-backtracking -- reads the project's own .env.example, never user text
    const heading = /^#\s*---\s*(.+?)\s*---\s*$/.exec(line);
    if (heading) {
      sections.push({ title: heading[1]!, notes: [], variables: [] });
      comments = [];
      continue;
    }
    const section = sections.at(-1);
    if (!section) continue;
    if (line === '') {
      if (comments.length > 0) section.notes.push(comments.join(' '));
      comments = [];
    } else if (line.startsWith('#')) {
      comments.push(line.replace(/^#\s?/, ''));
    } else {
      const assignment = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
      if (!assignment) throw new Error(`.env.example: cannot read line "${line.slice(0, 60)}"`);
      section.variables.push({ name: assignment[1]!, value: assignment[2]!, section: section.title, description: comments.join(' ') });
      comments = [];
    }
  }
  return sections;
}

interface JsonSchemaField {
  type?: string;
  enum?: string[];
  default?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
}

/** What a variable accepts, in words, from its schema's JSON Schema (input side: before transforms). */
function accepted(field: JsonSchemaField): string {
  if (field.enum) return field.enum.map((v) => `\`${v}\``).join(', ');
  if (field.type === 'integer' || field.type === 'number') {
    const min = field.minimum ?? (field.exclusiveMinimum !== undefined ? field.exclusiveMinimum + (field.type === 'integer' ? 1 : 0) : undefined);
    const max = field.maximum !== undefined && field.maximum < Number.MAX_SAFE_INTEGER ? field.maximum : undefined;
    const kind = field.type === 'integer' ? 'whole number' : 'number';
    if (min !== undefined && max !== undefined) return `${kind} ${min}–${max}`;
    if (min !== undefined) return `${kind} ≥ ${min}`;
    return kind;
  }
  if (field.format === 'uri') return 'URL';
  if (field.pattern) return `text matching \`${field.pattern}\``;
  return 'text';
}

/** Variables NODE_ENV=production refuses to start without (their dev defaults are public). */
function requiredInProduction(): Set<string> {
  try {
    loadConfig({ NODE_ENV: 'production' });
    return new Set();
  } catch (err) {
    if (err instanceof ConfigError) return new Set(err.problems.map((p) => p.variable));
    throw err;
  }
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The whole page. Throws when .env.example and the schema disagree on names or defaults. */
export function renderConfigurationDocs(envExample: string = readFileSync(ENV_EXAMPLE_PATH, 'utf8')): string {
  const sections = parseEnvExample(envExample);
  const shape = envSchema.shape as Record<string, z.ZodType>;
  const documented = sections.flatMap((s) => s.variables);
  const problems: string[] = [];
  const names = new Set(documented.map((v) => v.name));
  for (const name of Object.keys(shape)) if (!names.has(name)) problems.push(`${name} is in the config schema but not in .env.example`);
  for (const v of documented) {
    const schema = shape[v.name];
    if (!schema) {
      problems.push(`${v.name} is in .env.example but not in the config schema`);
      continue;
    }
    if (!v.description) problems.push(`${v.name} has no comment in .env.example`);
    const field = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaField;
    const schemaDefault = field.default === undefined ? '' : String(field.default);
    if (v.value !== schemaDefault) problems.push(`${v.name}: .env.example shows "${v.value}" but the default is "${schemaDefault}"`);
  }
  if (problems.length > 0) throw new Error(`configuration docs: ${problems.join('; ')}`);

  const production = requiredInProduction();
  const out: string[] = [
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs:config` from .env.example and the schema in src/config/index.ts.',
    '     Edit those, not this file: test/config-docs.test.ts fails when this page is out of date. -->',
    '',
    'Every variable is read once at start by `src/config/index.ts`, the only reader of the environment;',
    '`.env` in the working directory is read by the entry points (`cp .env.example .env`). A bad value',
    'stops the service at start, naming the variable. Nothing needs setting for `npm run dev`; with',
    `\`NODE_ENV=production\` the service refuses to start without ${[...production].map((p) => `\`${p}\``).join(', ')}`,
    '(see [security.md](security.md#what-an-operator-must-configure)).',
    '',
    `${documented.length} variables in ${sections.length} groups: ${sections.map((s) => `[${s.title}](#${slug(s.title)})`).join(' · ')}.`,
    '',
  ];
  for (const section of sections) {
    out.push(`## ${section.title}`, '');
    for (const note of section.notes) out.push(note, '');
    out.push('| variable | default | accepts | what it does |', '|---|---|---|---|');
    for (const v of section.variables) {
      const field = z.toJSONSchema(shape[v.name]!, { io: 'input', unrepresentable: 'any' }) as JsonSchemaField;
      const def = v.value === '' ? 'unset' : `\`${cell(v.value)}\``;
      const note = production.has(v.name) ? ' **Required in production.**' : '';
      out.push(`| \`${v.name}\` | ${def} | ${cell(accepted(field))} | ${cell(v.description)}${note} |`);
    }
    out.push('');
  }
  return out.join('\n');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function main(): void {
  const rendered = renderConfigurationDocs();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(CONFIG_DOCS_PATH, 'utf8');
    } catch {
      // Missing counts as out of date.
    }
    if (current !== rendered) {
      console.error('docs/configuration.md is out of date: run `npm run docs:config`');
      process.exit(1);
    }
    console.log('docs/configuration.md is up to date');
    return;
  }
  writeFileSync(CONFIG_DOCS_PATH, rendered);
  console.log(`wrote ${CONFIG_DOCS_PATH}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
