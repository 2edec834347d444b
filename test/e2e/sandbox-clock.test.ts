import { type PaymentsClient, unwrap } from "@payments/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.ts";
import { Receiver } from "../support/receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { clientFor, createMerchant, createToken, VISA } from "./fixtures.ts";

// The sandbox clock end to end (spec/resources/sandbox-clock.tsp): advancing it by two days settles a
// charge's balance, expires an unpaid boleto with its event and runs a webhook retry that came due, and
// answers with what ran; production refuses both clock operations. The background jobs run hourly here
// and sandbox retries wait an hour, so only the advance can make any of it happen within the test.

const DAY = 86_400;

let server: TestServer;
let client: PaymentsClient;
const receiver = new Receiver();

beforeAll(async () => {
  await receiver.start();
  server = await startTestServer({
    SANDBOX_SETTLEMENT_DELAY_SECONDS: String(2 * DAY),
    JOBS_INTERVAL_SECONDS: "3600",
    WEBHOOK_SANDBOX_RETRY_SCHEDULE: "3600,3600",
    WEBHOOK_POLL_INTERVAL_MS: "100",
  });
  client = clientFor(server, server.sandboxKey);
});
afterAll(async () => {
  await server.close();
  await receiver.stop();
});

describe("advancing the sandbox clock", () => {
  it("by two days settles a capture, expires an unpaid boleto (payment.expired) and runs a due webhook retry", async () => {
    const merchant = await createMerchant(client, "Clockwork Coffee");
    // A boleto runs for three days: made a day before the two-day advance, it runs out during it.
    const boleto = unwrap(
      await client.POST("/v1/charges", {
        body: { merchant_id: merchant.id, amount: 5000, currency: "BRL", payment_method: { type: "boleto" } },
      }),
    );
    expect(boleto.status).toBe("pending");
    const dayOne = unwrap(await client.POST("/v1/sandbox/clock/advance", { body: { seconds: DAY } }));
    expect(dayOne.ran.charges_expired).toBe(0);

    // The receiver refuses the first delivery to it; its retry waits an hour on the sandbox clock.
    receiver.answers.set("/clock", (n) => (n === 1 ? [503, "not yet"] : [200, "ok"]));
    const endpoint = unwrap(
      await client.POST("/v1/webhook_endpoints", {
        body: { url: `${receiver.url}/clock`, enabled_events: ["payment.captured", "payment.expired"] },
      }),
    );
    const token = await createToken(client);
    const charge = unwrap(
      await client.POST("/v1/charges", {
        body: {
          merchant_id: merchant.id,
          amount: 2500,
          currency: "USD",
          payment_method: { type: "card", token: token.id },
        },
      }),
    );
    expect(charge.status).toBe("captured");
    const pendingBalance = unwrap(
      await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } }),
    );
    expect(pendingBalance.balances).toContainEqual({ currency: "USD", available: 0, pending: 2500 });
    const [failed] = await eventually(
      "the first attempt to fail",
      async () =>
        unwrap(await client.GET("/v1/webhook_endpoints/{id}/deliveries", { params: { path: { id: endpoint.id } } }))
          .data,
      (deliveries) => deliveries[0]?.attempt_count === 1,
    );
    expect(failed).toMatchObject({ status: "pending", attempts: [{ status_code: 503 }] });

    const advanced = unwrap(await client.POST("/v1/sandbox/clock/advance", { body: { seconds: 2 * DAY } }));
    expect(advanced.ran).toMatchObject({ balances_settled: 1, charges_expired: 1, reviews_expired: 0 });
    // The retry of payment.captured, and the first attempt of payment.expired.
    expect(advanced.ran.webhook_attempts).toBe(2);
    expect(Date.parse(advanced.clock.now) - Date.parse(advanced.from)).toBeGreaterThanOrEqual(2 * DAY * 1000);
    // Three days ahead, less the moments the server's own clock ran while the advance worked.
    expect(advanced.clock.offset_seconds).toBeGreaterThan(3 * DAY - 60);

    const balance = unwrap(await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } }));
    expect(balance.balances).toContainEqual({ currency: "USD", available: 2500, pending: 0 });
    const expired = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: boleto.id } } }));
    expect(expired.status).toBe("expired");
    const events = unwrap(await client.GET("/v1/events", { params: { query: { type: "payment.expired" } } }));
    expect(events.data).toHaveLength(1);
    expect(events.data[0]).toMatchObject({ type: "payment.expired", tx_id: boleto.id });
    // It expired at its own time on the way, three days after it was made.
    expect(Date.parse(events.data[0]?.created_at ?? "") - Date.parse(boleto.created_at)).toBeGreaterThanOrEqual(
      3 * DAY * 1000,
    );

    const received = receiver
      .at("/clock")
      .map((r) => [r.headers["x-service-event-id"], r.headers["x-service-delivery-attempt"]]);
    expect(received).toHaveLength(3);
    const captured = unwrap(
      await client.GET("/v1/webhook_endpoints/{id}/deliveries", { params: { path: { id: endpoint.id } } }),
    );
    expect(captured.data.map((d) => [d.event_type, d.status, d.attempt_count]).sort()).toEqual([
      ["payment.captured", "succeeded", 2],
      ["payment.expired", "succeeded", 1],
    ]);

    // What is made afterwards carries the advanced time.
    const later = await createMerchant(client, "Made later");
    expect(Date.parse(later.created_at)).toBeGreaterThanOrEqual(Date.parse(advanced.clock.now));
    const clock = unwrap(await client.GET("/v1/sandbox/clock"));
    expect(clock.offset_seconds).toBe(advanced.clock.offset_seconds);
  });

  it("is refused in production: both clock operations answer 404, and production's time does not move", async () => {
    const live = clientFor(server, await server.key(["*"], { live: true }));
    const read = await live.GET("/v1/sandbox/clock");
    expect(read.response.status).toBe(404);
    expect(read.error).toMatchObject({ code: "not_found" });
    const advance = await live.POST("/v1/sandbox/clock/advance", { body: { seconds: 60 } });
    expect(advance.response.status).toBe(404);
    const made = await createMerchant(live, "Live merchant");
    expect(Math.abs(Date.parse(made.created_at) - Date.now())).toBeLessThan(60_000);
  });

  it("refuses a move backwards and a request without exactly one of seconds and to (400)", async () => {
    const back = await client.POST("/v1/sandbox/clock/advance", { body: { to: "2020-01-01T00:00:00Z" } });
    expect(back.response.status).toBe(400);
    expect(back.error).toMatchObject({ code: "invalid_request", param: "to" });
    const neither = await client.POST("/v1/sandbox/clock/advance", { body: {} });
    expect(neither.response.status).toBe(400);
  });
});

