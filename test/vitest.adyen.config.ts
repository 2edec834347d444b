import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

// The money suites with Adyen as both environments' acquirer (issue 32): `npx vitest run -c
// vitest.adyen.config.ts` (in test/) alone, and the `adyen` project of the workspace's `npm test`
// (vitest.all.config.ts). One Adyen stand-in behind Prism's validating proxies, loaded with
// Adyen's own documents, serves the whole run (support/adyen-stand-in/e2e-setup.ts); every test server
// (support/server.ts) is configured with PRODUCTION_ACQUIRER=adyen and SANDBOX_ACQUIRER=adyen against it,
// and the run fails if Prism reported any contract violation. Tests that assert the simulator's own
// behaviour skip themselves under it, each with its reason (support/server.ts `ACQUIRER`).
export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: [
        "e2e/charges.test.ts",
        "e2e/local-methods.test.ts",
        "e2e/three-d-secure.test.ts",
        "e2e/disputes.test.ts",
        "e2e/cashouts.test.ts",
        "e2e/late-notifications.test.ts",
        "e2e/undecided-authorisations.test.ts",
      ],
      globalSetup: ["./support/adyen-stand-in/e2e-setup.ts"],
    },
  }),
);
