import { unwrap } from "@payments/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { Receiver } from "../support/receiver.ts";
import { loopbackResolver } from "../support/server.ts";
import { clientFor, createCharge, useServer } from "./fixtures.ts";

// Webhook chaos (spec/resources/webhook-chaos.tsp; docs/testing-your-integration.md "Webhook chaos"):
// what a receiver on 127.0.0.1 sees from a sandbox endpoint whose deliveries misbehave on purpose, and
// production's refusal. One attempt at a time per endpoint (WEBHOOK_ENDPOINT_CONCURRENCY=1), so the
// order the receiver sees is the order the dispatcher sends in.

const receiver = new Receiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

const clock = new TestClock();
const { server, client } = useServer(
  { WEBHOOK_SANDBOX_RETRY_SCHEDULE: "60,60", WEBHOOK_POLL_INTERVAL_MS: "50", WEBHOOK_ENDPOINT_CONCURRENCY: "1" },
  { clock, webhooks: { resolve: loopbackResolver } },
);

const typeOf = (body: string) => (JSON.parse(body) as { type: string }).type;
const idOf = (body: string) => (JSON.parse(body) as { id: string }).id;

describe("webhook chaos", () => {
  it("duplicate and reorder: the receiver sees a charge's captured before its authorized, each twice", async () => {
    const endpoint = unwrap(
      await client.POST("/v1/webhook_endpoints", {
        body: {
          url: `${receiver.url}/both`,
          enabled_events: ["payment.authorized", "payment.captured"],
          chaos: { duplicate: true, reorder: true },
        },
      }),
    );
    expect(endpoint.chaos).toEqual({ duplicate: true, reorder: true, delay_seconds: 0, fail_first_attempts: 0 });
    await createCharge(client);
    const got = await receiver.waitFor("/both", 4);
    expect(got.map((r) => typeOf(r.body))).toEqual([
      "payment.captured",
      "payment.captured",
      "payment.authorized",
      "payment.authorized",
    ]);
    // A duplicate is the same delivery: the same event id, body and signature.
    expect(got[1]?.body).toBe(got[0]?.body);
    expect(got[1]?.headers["x-service-signature"]).toBe(got[0]?.headers["x-service-signature"]);
    expect(idOf(got[2]?.body ?? "{}")).not.toBe(idOf(got[0]?.body ?? "{}"));
    // The attempt log has one attempt per delivery: the copy is not an attempt.
    const deliveries = unwrap(
      await client.GET("/v1/webhook_endpoints/{id}/deliveries", { params: { path: { id: endpoint.id } } }),
    );
    expect(deliveries.data.map((d) => d.attempts.length)).toEqual([1, 1]);
  });

  it("fail_first_attempts and delay_seconds: the delivery comes late, on the sandbox clock", async () => {
    const endpoint = unwrap(
      await client.POST("/v1/webhook_endpoints", {
        body: {
          url: `${receiver.url}/late`,
          enabled_events: ["payment.captured"],
          chaos: { delay_seconds: 30, fail_first_attempts: 1 },
        },
      }),
    );
    await createCharge(client);
    const [pending] = await eventually(
      "the delivery is made",
      async () =>
        unwrap(await client.GET("/v1/webhook_endpoints/{id}/deliveries", { params: { path: { id: endpoint.id } } }))
          .data,
      (list) => list.length === 1,
    );
    expect(pending?.attempts).toHaveLength(0);
    clock.advance(30_000); // the delay: the first attempt fails unsent
    const [failed] = await eventually(
      "the first attempt is logged",
      async () =>
        unwrap(await client.GET("/v1/webhook_endpoints/{id}/deliveries", { params: { path: { id: endpoint.id } } }))
          .data,
      (list) => (list[0]?.attempts.length ?? 0) === 1,
    );
    expect(failed?.attempts[0]).toMatchObject({ succeeded: false, error: "connection_error" });
    expect(receiver.at("/late")).toHaveLength(0);
    // The sandbox schedule's first retry (60 s here, with its jitter), as the attempt log says.
    clock.advance(Date.parse(failed?.attempts[0]?.next_attempt_at ?? "") - clock.ms);
    const [got] = await receiver.waitFor("/late", 1);
    expect(got?.headers["x-service-delivery-attempt"]).toBe("2");
  });

  it("a production endpoint refuses chaos settings, naming chaos; null is accepted", async () => {
    const live = clientFor(server, await server.key(["*"], { live: true }));
    const refused = await live.POST("/v1/webhook_endpoints", {
      body: { url: "https://hooks.example.com/live", enabled_events: ["*"], chaos: { duplicate: true } },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error).toMatchObject({ code: "invalid_request", param: "chaos" });
    const made = unwrap(
      await live.POST("/v1/webhook_endpoints", {
        body: { url: "https://hooks.example.com/live", enabled_events: ["webhook_endpoint.test"], chaos: null },
      }),
    );
    expect(made.chaos).toBeNull();
    const patched = await live.PATCH("/v1/webhook_endpoints/{id}", {
      params: { path: { id: made.id } },
      body: { chaos: { fail_first_attempts: 3 } },
    });
    expect(patched.response.status).toBe(400);
    expect(patched.error).toMatchObject({ code: "invalid_request", param: "chaos" });
  });

  it("refuses settings outside their bounds (400 naming the field)", async () => {
    const res = await client.POST("/v1/webhook_endpoints", {
      body: { url: `${receiver.url}/bounds`, enabled_events: ["*"], chaos: { fail_first_attempts: 11 } },
    });
    expect(res.response.status).toBe(400);
    expect(JSON.stringify(res.error)).toContain("chaos");
  });
});
