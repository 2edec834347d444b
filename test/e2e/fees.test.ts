import { unwrap } from "@payments/client";
import { describe, expect, it } from "vitest";
import { createCharge, useServer } from "./fixtures.ts";

// Fees through the API (docs/money.md "Fees"): a server with a fee schedule shows each charge's `fee` and
// `net`, credits the merchant the net, and keeps the fee when the charge is refunded. Responses are
// validated against the contract (Charge.fee, Charge.net).

describe("fees", () => {
  const { client } = useServer({ FEE_SCHEDULE: JSON.stringify({ card: { percent_bps: 290, fixed: { USD: 30 } } }) });

  it("a card capture of USD 100.00 pays 3.20: fee 320, net 9680, and the merchant's balance is the net", async () => {
    const authorized = await createCharge(client, { amount: 10_000, capture: false });
    expect(authorized).toMatchObject({ amount_captured: 0, fee: 0, net: 0 });
    const captured = unwrap(
      await client.POST("/v1/charges/{id}/capture", { params: { path: { id: authorized.id } }, body: {} }),
    );
    expect(captured).toMatchObject({ amount_captured: 10_000, fee: 320, net: 9_680 });
    const balance = unwrap(
      await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: authorized.merchant_id } } }),
    );
    expect(balance.balances).toEqual([{ currency: "USD", available: 9_680, pending: 0 }]);
  });

  it("a refund does not return the fee: refunding 5,000 of a 10,000 charge leaves 4,680", async () => {
    const charge = await createCharge(client, { amount: 10_000 });
    unwrap(
      await client.POST("/v1/charges/{id}/refunds", { params: { path: { id: charge.id } }, body: { amount: 5_000 } }),
    );
    const after = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: charge.id } } }));
    expect(after).toMatchObject({ amount_refunded: 5_000, fee: 320, net: 9_680 });
    const balance = unwrap(
      await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: charge.merchant_id } } }),
    );
    expect(balance.balances).toEqual([{ currency: "USD", available: 4_680, pending: 0 }]);
  });
});

describe("a merchant's fee override (setMerchantFeeSchedule, scope *)", () => {
  const { client } = useServer({ FEE_SCHEDULE: JSON.stringify({ card: { percent_bps: 290, fixed: { USD: 30 } } }) });
  const feesOf = async (id: string) =>
    unwrap(await client.GET("/v1/merchants/{id}/fee_schedule", { params: { path: { id } } }));

  it("applies to charges made afterwards only: a charge made before keeps its rate, even captured later", async () => {
    const before = await createCharge(client, { amount: 10_000, capture: false });
    const merchant = before.merchant_id;
    expect(await feesOf(merchant)).toMatchObject({
      override: null,
      effective: { card: { percent_bps: 290, fixed: { USD: 30 } } },
      updated_at: null,
    });
    const set = unwrap(
      await client.POST("/v1/merchants/{id}/fee_schedule", {
        params: { path: { id: merchant } },
        body: { override: { card: { percent_bps: 100 } } },
      }),
    );
    expect(set).toMatchObject({ override: { card: { percent_bps: 100, fixed: {} } }, effective: set.override });
    expect(set.updated_at).not.toBeNull();
    // Made before the change, captured after: the platform's rate (290 bps + 30).
    const captured = unwrap(
      await client.POST("/v1/charges/{id}/capture", { params: { path: { id: before.id } }, body: {} }),
    );
    expect(captured).toMatchObject({ fee: 320, net: 9_680 });
    // Made after: the override (100 bps, no fixed part).
    const token = unwrap(
      await client.POST("/v1/tokens", {
        body: { card: "4242424242424242", holder: "A", exp_month: 12, exp_year: 2031, cvc: "123" },
      }),
    );
    const after = unwrap(
      await client.POST("/v1/charges", {
        body: {
          merchant_id: merchant,
          amount: 10_000,
          currency: "USD",
          payment_method: { type: "card", token: token.id },
        },
      }),
    );
    expect(after).toMatchObject({ fee: 100, net: 9_900 });
    // Another merchant still pays the platform's schedule.
    expect(await createCharge(client, { amount: 10_000 })).toMatchObject({ fee: 320 });
    // Removed: the platform's schedule applies again to new charges.
    const removed = unwrap(
      await client.POST("/v1/merchants/{id}/fee_schedule", {
        params: { path: { id: merchant } },
        body: { override: null },
      }),
    );
    expect(removed).toMatchObject({ override: null, effective: { card: { percent_bps: 290, fixed: { USD: 30 } } } });
  });

  it("a fixed part in something other than a currency code is a 400 naming override", async () => {
    const merchant = (await createCharge(client, { amount: 100 })).merchant_id;
    const { error, response } = await client.POST("/v1/merchants/{id}/fee_schedule", {
      params: { path: { id: merchant } },
      body: { override: { card: { percent_bps: 100, fixed: { usd: 5 } } } },
    });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ code: "invalid_request", param: "override" });
  });
});
