import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Heavy fixtures made once per run (key pairs), handed to the files through inject().
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Two cores: files run in parallel, each starts its own sandbox on port 0.
    pool: 'forks',
    maxWorkers: 2,
  },
});
