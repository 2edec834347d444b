import { defineConfig } from "vitest/config";

// These suites start real servers, Prism and dredd on a two-core machine that runs other suites at the
// same time: generous limits keep a busy moment from failing a correct test. Nothing here is timed.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
