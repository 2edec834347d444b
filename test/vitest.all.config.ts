import { defineConfig } from "vitest/config";
import base from "./vitest.config.ts";

// `npm test` in this workspace: both runs the suites make, in one Vitest run and one pool of workers.
// - `simulator`: every suite (vitest.config.ts), the acquirer being the simulator;
// - `adyen`: the money suites again with Adyen as both environments' acquirer, against one stand-in
//   behind Prism (vitest.adyen.config.ts, issue 32), its globalSetup providing the stand-in to that
//   project's files only (support/server.ts reads it with `inject`).
// They used to be two `vitest run`s one after the other: the second waited for the first's last file
// while one worker sat idle, then started Vitest again and transformed the server's sources a second
// time. In one run the Adyen files fill the first run's gaps. Each config still runs alone:
// `npx vitest run` (the simulator's suites, what a developer runs for one file) and `npm run test:adyen`.
// The root-only settings (the pool's size and the long-first order, support/sequencer.ts) come from
// vitest.config.ts, so both projects' files are ordered together.
export default defineConfig({
  test: {
    maxWorkers: base.test?.maxWorkers,
    sequence: base.test?.sequence,
    projects: [
      { extends: "./vitest.config.ts", test: { name: "simulator" } },
      { extends: "./vitest.adyen.config.ts", test: { name: "adyen" } },
    ],
  },
});
