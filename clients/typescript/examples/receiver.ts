/**
 * A webhook receiver you can run: it listens on 127.0.0.1, verifies every delivery's signature against
 * the raw body, prints the event and answers 200 (401 when the signature does not verify).
 *
 *   # with a secret you already have (from POST /v1/webhook_endpoints or rotate_secret):
 *   WEBHOOK_SECRET=whsec_... PORT=4242 npx tsx clients/typescript/examples/receiver.ts
 *
 *   # or let it register itself in the sandbox with a key holding the `webhooks` scope:
 *   PAYMENTS_KEY=key_test_... PAYMENTS_URL=http://127.0.0.1:3000 npx tsx clients/typescript/examples/receiver.ts
 *
 * Then make something happen (a charge), or send a test event:
 *   curl -X POST $PAYMENTS_URL/v1/webhook_endpoints/we_.../test -H "Authorization: Bearer $PAYMENTS_KEY"
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createPaymentsClient, unwrap } from "../src/index.ts";
import { webhookListener } from "../src/webhooks-node.ts";

const port = Number(process.env.PORT ?? 4242);
const seen = new Set<string>();

const server = createServer();
await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;

let secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  const apiKey = process.env.PAYMENTS_KEY;
  if (!apiKey) {
    console.error("Set WEBHOOK_SECRET, or PAYMENTS_KEY (and PAYMENTS_URL) to register this receiver.");
    process.exit(1);
  }
  const payments = createPaymentsClient({ baseUrl: process.env.PAYMENTS_URL ?? "http://127.0.0.1:3000", apiKey });
  const endpoint = unwrap(await payments.POST("/v1/webhook_endpoints", { body: { url, enabled_events: ["*"] } }));
  secret = endpoint.secret;
  console.log(`registered webhook endpoint ${endpoint.id} for ${url}`);
}

server.on(
  "request",
  webhookListener({
    secret,
    onEvent(event) {
      // At least once: the same event may come again after a retry; act on each id once.
      if (seen.has(event.id)) return;
      seen.add(event.id);
      console.log(`${event.created_at} ${event.type} ${event.id} ${JSON.stringify(event)}`);
    },
  }),
);
console.log(`listening on ${url}`);
