import { afterAll, beforeAll } from "vitest";
import { describeAgreement } from "../support/agreement.ts";
import { exampleRequest } from "../support/examples.ts";
import { type RunningPrism, startPrism } from "../support/prism.ts";

// The Prism mock's side of the suite it shares with the real server (support/agreement.ts), with no
// exception. Valid requests are the document's own examples: the ids its schemas show, the first
// (happy path) example body.

let prism: RunningPrism;
beforeAll(async () => {
  prism = await startPrism();
}, 35_000);
afterAll(() => prism?.stop());

describeAgreement("the Prism mock", () => ({
  url: prism.url,
  key: "key_test_4fQx9ZkT2mB7rLp1WcYd8sNa01234567",
  valid: async (op) => exampleRequest(op),
}));
