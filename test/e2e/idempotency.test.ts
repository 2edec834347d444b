import { idempotencyRecordId } from "@payments/server";
import { beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { json, storedIdempotencyRecord, useServer } from "./fixtures.ts";

// Idempotency-Key on every POST (IdempotencyKeyHeader; docs/api.md 'Conventions', Idempotency).

describe("idempotency", () => {
  const clock = new TestClock();
  const { server, client } = useServer({}, { clock });
  let auth: Record<string, string>;
  beforeAll(() => {
    auth = { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json" };
  });

  const post = (key: string, body: unknown, headers = auth) =>
    fetch(`${server.url}/v1/merchants`, {
      method: "POST",
      headers: { ...headers, "idempotency-key": key },
      body: JSON.stringify(body),
    });

  it("replays the first response byte for byte, marked Idempotent-Replayed", async () => {
    const first = await post("k-replay", { name: "Once" });
    const firstText = await first.text();
    const second = await post("k-replay", { name: "Once" });
    expect(second.status).toBe(201);
    expect(await second.text()).toBe(firstText);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(second.headers.get("request-id")).not.toBe(first.headers.get("request-id"));
    const all = await client.GET("/v1/merchants", { params: { query: { limit: 100 } } });
    expect(all.data?.data.filter((m) => m.name === "Once")).toHaveLength(1);
  });

  it("refuses the same key with another body (422) or another endpoint", async () => {
    await post("k-reuse", { name: "A" });
    const other = await post("k-reuse", { name: "B" });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: "idempotency_key_reused", param: "Idempotency-Key" });
    const elsewhere = await fetch(`${server.url}/v1/service_keys`, {
      method: "POST",
      headers: { ...auth, "idempotency-key": "k-reuse" },
      body: JSON.stringify({ name: "x", scopes: ["fraud"] }),
    });
    expect(elsewhere.status).toBe(422);
  });

  it("makes concurrent identical requests create one object, never a 5xx", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => post("k-concurrent", { name: "Racer" })));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    const ids = new Set(
      await Promise.all(results.filter((r) => r.status === 201).map(async (r) => (await json(r)).id)),
    );
    expect(ids.size).toBe(1);
    const all = await client.GET("/v1/merchants", { params: { query: { limit: 100 } } });
    expect(all.data?.data.filter((m) => m.name === "Racer")).toHaveLength(1);
  });

  it("answers 409 while the first request with the key is still in flight, and takes over a dead one", async () => {
    // Freeze a finished record back into its in-flight state, as if its instance were still working on it.
    expect((await post("k-inflight", { name: "Slow" })).status).toBe(201);
    const id = idempotencyRecordId(false, "k-inflight");
    await server.running.store.update("idempotency", id, {
      set: {
        state: "in_flight",
        locked_until: new Date(clock.ms + 60_000).toISOString(),
        status: null,
        body: null,
      },
    });
    const busy = await post("k-inflight", { name: "Slow" });
    expect(busy.status).toBe(409);
    expect(await busy.json()).toMatchObject({ code: "idempotency_request_in_progress" });

    // Its lock runs out (the instance died): a retry runs the request again and owns the key.
    clock.advance(60_001);
    const retried = await post("k-inflight", { name: "Slow" });
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect((await storedIdempotencyRecord(server, "k-inflight"))?.state).toBe("done");
  });

  it("scopes keys to the environment", async () => {
    const live = await server.key(["*"], { live: true });
    const a = await post("k-env", { name: "Sandbox shop" });
    const b = await post("k-env", { name: "Live shop" }, { ...auth, authorization: `Bearer ${live}` });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect((await json(b)).livemode).toBe(true);
  });

  it("does not store requests that failed validation, and stores domain refusals", async () => {
    const invalid = await post("k-invalid", { name: "" });
    expect(invalid.status).toBe(400);
    const fixed = await post("k-invalid", { name: "Fixed" });
    expect(fixed.status).toBe(201);

    // A refusal the use case makes (a charge for a merchant that does not exist: 404), not the validator.
    const charge = (key: string) =>
      fetch(`${server.url}/v1/charges`, {
        method: "POST",
        headers: { ...auth, "idempotency-key": key },
        body: JSON.stringify({
          merchant_id: "mch_4fQx9ZkT2mB7rLp1WcYd8sNa",
          amount: 1000,
          currency: "BRL",
          payment_method: { type: "pix" },
        }),
      });
    const refused = await charge("k-refused");
    expect(refused.status).toBe(404);
    const replay = await charge("k-refused");
    expect(replay.status).toBe(404);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });

  it("rejects keys longer than 255 characters", async () => {
    const res = await post("k".repeat(256), { name: "x" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ param: "Idempotency-Key" });
  });
});
