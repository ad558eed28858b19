import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real PTYs and real shells: two cores, so keep the worker count modest.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
