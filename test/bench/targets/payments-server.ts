// Benchmark target: the real payments server with production-like settings (response validation
// off, the request log on) on a random loopback port, in-memory store.
import { recordEvent } from "@payments/server";
import { startTestServer } from "../../support/server.ts";
import {
  type EmitEventsMessage,
  type EmittedMessage,
  exitWithParent,
  type ReadyMessage,
  TOKEN_BODY,
} from "./protocol.ts";

const server = await startTestServer({ VALIDATE_RESPONSES: "false", REQUEST_LOG: "true" });
exitWithParent(() => server.close());

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
  const now = () => new Date();
  for (let done = 0; done < message.count; done += message.batch) {
    const n = Math.min(message.batch, message.count - done);
    await store.transaction(async (tx) => {
      for (let i = 0; i < n; i++) {
        await recordEvent(tx, now, false, "payment.captured", {
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
