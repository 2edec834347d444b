import { describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import {
  cardChargeBody,
  clientFor,
  createCharge,
  createMerchant,
  createToken,
  eventTypesOf,
  useServer,
} from "./fixtures.ts";

// Charges, captures, voids, refunds, balances and the events they leave, through the generated client against
// the real server (response validation on).

describe("card charges", () => {
  const { client } = useServer();

  const balanceOf = async (merchantId: string) =>
    (await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchantId } } })).data?.balances;

  const eventsOf = (txId: string) => eventTypesOf(client, txId);

  it("charges and captures at once (201), credits the balance, and records authorized + captured", async () => {
    const body = await cardChargeBody(client, 2500);
    const { data, response } = await client.POST("/v1/charges", {
      body: {
        ...body,
        description: "Order 1",
        metadata: { order: "1" },
        customer: { email: "a@example.com", country: "GB" },
      },
    });
    expect(response.status).toBe(201);
    expect(data?.id).toMatch(/^tx_[0-9A-Za-z]{24}$/);
    expect(data).toMatchObject({
      object: "charge",
      status: "captured",
      amount: 2500,
      amount_captured: 2500,
      amount_refunded: 0,
      currency: "USD",
      payment_method: { type: "card", brand: "visa", last4: "4242", token: body.payment_method.token },
      failure_code: null,
      next_action: null,
    });
    expect(await balanceOf(body.merchant_id)).toEqual([{ currency: "USD", available: 2500, pending: 0 }]);
    // Every charge is evaluated for fraud first (docs/fraud.md 'Fraud evaluation'); that evaluation is its event too.
    expect((await eventsOf(data?.id ?? "")).sort()).toEqual([
      "fraud.evaluated",
      "payment.authorized",
      "payment.captured",
    ]);
  });

  it("authorizes only, captures part once, and refuses a second capture", async () => {
    const charge = await createCharge(client, { amount: 5000, capture: false });
    expect(charge.status).toBe("authorized");
    const path = { id: charge.id };
    const tooMuch = await client.POST("/v1/charges/{id}/capture", { params: { path }, body: { amount: 5001 } });
    expect(tooMuch.response.status).toBe(400);
    expect(tooMuch.error?.param).toBe("amount");
    const captured = await client.POST("/v1/charges/{id}/capture", { params: { path }, body: { amount: 3000 } });
    expect(captured.data).toMatchObject({ status: "captured", amount: 5000, amount_captured: 3000 });
    expect(await balanceOf(charge.merchant_id)).toEqual([{ currency: "USD", available: 3000, pending: 0 }]);
    const again = await client.POST("/v1/charges/{id}/capture", { params: { path }, body: {} });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: "invalid_state_transition" });
    expect(again.error?.detail).toContain("captured once");
    const voided = await client.POST("/v1/charges/{id}/void", { params: { path } });
    expect(voided.response.status).toBe(409);
    expect(voided.error?.detail).toContain("refund it instead");
  });

  it("voids an authorized charge, which then cannot be captured or refunded", async () => {
    const charge = await createCharge(client, { capture: false });
    const path = { id: charge.id };
    const voided = await client.POST("/v1/charges/{id}/void", { params: { path } });
    expect(voided.data?.status).toBe("voided");
    expect((await client.POST("/v1/charges/{id}/capture", { params: { path }, body: {} })).response.status).toBe(409);
    expect((await client.POST("/v1/charges/{id}/refunds", { params: { path }, body: {} })).response.status).toBe(409);
    expect(await eventsOf(charge.id)).toContain("payment.voided");
    expect(await balanceOf(charge.merchant_id)).toEqual([]);
  });

  it.each([
    ["4000000000000002", "card_declined"],
    ["4000000000009995", "insufficient_funds"],
    ["4000000000000069", "expired_card"],
  ])("declines test card %s with %s (201, status declined, payment.failed)", async (card, failureCode) => {
    const charge = await createCharge(client, { card });
    expect(charge).toMatchObject({ status: "declined", failure_code: failureCode, amount_captured: 0 });
    expect(charge.failure_message).toBeTruthy();
    expect(await eventsOf(charge.id)).toEqual(["payment.failed", "fraud.evaluated"]);
    const capture = await client.POST("/v1/charges/{id}/capture", { params: { path: { id: charge.id } }, body: {} });
    expect(capture.response.status).toBe(409);
    expect(await balanceOf(charge.merchant_id)).toEqual([]);
  });

  it("refunds in parts, never past the captured amount, and lists the refunds", async () => {
    const charge = await createCharge(client, { amount: 1000 });
    const path = { id: charge.id };
    const first = await client.POST("/v1/charges/{id}/refunds", {
      params: { path },
      body: { amount: 300, reason: "requested_by_customer" },
    });
    expect(first.response.status).toBe(201);
    expect(first.data).toMatchObject({ object: "refund", charge_id: charge.id, amount: 300, status: "succeeded" });
    expect(first.data?.id).toMatch(/^re_/);
    const over = await client.POST("/v1/charges/{id}/refunds", { params: { path }, body: { amount: 701 } });
    expect(over.response.status).toBe(409);
    expect(over.error?.param).toBe("amount");
    const rest = await client.POST("/v1/charges/{id}/refunds", { params: { path }, body: {} });
    expect(rest.data?.amount).toBe(700);
    const after = await client.GET("/v1/charges/{id}", { params: { path } });
    expect(after.data).toMatchObject({ status: "refunded", amount_refunded: 1000 });
    const none = await client.POST("/v1/charges/{id}/refunds", { params: { path }, body: { amount: 1 } });
    expect(none.response.status).toBe(409);
    const listed = await client.GET("/v1/charges/{id}/refunds", { params: { path } });
    expect(listed.data?.data.map((r) => r.amount)).toEqual([700, 300]);
    expect(await balanceOf(charge.merchant_id)).toEqual([{ currency: "USD", available: 0, pending: 0 }]);
    expect((await eventsOf(charge.id)).filter((t) => t === "payment.refunded")).toHaveLength(2);
  });

  it("100 concurrent refunds of 500 on a captured 10,000: exactly 20 succeed, none 5xx", async () => {
    const charge = await createCharge(client, { amount: 10_000 });
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        client.POST("/v1/charges/{id}/refunds", { params: { path: { id: charge.id } }, body: { amount: 500 } }),
      ),
    );
    const statuses = results.map((r) => r.response.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const after = await client.GET("/v1/charges/{id}", { params: { path: { id: charge.id } } });
    expect(after.data).toMatchObject({ status: "refunded", amount_refunded: 10_000 });
    expect(await balanceOf(charge.merchant_id)).toEqual([{ currency: "USD", available: 0, pending: 0 }]);
    const refunds = await client.GET("/v1/charges/{id}/refunds", {
      params: { path: { id: charge.id }, query: { limit: 100 } },
    });
    expect(refunds.data?.data).toHaveLength(20);
  });

  it("refuses charges for merchants that are not active, and unknown merchants or tokens", async () => {
    const body = await cardChargeBody(client);
    await client.PATCH("/v1/merchants/{id}", {
      params: { path: { id: body.merchant_id } },
      body: { status: "suspended" },
    });
    const suspended = await client.POST("/v1/charges", { body });
    expect(suspended.response.status).toBe(409);
    expect(suspended.error).toMatchObject({ code: "merchant_inactive", param: "merchant_id" });

    const unknownMerchant = await client.POST("/v1/charges", {
      body: { ...body, merchant_id: "mch_000000000000000000000000" },
    });
    expect(unknownMerchant.response.status).toBe(404);
    expect(unknownMerchant.error?.param).toBe("merchant_id");
    const active = await createMerchant(client);
    const unknownToken = await client.POST("/v1/charges", {
      body: {
        ...body,
        merchant_id: active.id,
        payment_method: { type: "card", token: "tok_000000000000000000000000" },
      },
    });
    expect(unknownToken.response.status).toBe(404);
    expect(unknownToken.error?.param).toBe("payment_method.token");
  });

  it("validates money: positive integers, supported ISO 4217 codes, a per-currency maximum", async () => {
    const body = await cardChargeBody(client);
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: 0 }, "amount"],
      [{ amount: -5 }, "amount"],
      [{ amount: 12.5 }, "amount"],
      [{ amount: "100" }, "amount"],
      [{ currency: "usd" }, "currency"],
      [{ currency: "ABC" }, "currency"],
      [{ currency: "SEK" }, "currency"], // real, but not in SUPPORTED_CURRENCIES
      [{ amount: 99_999_901 }, "amount"], // USD: 999,999.00 is the default maximum
      [{ amount: 1_000_000, currency: "JPY" }, "amount"], // JPY has no minor unit: 999,999 is the maximum
    ];
    for (const [patch, param] of cases) {
      const res = await client.POST("/v1/charges", { body: { ...body, ...patch } as never });
      expect(res.response.status, JSON.stringify(patch)).toBe(400);
      expect(res.error?.param, JSON.stringify(res.error)).toBe(param);
    }
  });

  it("handles currencies with 0, 2 and 3 decimals in minor units", async () => {
    for (const [currency, amount] of [
      ["JPY", 999_999],
      ["USD", 99_999_900],
      ["KWD", 999_999_000],
      ["KWD", 1_250],
    ] as const) {
      const charge = await createCharge(client, { currency, amount });
      expect(charge).toMatchObject({ status: "captured", currency, amount, amount_captured: amount });
      expect(await balanceOf(charge.merchant_id)).toEqual([{ currency, available: amount, pending: 0 }]);
    }
  });

  it("lists charges by merchant and status", async () => {
    const merchant = await createMerchant(client);
    const token = await createToken(client);
    const make = (capture: boolean) =>
      client.POST("/v1/charges", {
        body: {
          merchant_id: merchant.id,
          amount: 700,
          currency: "EUR",
          payment_method: { type: "card", token: token.id },
          capture,
        },
      });
    const a = (await make(true)).data;
    const b = (await make(false)).data;
    const mine = await client.GET("/v1/charges", { params: { query: { merchant_id: merchant.id } } });
    expect(mine.data?.data.map((c) => c.id)).toEqual([b?.id, a?.id]);
    const authorized = await client.GET("/v1/charges", {
      params: { query: { merchant_id: merchant.id, status: "authorized" } },
    });
    expect(authorized.data?.data.map((c) => c.id)).toEqual([b?.id]);
    const events = await client.GET("/v1/events", { params: { query: { type: "payment.authorized", limit: 100 } } });
    expect(events.data?.data.every((e) => e.type === "payment.authorized")).toBe(true);
    expect(events.data?.data.some((e) => "tx_id" in e && e.tx_id === b?.id)).toBe(true);
  });
});

