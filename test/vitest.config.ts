import { availableParallelism } from "node:os";
import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";
import LongFirstSequencer from "./support/sequencer.ts";

// These suites start real servers, Prism and dredd on a two-core machine that runs other suites at the
// same time: generous limits keep a busy moment from failing a correct test. Nothing here is timed.
//
// `@payments/source` (clients/typescript/package.json `exports`) resolves the client to its TypeScript
// sources, as tsconfig.json's customConditions does for tsc: the suites test the code in the
// repository without a build. The packed, built client has its own test (test/package/).
//
// Two files at a time even on two cores (Vitest's default there is one: cores - 1): most of a file's time
// is spent waiting on the processes it starts (servers restarting after kill -9, Chromium, Prism, dredd,
// npm pack), so a second file fills those waits; each file has its own servers, stores and ports (no
// fixed port, no shared data directory), and the shared build outputs are built under a lock
// (clients/console/build.mjs ensureBuilt). The long files start first, the kill -9 suites apart
// (support/sequencer.ts).
//
// support/mongodb.ts decides, before any file runs, whether the suites run on MongoDB (MONGODB_URI) and
// stops the run when that deployment cannot be used.
export default defineConfig({
  ssr: { resolve: { conditions: ["@payments/source", ...defaultServerConditions] } },
  test: {
    globalSetup: ["./support/mongodb.ts"],
    setupFiles: ["./support/quiet-warnings.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: LongFirstSequencer },
  },
});
