import { defineConfig } from "vitest/config";

// The contract's script tests (scripts/*.test.mjs) diff the whole generated document with api-smart-diff,
// a few seconds a comparison on a two-core machine that runs other suites at the same time: generous
// limits keep a busy moment from failing a correct test, as in server/ and test/. Nothing here is timed.
export default defineConfig({
  test: {
    testTimeout: 60_000,
  },
});
