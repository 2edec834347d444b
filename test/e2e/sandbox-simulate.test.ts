import { Writable } from "node:stream";
import { unwrap } from "@payments/client";
import { createLogger } from "@payments/server";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.ts";
import { startTestServer } from "../support/server.ts";
import {
  cardChargeBody,
  cardPayment,
  clientFor,
  createMerchant,
  createPaymentLink,
  json,
  pageTokenOf,
  useServer,
} from "./fixtures.ts";

// Failure injection, sandbox only: the Sandbox-Simulate header of every POST
// (spec/common/sandbox-simulate.tsp; docs/testing-your-integration.md "Failure injection").

const simulate = (value: string, key = crypto.randomUUID()) => ({
  header: { "Idempotency-Key": key, "Sandbox-Simulate": value },
});

describe("Sandbox-Simulate", () => {
  const { server, client } = useServer();

  it("timeout_after_commit: the connection closes after the commit, and the retry with the same key replays it", async () => {
    const body = await cardChargeBody(client, 4_200);
    const key = crypto.randomUUID();
    await expect(client.POST("/v1/charges", { body, params: simulate("timeout_after_commit", key) })).rejects.toThrow();

    // The charge exists: the request committed before the connection was dropped.
    const listed = unwrap(await client.GET("/v1/charges", { params: { query: { merchant_id: body.merchant_id } } }));
    expect(listed.data).toHaveLength(1);
    const committed = listed.data[0];

    // The retry, with the same key (and the header again: a replay is answered), replays that charge.
    const retry = await client.POST("/v1/charges", { body, params: simulate("timeout_after_commit", key) });
    expect(retry.response.status).toBe(201);
    expect(retry.response.headers.get("idempotent-replayed")).toBe("true");
    expect(unwrap(retry).id).toBe(committed?.id);
    const after = unwrap(await client.GET("/v1/charges", { params: { query: { merchant_id: body.merchant_id } } }));
    expect(after.data).toHaveLength(1);
  });

  it("timeout_after_commit without an Idempotency-Key: the retry runs again (the reason to send one)", async () => {
    const res = await fetch(`${server.url}/v1/merchants`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.sandboxKey}`,
        "content-type": "application/json",
        "sandbox-simulate": "timeout_after_commit",
      },
      body: JSON.stringify({ name: "Dropped Answer Ltd" }),
    }).catch((err: unknown) => err);
    expect(res).toBeInstanceOf(Error);
    const all = unwrap(await client.GET("/v1/merchants", { params: { query: { limit: 100 } } }));
    expect(all.data.filter((m) => m.name === "Dropped Answer Ltd")).toHaveLength(1);
  });

  it("timeout_after_commit on an answer with a secret: the retry names the object it made (never replays a secret)", async () => {
    const key = crypto.randomUUID();
    const body = { name: "lost answer", scopes: ["merchants" as const] };
    await expect(
      client.POST("/v1/service_keys", { body, params: simulate("timeout_after_commit", key) }),
    ).rejects.toThrow();
    const retry = await client.POST("/v1/service_keys", { body, params: { header: { "Idempotency-Key": key } } });
    expect(retry.response.status).toBe(409);
    expect(retry.error).toMatchObject({ code: "idempotency_replay_unavailable", param: "Idempotency-Key" });
    expect(retry.error?.detail).toMatch(/kid_[0-9A-Za-z]+/);
  });

  it("timeout_after_commit on a refused request answers the refusal", async () => {
    const res = await client.POST("/v1/charges", {
      body: {
        merchant_id: "mch_000000000000000000000000",
        amount: 100,
        currency: "USD",
        payment_method: { type: "card", token: "tok_000000000000000000000000" },
      },
      params: simulate("timeout_after_commit"),
    });
    expect(res.response.status).toBe(404);
  });

  it("acquirer_error: the card charge is declined with processing_error", async () => {
    const body = await cardChargeBody(client, 1_500);
    const charge = unwrap(await client.POST("/v1/charges", { body, params: simulate("acquirer_error") }));
    expect(charge).toMatchObject({ status: "declined", failure_code: "processing_error" });
    // The same card without the header is approved: the failure was the header's.
    const again = unwrap(await client.POST("/v1/charges", { body }));
    expect(again.status).toBe("captured");
  });

  it("acquirer_error on a payment link's pay (public, no key): the payment is declined with processing_error", async () => {
    const link = await createPaymentLink(client);
    const res = await fetch(`${server.url}/v1/payment_links/${link.id}/pay`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        origin: server.url,
        "sec-fetch-site": "same-origin",
        "sandbox-simulate": "acquirer_error",
      },
      body: JSON.stringify({ page_token: await pageTokenOf(server, link.id), payment_method: cardPayment() }),
    });
    expect(res.status).toBe(201);
    expect(await json(res)).toMatchObject({ status: "declined", failure_code: "processing_error" });
  });

  it("acquirer_error on an operation that does not reach the acquirer: 400 naming the header", async () => {
    const res = await client.POST("/v1/merchants", {
      body: { name: "No Acquirer Here" },
      params: simulate("acquirer_error"),
    });
    expect(res.response.status).toBe(400);
    expect(res.error).toMatchObject({ code: "invalid_request", param: "Sandbox-Simulate" });
  });

  it("rate_limited: 429 with Retry-After, and nothing runs; the retry without the header does", async () => {
    const key = crypto.randomUUID();
    const refused = await client.POST("/v1/merchants", {
      body: { name: "Later Ltd" },
      params: simulate("rate_limited", key),
    });
    expect(refused.response.status).toBe(429);
    expect(refused.response.headers.get("retry-after")).toBe("1");
    expect(refused.error).toMatchObject({ code: "rate_limited" });
    const all = unwrap(await client.GET("/v1/merchants", { params: { query: { limit: 100 } } }));
    expect(all.data.filter((m) => m.name === "Later Ltd")).toHaveLength(0);
    const retry = await client.POST("/v1/merchants", {
      body: { name: "Later Ltd" },
      params: { header: { "Idempotency-Key": key } },
    });
    expect(retry.response.status).toBe(201);
    expect(retry.response.headers.get("idempotent-replayed")).toBeNull();
  });

  it("latency=<ms>: the request runs after the wait", async () => {
    const res = await client.POST("/v1/merchants", { body: { name: "Slow Ltd" }, params: simulate("latency=5") });
    expect(res.response.status).toBe(201);
  });

  it("refuses a value outside the contract's list (400 naming the header)", async () => {
    for (const value of ["timeout", "latency=0", "latency=10000", "rate_limited,acquirer_error"]) {
      const res = await fetch(`${server.url}/v1/merchants`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${server.sandboxKey}`,
          "content-type": "application/json",
          "sandbox-simulate": value,
        },
        body: JSON.stringify({ name: "Bad Header Ltd" }),
      });
      expect(res.status, value).toBe(400);
      expect(await res.json(), value).toMatchObject({ code: "invalid_request", param: "Sandbox-Simulate" });
    }
  });

  it("production refuses the header (400 naming it) and does nothing", async () => {
    const live = clientFor(server, await server.key(["*"], { live: true }));
    for (const value of ["timeout_after_commit", "acquirer_error", "rate_limited", "latency=5"]) {
      const res = await live.POST("/v1/merchants", { body: { name: "Live Simulated Ltd" }, params: simulate(value) });
      expect(res.response.status, value).toBe(400);
      expect(res.error, value).toMatchObject({ code: "invalid_request", param: "Sandbox-Simulate" });
    }
    const all = unwrap(await live.GET("/v1/merchants", { params: { query: { limit: 100 } } }));
    expect(all.data.filter((m) => m.name === "Live Simulated Ltd")).toHaveLength(0);
    // The same request without the header works in production.
    expect((await createMerchant(live, "Live Plain Ltd")).livemode).toBe(true);
  });
});

describe("Sandbox-Simulate in the server's log", () => {
  it("logs a dropped answer with its committed status and the mode that dropped it", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const server = await startTestServer({}, { logger: createLogger("info", stream) });
    try {
      const client = clientFor(server, server.sandboxKey);
      await expect(
        client.POST("/v1/merchants", { body: { name: "Logged Ltd" }, params: simulate("timeout_after_commit") }),
      ).rejects.toThrow();
      const logged = await eventually(
        "the request's log line",
        () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.path === "/v1/merchants"),
        (found) => found.length > 0,
      );
      expect(logged[0]).toMatchObject({
        msg: "request",
        method: "POST",
        status: 201,
        simulated: "timeout_after_commit",
      });
    } finally {
      await server.close();
    }
  });
});
