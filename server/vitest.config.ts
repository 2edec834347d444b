import { configDefaults, defineConfig } from "vitest/config";

// The server's unit and store tests. They run beside the e2e suites (turbo, two at a time) on a two-core
// machine that other work shares: generous limits keep a busy moment from failing a correct test, as in
// test/vitest.config.ts; nothing here is timed. Stryker's sandbox (.stryker-tmp/, a copy of this
// workspace) and its reports are not tests of their own (npm run test:mutation, stryker.config.mjs).
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    exclude: [...configDefaults.exclude, ".stryker-tmp/**", "reports/**"],
  },
});
