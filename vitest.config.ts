import { defineConfig } from 'vitest/config';

// Two tiers by file suffix: pure unit tests need no services; integration tests get the real
// stack (Temporal dev server, PostgreSQL, Chroma, embedder) from a globalSetup that starts what
// the environment does not already point at.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          sequence: { groupOrder: 0 },
          exclude: ['test/**/*.int.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.int.test.ts'],
          sequence: { groupOrder: 1 },
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Integration files share one stack; two cores do not run many workers at once well.
          maxWorkers: 2,
          fileParallelism: true,
        },
      },
    ],
  },
});
