import { afterAll, beforeAll } from "vitest";
import { describeAgreement } from "../support/agreement.ts";
import { RECIPES } from "../support/recipes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { clientFor } from "./fixtures.ts";

// The real server's side of the suite it shares with the Prism mock (support/agreement.ts); valid
// requests come from fresh fixtures (support/recipes.ts).

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describeAgreement("the server", () => ({
  url: server.url,
  key: server.sandboxKey,
  valid: (op) => RECIPES[op.operationId]({ server, client: clientFor(server, server.sandboxKey), live: false }),
}));
