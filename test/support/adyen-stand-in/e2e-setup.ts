import type { TestProject } from "vitest/node";
import { type AdyenStack, startAdyenStack } from "./index.ts";

// vitest `globalSetup` of the Adyen e2e run (test/vitest.adyen.config.ts): one stand-in and its three Prism
// validating proxies for the whole run, started before any suite and shared by every test server
// (support/server.ts reads the settings provided here and configures PRODUCTION_ACQUIRER and
// SANDBOX_ACQUIRER = adyen against them). At the end the proxies' violations over the whole run are
// counted: any one fails the run, with the lines Prism wrote.

/** What every test server of the run is configured with (support/server.ts adyenEnv). */
export interface AdyenE2E {
  apiKey: string;
  payoutReviewerApiKey: string;
  merchantAccount: string;
  hmacKey: string;
  checkoutUrl: string;
  payoutUrl: string;
  disputesUrl: string;
  /** The stand-in itself (not a proxy), for its test side door (stand-in.ts takeNotificationsAt). */
  standInUrl: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    adyenE2E: AdyenE2E | undefined;
  }
}

let stack: AdyenStack | undefined;

export async function setup(project: TestProject): Promise<void> {
  stack = await startAdyenStack();
  project.provide("adyenE2E", { ...stack.settings, hmacKey: stack.hmacKey, standInUrl: stack.standIn.url });
}

export async function teardown(): Promise<void> {
  if (!stack) return;
  const violations = stack.violations();
  const calls = stack.standIn.received.length;
  await stack.stop();
  // Nothing reached the stand-in: the suites ran against something else, and 0 violations would prove nothing.
  if (calls === 0) throw new Error("The Adyen e2e run sent no request to the stand-in");
  if (violations.length > 0) {
    throw new Error(
      `Prism reported ${violations.length} contract violation(s) against Adyen's documents over the run:\n${violations.join("\n")}`,
    );
  }
  process.stdout.write(`Adyen stand-in: ${calls} requests through Prism, 0 contract violations.\n`);
}
