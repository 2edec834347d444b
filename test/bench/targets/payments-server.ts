// Benchmark target: the real payments server configured as in production (NODE_ENV=production:
// response validation off, no transaction-misuse guard; the request log on; one JSON log line per
// request at level info, to a stdout the parent discards) on a random loopback port, with an in-memory
// store and rate limits raised (one key sends thousands of requests a second).
import { randomBytes } from "node:crypto";
import { recordEvent } from "@payments/server";
import { startTestServer } from "../../support/server.ts";
import {
  type EmitEventsMessage,
  type EmittedMessage,
  exitWithParent,
  profileOnRequest,
  type ReadyMessage,
  TOKEN_BODY,
} from "./protocol.ts";

const server = await startTestServer({
  NODE_ENV: "production",
  VAULT_MASTER_KEY: randomBytes(32).toString("base64"),
  VAULT_FINGERPRINT_KEY: randomBytes(32).toString("base64"),
  VALIDATE_RESPONSES: "false",
  REQUEST_LOG: "true",
  LOG_LEVEL: "info",
});
exitWithParent(() => server.close());
profileOnRequest();

/** A fixture made through the API before the run. */
async function create(path: string, body: unknown, status: number): Promise<{ id: string }> {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.sandboxKey}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== status)
    throw new Error(`creating the ${path} fixture answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { id: string };
}
const token = await create("/v1/tokens", TOKEN_BODY, 200);
const merchant = await create("/v1/merchants", { name: "Bench Merchant" }, 201);

const ready: ReadyMessage = {
  type: "ready",
  url: server.url,
  key: server.sandboxKey,
  tokenId: token.id,
  merchantId: merchant.id,
};
process.send?.(ready);

// The webhook throughput run: events written as a burst, each transaction like a change's own outbox
// write; the dispatcher finds them by polling and delivers them to the parent's receiver.
process.on("message", async (message: EmitEventsMessage) => {
  if (message?.type !== "emit-events") return;
  const { store } = server.running;
  const { clock } = server.running.domain;
  for (let done = 0; done < message.count; done += message.batch) {
    const n = Math.min(message.batch, message.count - done);
    await store.transaction(async (tx) => {
      for (let i = 0; i < n; i++) {
        await recordEvent(tx, clock, false, "payment.captured", {
          tx_id: `tx_bench${String(done + i).padStart(20, "0")}`,
          merchant_id: merchant.id,
          amount: 2500,
          currency: "USD",
          status: "captured",
          payment_method_type: "card",
          amount_captured: 2500,
        });
      }
    });
  }
  const reply: EmittedMessage = { type: "emitted", count: message.count };
  process.send?.(reply);
});
