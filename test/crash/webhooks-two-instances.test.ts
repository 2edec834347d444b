import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, openStore, verifyLedger } from "@payments/server";
import { afterAll, describe, expect, it } from "vitest";
import { bundlePerFile } from "../support/crash.ts";
import {
  CountingReceiver,
  deliveryFixture,
  freePort,
  pause,
  post,
  type ServerProcess,
  seeded,
  startServerProcess,
} from "./webhook-harness.ts";

// Two server processes on one store (any number of instances may run the dispatcher; docs/webhooks.md 'How delivery
// works (and why nothing is lost)'): events committed through either are delivered by whichever claims them
// first, and no attempt is ever sent by both (the claim is a conditional update in the store). Charges (two
// events each) go to both instances at once; both dispatch, woken by their own commits and polling for the
// other's. The receiver counts every (delivery, attempt) pair; each instance logs its attempts
// (LOG_LEVEL=debug), which shows that both took part.

const EVENTS = Number(process.env.TWO_INSTANCE_EVENTS ?? 1000);
const random = seeded(Number(process.env.CRASH_SEED ?? 20261123));

/** The server every start runs: its production bundle, built once for this file (support/crash.ts). */
const serverMain = bundlePerFile();
const dataDir = mkdtempSync(join(tmpdir(), "payments-webhook-two-"));
const receiver = new CountingReceiver(random);
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.kill();
  await receiver.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The dispatcher instance ids and attempt counts a process logged. */
function attemptsLogged(server: ServerProcess): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of server.lines) {
    if (!line.includes('"webhook attempt"')) continue;
    const entry = JSON.parse(line) as { dispatcher: string; recorded: boolean };
    if (entry.recorded) counts.set(entry.dispatcher, (counts.get(entry.dispatcher) ?? 0) + 1);
  }
  return counts;
}

describe("two instances on one store", { timeout: 300_000 }, () => {
  it(`deliver ${EVENTS} events without sending any attempt twice`, async () => {
    await receiver.start();
    // Set up in-process on the same data directory: the bootstrap key, the endpoint, a merchant, a card.
    const { key, endpoint, merchantId, tokenId } = await deliveryFixture(dataDir, receiver, "Two instances");

    const env = { LOG_LEVEL: "debug", REQUEST_LOG: "false", WEBHOOK_POLL_INTERVAL_MS: "50" };
    for (const port of [await freePort(), await freePort()]) {
      servers.push(await startServerProcess({ main: serverMain(), port, dataDir, key, env }));
    }
    const charge = {
      merchant_id: merchantId,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card", token: tokenId },
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        const target = servers[worker % 2] as ServerProcess;
        while (next < EVENTS / 2) {
          next++;
          const answer = await post(`${target.url}/v1/charges`, key, charge);
          expect(answer?.status).toBe(201);
        }
      }),
    );

    const store = await openStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      // What the endpoint must receive: every event from its creation on (one made before it, such as the
      // bootstrap key's service_key.created, is not for it).
      const events = (
        await store.findAll("events", { livemode: false, created_at: { $gte: String(endpoint.created_at) } }, 1_000_000)
      ).map((e) => e.id);
      for (let i = 0; i < 600 && !events.every((id) => receiver.events().has(id)); i++) await pause(100);
      for (let i = 0; i < 100; i++) {
        const open = await store.findAll("webhook_deliveries", { status: "pending" }, 1);
        if (open.length === 0) break;
        await pause(100);
      }
      for (const s of servers) await s.stop();
      const deliveries = await store.findAll("webhook_deliveries", {}, 1_000_000);
      const perInstance = servers.map(attemptsLogged);
      // Two instances charging on one store leave a ledger that adds up (`ledger verify`).
      expect((await verifyLedger(store)).differences).toEqual([]);
      const figures = {
        events: events.length,
        receipts: receiver.receipts.length,
        same_attempt_sent_twice: receiver.repeatedAttempts(),
        duplicate_event_receipts: receiver.duplicateEvents(),
        lost_events: events.filter((id) => !receiver.events().has(id)).length,
        attempts_recorded: deliveries.reduce((n, d) => n + d.attempts.length, 0),
        attempts_per_instance: perInstance.map((m) => [...m.values()].reduce((a, b) => a + b, 0)),
      };
      console.log(`two-instance webhook figures: ${JSON.stringify(figures)}`);
      expect(events.length).toBeGreaterThanOrEqual(EVENTS); // each charge makes two or more events
      expect(figures).toMatchObject({ same_attempt_sent_twice: 0, duplicate_event_receipts: 0, lost_events: 0 });
      expect(deliveries.every((d) => d.status === "succeeded" && d.attempts.length === 1)).toBe(true);
      expect(figures.receipts).toBe(figures.attempts_recorded);
      // Both instances delivered (each logged under its own dispatcher id).
      for (const counts of perInstance) expect([...counts.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      expect(new Set(perInstance.flatMap((m) => [...m.keys()])).size).toBe(2);
    } finally {
      await store.close();
    }
  });
});