describe("production settlement", () => {
  const clock = new TestClock();
  // The settlement job runs only when the test calls it.
  const { server } = useServer({ SETTLEMENT_DELAY_SECONDS: "60", JOBS_INTERVAL_SECONDS: "3600" }, { clock });

  it("keeps live captures pending until the settlement delay passes; refunds draw on the charge's pending credit first", async () => {
    const live = clientFor(server, await server.key(["*"], { live: true }));
    const charge = await createCharge(live, { amount: 4000 });
    expect(charge.livemode).toBe(true);
    const balance = async () =>
      (await live.GET("/v1/merchants/{id}/balance", { params: { path: { id: charge.merchant_id } } })).data?.balances;
    expect(await balance()).toEqual([{ currency: "USD", available: 0, pending: 4000 }]);

    // A same-day refund: taken from the charge's own capture, still pending.
    const early = await live.POST("/v1/charges/{id}/refunds", {
      params: { path: { id: charge.id } },
      body: { amount: 100 },
    });
    expect(early.response.status).toBe(201);
    expect(await balance()).toEqual([{ currency: "USD", available: 0, pending: 3900 }]);

    clock.advance(59_999);
    expect(await server.running.domain.jobs.settle()).toBe(0); // not yet due
    clock.advance(1);
    expect(await server.running.domain.jobs.settle()).toBe(1);
    expect(await server.running.domain.jobs.settle()).toBe(0); // each credit settles once
    // Settlement moves what is left of the credit, never the refunded part.
    expect(await balance()).toEqual([{ currency: "USD", available: 3900, pending: 0 }]);
    const refund = await live.POST("/v1/charges/{id}/refunds", {
      params: { path: { id: charge.id } },
      body: { amount: 100 },
    });
    expect(refund.response.status).toBe(201);
    expect(await balance()).toEqual([{ currency: "USD", available: 3800, pending: 0 }]);
  });
});
