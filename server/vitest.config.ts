import { defineConfig } from "vitest/config";

// The unit and property suites run beside the e2e suites (turbo, two at a time) on a two-core machine
// that other work shares: generous limits keep a busy moment from failing a correct test, as in
// test/vitest.config.ts. Nothing here is timed.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
