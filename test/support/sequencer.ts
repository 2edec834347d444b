import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// The order the suites' files start in. Two run at a time (vitest.config.ts), and a run ends when its
// longest chain ends: a file that takes minutes must start first, not be picked up last while the other
// worker is already idle. Vitest runs the longest first by itself once it has durations from an earlier
// run (node_modules/.vite/vitest, kept between CI's two runs), and the largest file first without them;
// size is a poor guide here (the crash suites are short files that restart a server dozens of times),
// so on a first run the files known to be long go first, longest first, as timed in November 2026
// (the per-file report of `npx vitest run --reporter=json`). A file not in the list keeps Vitest's order.
const LONG_FIRST = [
  "crash/idempotency-crash.test.ts",
  "crash/acquirer-crash.test.ts",
  "fuzz/contract-fuzz.test.ts",
  "ops/startup.test.ts",
  "browser/docs/docs.test.ts",
  "browser/console/pages.test.ts",
  "e2e/scope-matrix.test.ts",
  "contract/dredd.test.ts",
  "browser/console/widths.test.ts",
  "browser/console/links-cashouts.test.ts",
  "e2e/body-shapes.test.ts",
  "crash/webhooks-crash.test.ts",
  "e2e/agreement.test.ts",
  "browser/pay-page.test.ts",
  "readme/readme.test.ts",
  "crash/disputes-crash.test.ts",
];

const rank = (spec: TestSpecification) => {
  const path = spec.moduleId.replaceAll("\\", "/");
  const index = LONG_FIRST.findIndex((file) => path.endsWith(`/test/${file}`));
  return index === -1 ? LONG_FIRST.length : index;
};

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Durations of an earlier run of every file: Vitest's own order (longest first) is the better one.
    const timed = files.every((spec) => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
      return this.ctx.cache.getFileTestResults(key)?.duration !== undefined;
    });
    if (timed) return sorted;
    // Array.prototype.sort is stable: the rest keep Vitest's order.
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}
