// Webhook delivery in `npm run bench` (its targets, as in docs/contributing.md 'Benchmark': at least 500
// deliveries/s to a loopback receiver on the project's 2-core machine, and a p99 lag from an event's commit
// to its delivery of at most 250 ms at 100 events/s). The payments target process runs its dispatcher as in
// production; the receiver runs here, on 127.0.0.1, and answers 200 at once.
//
// - Lag: card charges (two events each) at 50 requests/s for LAG_SECONDS; each event's lag is the
//   time its delivery reached the receiver minus its `created_at`, which the server stamps inside the
//   committing transaction (so the figure includes the commit itself). Same machine, same clock.
// - Throughput: THROUGHPUT_EVENTS events written by the target straight into its store in transactions
//   of 100 (each like a change's own outbox write), then delivered; the rate is events over the time
//   from the request to write them to the last delivery received.

import type { ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chargeBody, type EmitEventsMessage, type EmittedMessage } from "./targets/protocol.ts";

const LAG_SECONDS = 10;
const CHARGES_PER_SECOND = 50;
const THROUGHPUT_EVENTS = 5000;
const DRAIN_TIMEOUT_MS = 60_000;
export const WEBHOOK_TARGETS = { deliveriesPerSecond: 500, p99LagMs: 250 } as const;

export interface WebhookTarget {
  url: string;
  key: string;
  merchantId: string;
  tokenId: string;
  child: ChildProcess;
}

export interface WebhookBenchResult {
  lag: {
    eventsPerSecond: number;
    events: number;
    delivered: number;
    p50Ms: number | null;
    p99Ms: number | null;
    maxMs: number | null;
    failedCharges: number;
  };
  throughput: { events: number; delivered: number; seconds: number; deliveriesPerSecond: number };
  targets: { target: string; value: number | null; met: boolean }[];
  ok: boolean;
}

interface Receipt {
  at: number;
  type: string;
  createdAt: string;
  txId: string;
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? null;
}

async function startReceiver(receipts: Receipt[]): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = Date.now();
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, string>;
        receipts.push({ at, type: event.type ?? "", createdAt: event.created_at ?? "", txId: event.tx_id ?? "" });
      } catch {
        // not an event: not counted
      }
      res.writeHead(200).end("ok");
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks` };
}

async function waitFor(done: () => boolean): Promise<boolean> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

export async function benchWebhooks(target: WebhookTarget): Promise<WebhookBenchResult> {
  const receipts: Receipt[] = [];
  const receiver = await startReceiver(receipts);
  try {
    const headers = { Authorization: `Bearer ${target.key}`, "Content-Type": "application/json" };
    const registered = await fetch(`${target.url}/v1/webhook_endpoints`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: receiver.url, enabled_events: ["*"] }),
    });
    if (registered.status !== 201) throw new Error(`registering the endpoint answered ${registered.status}`);

    // Lag at 100 events/s: 50 charges/s, each sent on its own schedule (not waiting for the previous).
    const charges: Promise<string | null>[] = [];
    const started = performance.now();
    const total = LAG_SECONDS * CHARGES_PER_SECOND;
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / CHARGES_PER_SECOND;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      charges.push(
        fetch(`${target.url}/v1/charges`, {
          method: "POST",
          headers,
          body: JSON.stringify(chargeBody(target.merchantId, target.tokenId)),
        }).then(
          async (res) => (res.status === 201 ? ((await res.json()) as { id: string }).id : null),
          () => null,
        ),
      );
    }
    const ids = (await Promise.all(charges)).filter((id): id is string => id !== null);
    const expected = new Set(ids);
    const lagEvents = () => receipts.filter((r) => expected.has(r.txId) && r.type.startsWith("payment."));
    await waitFor(() => lagEvents().length >= ids.length * 2);
    const lags = lagEvents()
      .map((r) => r.at - Date.parse(r.createdAt))
      .sort((a, b) => a - b);

    // Throughput: a burst written by the target itself.
    const bench = () => receipts.filter((r) => r.txId.startsWith("tx_bench"));
    const emitted = new Promise<void>((resolve) => {
      const onMessage = (message: EmittedMessage) => {
        if (message?.type !== "emitted") return;
        target.child.off("message", onMessage);
        resolve();
      };
      target.child.on("message", onMessage);
    });
    const asked = performance.now();
    const message: EmitEventsMessage = { type: "emit-events", count: THROUGHPUT_EVENTS, batch: 100 };
    target.child.send(message);
    await emitted;
    const complete = await waitFor(() => bench().length >= THROUGHPUT_EVENTS);
    const seconds = (performance.now() - asked) / 1000;
    const delivered = bench().length;

    const p99 = percentile(lags, 99);
    const rate = delivered / seconds;
    const result: WebhookBenchResult = {
      lag: {
        eventsPerSecond: CHARGES_PER_SECOND * 2,
        events: ids.length * 2,
        delivered: lags.length,
        p50Ms: percentile(lags, 50),
        p99Ms: p99,
        maxMs: lags.at(-1) ?? null,
        failedCharges: total - ids.length,
      },
      throughput: { events: THROUGHPUT_EVENTS, delivered, seconds, deliveriesPerSecond: rate },
      targets: [
        {
          target: `>= ${WEBHOOK_TARGETS.deliveriesPerSecond} deliveries/s to a loopback receiver`,
          value: rate,
          met: rate >= WEBHOOK_TARGETS.deliveriesPerSecond,
        },
        {
          target: `p99 lag <= ${WEBHOOK_TARGETS.p99LagMs} ms at ${CHARGES_PER_SECOND * 2} events/s`,
          value: p99,
          met: p99 !== null && p99 <= WEBHOOK_TARGETS.p99LagMs,
        },
      ],
      ok: complete && lags.length === ids.length * 2 && ids.length === total,
    };
    return result;
  } finally {
    receiver.server.closeAllConnections();
    receiver.server.close();
  }
}
