import { z } from "zod";
import { group, int, type Rule, setting } from "./kit.ts";

// Settings for the crash tests only, refused in production.

export const testSettings = group("tests only", {
  TEST_ACQUIRER_URL: setting(
    z.url().optional(),
    "Tests only (refused in production): the simulator runs as a process of its own at this address (adapters/processor-http.ts), so what it applied outlives a server killed by the crash tests.",
  ),
  TEST_CRASH_AFTER_COMMITS: setting(
    int(1, 1_000_000).optional(),
    "Fault injection for the crash tests only: the process kills itself (SIGKILL) right after the n-th change a request commits, before the answer is sent. Refused in production.",
  ),
});

/** No test hook in production. */
export const noTestHooksInProduction: Rule<{
  NODE_ENV: string;
  TEST_CRASH_AFTER_COMMITS?: number | undefined;
  TEST_ACQUIRER_URL?: string | undefined;
}> = (c, problem) => {
  if (c.NODE_ENV === "production" && c.TEST_CRASH_AFTER_COMMITS !== undefined) {
    problem("TEST_CRASH_AFTER_COMMITS", "is for tests only; unset it");
  }
  if (c.NODE_ENV === "production" && c.TEST_ACQUIRER_URL !== undefined) {
    problem("TEST_ACQUIRER_URL", "is for tests only; unset it");
  }
};
