import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOCS_PATH, ENV_EXAMPLE_PATH, parseEnvExample, renderConfigurationDocs } from '../src/cli/config-docs';
import { envSchema } from '../src/config';

const envExample = readFileSync(ENV_EXAMPLE_PATH, 'utf8');

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` renders from .env.example and the config schema', () => {
    // On failure: run `npm run docs:config` and commit docs/configuration.md.
    expect(readFileSync(CONFIG_DOCS_PATH, 'utf8')).toBe(renderConfigurationDocs(envExample));
  });

  it('lists every variable of the schema, with its default and what it accepts', () => {
    const page = readFileSync(CONFIG_DOCS_PATH, 'utf8');
    for (const name of Object.keys(envSchema.shape)) expect(page).toContain(`| \`${name}\` |`);
    expect(page).toContain('| `PORT` | `8080` | whole number 0–65535 |');
    expect(page).toContain('| `LOG_FORMAT` | unset | `pretty`, `json` |');
    expect(page).toMatch(/\| `PAYLOAD_MASTER_KEY` \| unset \| text \| .*\*\*Required in production\.\*\* \|/);
  });
});

describe('the generator', () => {
  const sample = [
    '# header of the file, not a section',
    'IGNORED=1',
    '# --- HTTP API ---',
    '# A note on the section.',
    '',
    '# Address the API listens on.',
    'HOST=127.0.0.1',
    '# Port,',
    '# two lines.',
    'PORT=8080',
  ].join('\n');

  it('reads sections, section notes and the comment above each variable', () => {
    expect(parseEnvExample(sample)).toEqual([
      {
        title: 'HTTP API',
        notes: ['A note on the section.'],
        variables: [
          { name: 'HOST', value: '127.0.0.1', section: 'HTTP API', description: 'Address the API listens on.' },
          { name: 'PORT', value: '8080', section: 'HTTP API', description: 'Port, two lines.' },
        ],
      },
    ]);
  });

  it('refuses a variable without a comment, a default that disagrees with the schema, and names the schema lacks', () => {
    expect(() => renderConfigurationDocs(envExample.replace('# Port of the local server.\n', ''))).toThrow(/PG_PORT has no comment/);
    expect(() => renderConfigurationDocs(envExample.replace('PG_PORT=5433', 'PG_PORT=5432'))).toThrow(/PG_PORT: .env.example shows "5432" but the default is "5433"/);
    expect(() => renderConfigurationDocs(envExample.replace(/^# Port of the local server.\nPG_PORT=5433\n/m, ''))).toThrow(/PG_PORT is in the config schema but not in .env.example/);
    expect(() => renderConfigurationDocs(`${envExample}# Something new.\nNOT_A_SETTING=1\n`)).toThrow(/NOT_A_SETTING is in .env.example but not in the config schema/);
  });
});
