import { BaseSequencer, type TestSpecification } from "vitest/node";

// The order the suites' files start in. Two run at a time (vitest.config.ts), and a run ends when its
// longest chain ends: a file that takes minutes must start early, not be picked up last while the other
// worker is already idle. Vitest's own order (the longest first when an earlier run's durations are in
// node_modules/.vite/vitest, else the largest file first) is kept for the rest, but the long files,
// timed in November 2026 (`npx vitest run --reporter=json`), go first in this order, with the kill -9
// suites spaced apart: each restarts a server dozens of times and bounds its waits (a start within a
// minute, answers within seconds), so they are not run beside each other, nor in the first minute,
// when turbo runs the server's unit tests beside this workspace.
const LONG_FIRST = [
  "fuzz/contract-fuzz.test.ts", // 60 s: 16,000 requests in-process
  "browser/docs/docs.test.ts", // 52 s: Chromium, the rendered reference
  "crash/idempotency-crash.test.ts", // 173 s: 22 server starts, 3 processes each with WORKERS=2
  "browser/console/pages.test.ts", // 49 s: Chromium
  "ops/startup.test.ts", // 57 s: 10 server processes
  "e2e/scope-matrix.test.ts", // 46 s: 324 requests
  "crash/acquirer-crash.test.ts", // 120 s: 31 server starts
  "contract/dredd.test.ts", // 45 s: dredd
  "browser/console/widths.test.ts", // 42 s: Chromium
  "browser/console/links-cashouts.test.ts", // 39 s: Chromium
  "browser/console/money-disputes.test.ts", // 67 s beside another file: Chromium
  "crash/adyen-crash.test.ts", // 31 starts of the bundle, Prism and the Adyen stand-in (issue 32): ~30 s a cycle at load 25
  "e2e/body-shapes.test.ts", // 39 s
  "e2e/agreement.test.ts", // 37 s
  "crash/webhooks-crash.test.ts", // 39 s: 11 server starts
  "browser/pay-page.test.ts", // 35 s: Chromium
  "readme/readme.test.ts", // 35 s: the guides' shell blocks
  "crash/disputes-crash.test.ts", // 26 s: 7 server starts
  "ops/workers.test.ts", // 24 s: clusters of 3 processes
  "ops/rate-limits.test.ts", // 22 s: counts per window across processes
  "crash/webhooks-two-instances.test.ts", // 12 s: two processes on one SQLite file
];

const rank = (spec: TestSpecification) => {
  const path = spec.moduleId.replaceAll("\\", "/");
  const index = LONG_FIRST.findIndex((file) => path.endsWith(`/test/${file}`));
  return index === -1 ? LONG_FIRST.length : index;
};

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array.prototype.sort is stable: the files not listed keep Vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
