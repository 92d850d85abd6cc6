// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = ['assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises', 'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers', 'timers/promises', 'tls', 'url', 'util', 'worker_threads', 'zlib'];

export default tseslint.config(
  { ignores: ['node_modules/', '.stack/', '.data/', 'scratch/', 'test-artifacts/', 'web/dist/', 'src/client/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
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
          paths: [...NODE_BUILTINS, ...NODE_BUILTINS.map((m) => `node:${m}`), 'pg', 'chromadb', 'langchain', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'].map((name) => ({ name, message: 'Workflow code is deterministic: do I/O in activities.' })),
          patterns: [
            { group: ['@langchain/*', 'node:*'], message: 'Workflow code is deterministic: do I/O in activities.' },
            { group: ['**/adapters/**', '**/services/**', '**/stack/**', '**/api/**'], message: 'Workflows import only pure modules (src/core) and @temporalio/workflow.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'use sleep() from @temporalio/workflow' }, { name: 'fetch', message: 'do I/O in activities' }],
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'workflow time is deterministic already; prefer it explicitly via workflowInfo()' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
