// Test runner settings: unit tables beside the code, black-box and API tests under test/.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['operator/**/*.test.ts', 'api/**/*.test.ts', 'runner-image/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup-harden.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
