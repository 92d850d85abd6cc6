// @ts-check
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { URL } from 'node:url';
import js from '@eslint/js';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

/** Every Node builtin as Node itself lists it, bare and with the `node:` prefix ("fs", "node:fs", "fs/promises"…). */
const NODE_BUILTINS = [...new Set(builtinModules.flatMap((m) => (m.startsWith('node:') ? [m] : [m, `node:${m}`])))];

/**
 * The dependencies that load a native addon, read from each package's own manifest (an N-API or
 * node-gyp build, prebuilt binaries, or per-platform binary packages), so a new native dependency
 * is caught without anyone remembering to list it.
 */
function nativeDependencies() {
  const own = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
  const loaders = ['node-gyp-build', 'prebuild-install', 'bindings', 'node-addon-api', 'node-pre-gyp', '@mapbox/node-pre-gyp'];
  const platform = /(?:^|[-/])(?:linux|darwin|win32|freebsd|android)-(?:x64|arm64|ia32|arm)/u;
  return Object.keys({ ...own.dependencies, ...own.optionalDependencies, ...own.devDependencies }).filter((name) => {
    let manifest;
    try {
      // Read from disk: a package's "exports" may not expose its package.json to require().
      manifest = JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), 'utf8'));
    } catch {
      return false;
    }
    return (
      Boolean(manifest.napi || manifest.gypfile || manifest.binary) ||
      loaders.some((l) => l in (manifest.dependencies ?? {})) ||
      Object.keys(manifest.optionalDependencies ?? {}).some((d) => platform.test(d))
    );
  });
}
const NATIVE_DEPENDENCIES = nativeDependencies();

export default tseslint.config(
  // .build/ holds what `npm run build:workflows` compiles (the worker entry, the workflow bundle).
  { ignores: ['node_modules/', '.stack/', '.data/', 'scratch/', 'test-artifacts/', 'web/dist/', 'src/client/dist/', '.build/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Every pattern may one day see user or model text: backtracking that grows faster than the
  // input stalls the event loop for minutes (issue #20). The recommended set already includes
  // no-super-linear-backtracking; no-super-linear-move covers the quadratic cost of retrying a
  // linear pattern at every start position of a long text (g flags, search, replace).
  regexp.configs['flat/recommended'],
  {
    rules: {
      'regexp/no-super-linear-backtracking': ['error', { report: 'certain' }],
      'regexp/no-super-linear-move': ['error', { report: 'certain', ignoreSticky: true, ignorePartial: false }],
      // Dead or duplicate parts of a pattern (an alternative another already covers, a group
      // nobody reads): harmless for the cost, reported so they are cleaned up, not blocking.
      'regexp/no-dupe-disjunctions': 'warn',
      'regexp/no-unused-capturing-group': 'warn',
      'regexp/no-useless-non-capturing-group': 'warn',
      'regexp/prefer-character-class': 'warn',
      'regexp/no-dupe-characters-character-class': 'warn',
      'regexp/no-contradiction-with-assertion': 'warn',
      'regexp/no-useless-assertions': 'warn',
    },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    // Workflow code must be deterministic: no I/O, no Node builtins, no clients of real systems.
    files: ['workflows/**/*.ts', 'examples/**/workflows.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...NODE_BUILTINS, 'pg', 'chromadb', 'langchain', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'].map((name) => ({ name, message: 'Workflow code is deterministic: do I/O in activities.' })),
          patterns: [
            { group: ['@langchain/*', 'node:*'], message: 'Workflow code is deterministic: do I/O in activities.' },
            { group: ['**/adapters/**', '**/stack/**', '**/api/**'], message: 'Workflows import only pure modules (src/core) and @temporalio/workflow.' },
            // Use cases live in src/<capability>/; of those folders a workflow may import only the contract.
            { group: ['**/src/*/**', '!**/src/core/**', '!**/src/*/contract', '!**/src/client/**'], message: 'Workflows import only pure modules (src/core), their capability\'s contract (src/<capability>/contract.ts) and @temporalio/workflow.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'use sleep() from @temporalio/workflow' }, { name: 'fetch', message: 'do I/O in activities' }],
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'workflow time is deterministic already; prefer it explicitly via workflowInfo()' }],
    },
  },
  {
    // The domain core is pure: no Node builtins, no native modules, no clients of real systems and
    // no outer layer. What it needs from outside (hashing, word segmentation, storage) arrives as a
    // parameter or a port (src/core/ports.ts, src/core/text/segmenter.ts).
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NODE_BUILTINS.map((name) => ({ name, message: 'src/core is pure: take what needs Node through a port or a parameter.' })),
          patterns: [
            { group: ['node:*'], message: 'src/core is pure: take what needs Node through a port or a parameter.' },
            { group: NATIVE_DEPENDENCIES.flatMap((name) => [name, `${name}/*`]), message: 'src/core is pure: native modules live in src/adapters behind a port.' },
            { group: ['pg', 'chromadb', '@temporalio/*', '@langchain/*', 'fastify', '@fastify/*'], message: 'src/core is pure: clients of real systems live in src/adapters.' },
            {
              group: ['**/adapters/**', '../../**', '../memory/**', '../conversation/**', '../account/**', '../shared/**', '**/api/**', '**/stack/**', '**/security/**', '**/cli/**', '**/runtime', '**/workflows/**', '**/activities/**'],
              message: 'src/core depends on nothing outside src/core.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      // Tests and benchmarks read the project's own fixtures and docs, never a user's text.
      'regexp/no-super-linear-move': 'off',
      'regexp/no-super-linear-backtracking': 'off',
    },
  },
);
