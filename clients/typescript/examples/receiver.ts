/**
 * A webhook receiver you can run: it listens on 127.0.0.1, verifies every delivery's signature against
 * the raw body, prints the event and answers 200 (401 when the signature does not verify).
 *
 *   # with a secret you already have (from POST /v1/webhook_endpoints or rotate_secret); stopping the
 *   # receiver leaves that endpoint as it is:
 *   WEBHOOK_SECRET=whsec_... PORT=4242 npx tsx clients/typescript/examples/receiver.ts
 *
 *   # or let it register an endpoint for itself in the sandbox with a key holding the `webhooks` scope;
 *   # stopping it (Ctrl-C, or SIGTERM) deletes that endpoint again, so none is left behind failing:
 *   PAYMENTS_KEY=key_test_... PAYMENTS_URL=http://127.0.0.1:3000 npx tsx clients/typescript/examples/receiver.ts
 *
 * Then make something happen (a charge), or send a test event:
 *   curl -X POST $PAYMENTS_URL/v1/webhook_endpoints/we_.../test -H "Authorization: Bearer $PAYMENTS_KEY"
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createPaymentsClient, type PaymentsClient, unwrap } from "../src/index.ts";
import { webhookListener } from "../src/webhooks-node.ts";

const port = Number(process.env.PORT ?? 4242);
const seen = new Set<string>();

/** The endpoint this receiver registered itself, which it deletes when it stops. */
let registered: { id: string; payments: PaymentsClient } | undefined;
/** Settles once the receiver is set up (registered, when it registers); a stop waits for it. */
let setUp: Promise<unknown> = Promise.resolve();
let stopping = false;

// Installed before anything is registered, so a Ctrl-C during the registration still deletes the
// endpoint it made.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void stop());

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
  const baseUrl = process.env.PAYMENTS_URL ?? "http://127.0.0.1:3000";
  const payments = createPaymentsClient({ baseUrl, apiKey });
  const registration = (async () => {
    const endpoint = unwrap(await payments.POST("/v1/webhook_endpoints", { body: { url, enabled_events: ["*"] } }));
    registered = { id: endpoint.id, payments };
    return endpoint;
  })();
  setUp = registration;
  try {
    const endpoint = await registration;
    secret = endpoint.secret;
    console.log(`registered webhook endpoint ${endpoint.id} for ${url}; stopping this receiver (Ctrl-C) deletes it`);
  } catch (err) {
    console.error(`Could not register a webhook endpoint at ${baseUrl}: ${(err as Error).message}`);
    process.exit(1);
  }
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

/**
 * Stops receiving and, when this receiver registered its own endpoint, deletes it (an endpoint left
 * behind would have every delivery fail and be retried for hours). A second signal while that is under
 * way exits at once, naming the endpoint that may be left.
 */
async function stop(): Promise<void> {
  if (stopping) {
    const left = registered ? ` Webhook endpoint ${registered.id} may still exist: delete it yourself.` : "";
    console.error(`Stopped before cleaning up.${left}`);
    process.exit(1);
  }
  stopping = true;
  server.close();
  server.closeAllConnections();
  await setUp.catch(() => {}); // a failed registration left nothing to delete
  if (!registered) {
    console.log(
      process.env.WEBHOOK_SECRET
        ? "stopped; the webhook endpoint of WEBHOOK_SECRET is left as it was"
        : "stopped; no webhook endpoint was registered",
    );
    process.exit(0);
  }
  const { id, payments } = registered;
  try {
    unwrap(await payments.DELETE("/v1/webhook_endpoints/{id}", { params: { path: { id } } }));
  } catch (err) {
    console.error(`Could not delete webhook endpoint ${id} (${(err as Error).message}); delete it yourself.`);
    process.exit(1);
  }
  console.log(`stopped; deleted webhook endpoint ${id}, which this receiver had registered`);
  process.exit(0);
}