describe("resetting the sandbox clock", () => {
  it("near the bound: back to the server's time; what was made ten years ahead is kept, and its card still pays", async () => {
    const live = clientFor(server, await server.key(["*"], { live: true }));
    expect((await live.POST("/v1/sandbox/clock/reset", {})).response.status).toBe(404);
    // Ahead as far as whole years of advances go (the next one is refused: at most 3660 days in all).
    let refused = 0;
    for (let i = 0; i < 12 && refused === 0; i++) {
      const step = await client.POST("/v1/sandbox/clock/advance", { body: { seconds: 366 * DAY } });
      if (step.response.status === 400) refused = i;
    }
    expect(refused).toBeGreaterThan(0);
    const ahead = unwrap(await client.GET("/v1/sandbox/clock"));
    expect(ahead.offset_seconds).toBeGreaterThan(3294 * DAY);
    const merchant = await createMerchant(client, "Ten years on");
    const token = unwrap(
      await client.POST("/v1/tokens", {
        body: { card: VISA, holder: "Ada Lovelace", exp_month: 12, exp_year: 2045, cvc: "123" },
      }),
    );
    const pay = { type: "card" as const, token: token.id };
    const before = unwrap(
      await client.POST("/v1/charges", {
        body: { merchant_id: merchant.id, amount: 2500, currency: "USD", payment_method: pay },
      }),
    );

    const reset = unwrap(await client.POST("/v1/sandbox/clock/reset", {}));
    expect(reset.offset_seconds).toBe(0);
    expect(Math.abs(Date.parse(reset.now) - Date.now())).toBeLessThan(60_000);
    expect(unwrap(await client.GET("/v1/sandbox/clock")).offset_seconds).toBe(0);

    // Kept as it was (the client validates every answer against the contract: RFC 3339 timestamps).
    const kept = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: before.id } } }));
    expect(kept.created_at).toBe(before.created_at);
    const after = unwrap(
      await client.POST("/v1/charges", {
        body: { merchant_id: merchant.id, amount: 1000, currency: "USD", payment_method: pay },
      }),
    );
    expect(after.status).toBe("captured");
    expect(Math.abs(Date.parse(after.created_at) - Date.now())).toBeLessThan(60_000);
    const listed = unwrap(await client.GET("/v1/charges", { params: { query: { limit: 10 } } }));
    expect(listed.data.map((c) => c.id)).toEqual(expect.arrayContaining([before.id, after.id]));
  });
});
