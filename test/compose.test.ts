import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/config';
import { SEARCH_ATTRIBUTES } from '../workflows/shared/search-attributes';

// No Docker engine runs here, so docker-compose.yml is kept honest by checking it against the code.
const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, { environment?: Record<string, string>; ports?: string[]; command?: string[]; depends_on?: unknown; profiles?: string[] }>;
};
const envExample = readFileSync('.env.example', 'utf8');
const documented = new Set([...envExample.matchAll(/^([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!));

describe('docker-compose.yml', () => {
  it('runs the whole production-like stack', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'chroma', 'embedder', 'migrate', 'postgresql', 'temporal', 'temporal-ui', 'worker']);
    // Migrations run once, before worker and API (which no longer migrate in production).
    expect(compose.services.api!.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' } });
    expect(compose.services.worker!.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' } });
    expect(compose.services.temporal!.environment!.DB).toBe('postgres12');
    expect(compose.services.api!.ports).toContain('8080:8080');
  });

  it('publishes only the API; the Temporal UI is an opt-in operator tool on loopback', () => {
    const published = Object.entries(compose.services).filter(([, s]) => (s.ports ?? []).length > 0).map(([name]) => name);
    expect(published.sort()).toEqual(['api', 'temporal-ui']);
    expect(compose.services['temporal-ui']!.profiles).toEqual(['operator']);
    for (const port of compose.services['temporal-ui']!.ports!) expect(port.startsWith('127.0.0.1:')).toBe(true);
  });

  it('has no default for the keys: production must be given its own', () => {
    for (const name of ['worker', 'api']) {
      const env = compose.services[name]!.environment!;
      expect(env.API_KEYS).toMatch(/^\$\{API_KEYS:\?/);
      expect(env.SECRET_KEY).toMatch(/^\$\{SECRET_KEY:\?/);
      expect(env.PAYLOAD_MASTER_KEY).toMatch(/^\$\{PAYLOAD_MASTER_KEY:\?/);
    }
  });

  it('gives worker and API only variables the config knows, with values it accepts', () => {
    for (const name of ['worker', 'api']) {
      const env = compose.services[name]!.environment!;
      for (const key of Object.keys(env)) expect(documented.has(key), `${name}: ${key} is not in .env.example`).toBe(true);
      // Required variables get what an operator would set: a tenant key and a secret of 32+ bytes.
      const operator: Record<string, string> = { API_KEYS: `acme:${'k'.repeat(40)}`, SECRET_KEY: 's'.repeat(40), PAYLOAD_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') };
      const resolved = Object.fromEntries(
        Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1').replace(/\$\{([A-Z_]+):\?[^}]*\}/g, (_m, name: string) => operator[name]!)]),
      );
      const config = loadConfig(resolved);
      expect(config.temporal.address).toBe('temporal:7233');
      expect(config.chroma.url).toBe('http://chroma:8000');
    }
  });

  it('starts the worker and the API from entry points that exist', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    for (const name of ['worker', 'api']) {
      const command = compose.services[name]!.command!;
      const source = command.find((part) => part.endsWith('.ts'));
      const compiled = command.find((part) => part.endsWith('.mjs'));
      expect(source ?? compiled, `${name}: a .ts source or a compiled .mjs entry`).toBeTruthy();
      if (source) {
        expect(() => readFileSync(source)).not.toThrow();
      } else {
        // A compiled entry exists only in the image: the image must build it, from a source that exists.
        expect(compiled).toBe(`.build/${name}.mjs`);
        expect(dockerfile).toMatch(/^RUN npm run build:workflows$/mu);
        expect(() => readFileSync(`src/cli/${name}.ts`)).not.toThrow();
      }
    }
  });
});

describe('.env.example', () => {
  it('documents every variable with a value the config accepts', () => {
    const values = Object.fromEntries([...envExample.matchAll(/^([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    expect(() => loadConfig(values)).not.toThrow();
    expect(Object.keys(values).length).toBeGreaterThan(30);
  });

  it('names the search attributes the stack registers', () => {
    expect(Object.keys(SEARCH_ATTRIBUTES)).toContain('MemoryUserId');
  });
});
