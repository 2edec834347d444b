import { describeAgreement } from "../support/agreement.ts";
import { RECIPES } from "../support/recipes.ts";
import { useServer } from "./fixtures.ts";

// The real server's side of the suite it shares with the Prism mock (support/agreement.ts); valid
// requests come from fresh fixtures (support/recipes.ts).

const { server, client } = useServer();

describeAgreement("the server", () => ({
  url: server.url,
  key: server.sandboxKey,
  valid: (op) => RECIPES[op.operationId]({ server, client, live: false }),
}));
