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
