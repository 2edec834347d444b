import { BaseSequencer, type TestSpecification } from "vitest/node";

// The order the suites' files start in. Two run at a time (vitest.config.ts), and a run ends when its
// longest chain ends: a file that takes minutes must start early, not be picked up last while the other
// worker is already idle. Vitest's own order (the longest first when an earlier run's durations are in
// node_modules/.vite/vitest, else the largest file first) is kept for the rest, but the long files go
// first in this order, each with its time beside another file in the last full run on two cores
// (28 November 2026, node_modules/.vite/vitest/*/results.json). The kill -9 suites each restart a server
// dozens of times and bound their waits (a start within a minute, answers within seconds), so they are
// not run beside each other, nor in the first minute, when turbo runs the server's unit tests beside this
// workspace: with these times they run one after another on one worker (from about the second minute)
// while the other takes the browser and e2e files. The Adyen project's files (vitest.all.config.ts) are
// not listed: short, they fill the end.
const LONG_FIRST = [
  "fuzz/contract-fuzz.test.ts", // 220 s: 16,000 requests in-process
  "browser/console/pages.test.ts", // 108 s: Chromium
  "crash/idempotency-crash.test.ts", // 214 s: 22 server starts, 3 processes each with WORKERS=2
  "ops/startup.test.ts", // 108 s: 10 server processes
  "crash/adyen-crash.test.ts", // 159 s: 31 starts of the bundle, Prism and the Adyen stand-in (issue 32)
  "browser/console/money-disputes.test.ts", // 75 s: Chromium
  "e2e/scope-matrix.test.ts", // 73 s: 324 requests
  "browser/docs/docs.test.ts", // 69 s: Chromium, the rendered reference
  "crash/acquirer-crash.test.ts", // 155 s: 31 server starts
  "browser/console/links-cashouts.test.ts", // 68 s: Chromium
  "e2e/body-shapes.test.ts", // 68 s
  "readme/readme.test.ts", // 66 s: the guides' shell blocks
  "crash/disputes-crash.test.ts", // 67 s: 11 server starts
  "contract/dredd.test.ts", // 64 s: dredd
  "browser/console/widths.test.ts", // 62 s: Chromium
  "crash/webhooks-crash.test.ts", // 58 s: 11 server starts
  "browser/pay-page.test.ts", // 48 s: Chromium
  "e2e/agreement.test.ts", // 48 s
  "fuzz/cross-sandbox-fuzz.test.ts", // 39 s
  "ops/workers.test.ts", // 38 s: clusters of 3 processes
  "ops/rate-limits.test.ts", // 36 s: counts per window across processes
  "browser/three-d-secure.test.ts", // 33 s: Chromium
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
