import type { PaymentsClient } from "@payments/client";
import { unwrap } from "@payments/client";
import { describe, expect, it } from "vitest";
import { cardChargeBody, useServer } from "./fixtures.ts";

// Balance transactions (getBalanceTransaction, listBalanceTransactions; docs/money.md): one per posting
// that touches a merchant's balance, with the charge's fee, through the generated client (answers validated
// against the contract).

const list = async (client: PaymentsClient, query: Record<string, string | number>) => {
  const page = unwrap(await client.GET("/v1/balance_transactions", { params: { query } }));
  // The operation may also answer CSV (Accept: text/csv); without asking, it is the JSON list.
  if (typeof page === "string") throw new Error("a CSV answer without asking for it");
  return page;
};

/** A captured card charge of a fresh merchant. */
async function charge(client: PaymentsClient, amount: number) {
  const body = await cardChargeBody(client, amount);
  return unwrap(await client.POST("/v1/charges", { body }));
}

describe("balance transactions", () => {
  const { client } = useServer({ FEE_SCHEDULE: JSON.stringify({ card: { percent_bps: 290, fixed: { USD: 30 } } }) });

  it("a capture and a refund are two transactions of the merchant, newest first, with the fee and net", async () => {
    const captured = await charge(client, 10_000);
    const refund = unwrap(
      await client.POST("/v1/charges/{id}/refunds", {
        params: { path: { id: captured.id } },
        body: { amount: 2_500 },
      }),
    );
    const page = await list(client, { merchant_id: captured.merchant_id });
    expect(page.has_more).toBe(false);
    expect(page.data.map((t) => [t.type, t.amount, t.fee, t.net, t.source, t.status])).toEqual([
      ["refund", -2_500, 0, -2_500, refund.id, "available"],
      ["charge", 10_000, 320, 9_680, captured.id, "available"],
    ]);
    const [first] = page.data;
    expect(first).toMatchObject({
      object: "balance_transaction",
      merchant_id: captured.merchant_id,
      currency: "USD",
      livemode: false,
      cashout_id: null,
    });
    expect(first?.id).toMatch(/^txn_/);
    // What they add up to is the merchant's balance.
    const balance = unwrap(
      await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: captured.merchant_id } } }),
    );
    expect(page.data.reduce((sum, t) => sum + t.net, 0)).toBe(balance.balances[0]?.available);
    const got = unwrap(
      await client.GET("/v1/balance_transactions/{id}", { params: { path: { id: first?.id ?? "" } } }),
    );
    expect(got).toEqual(first);
  });

  it("filters by type, source and creation time, and pages with cursors", async () => {
    const captured = await charge(client, 5_000);
    for (const amount of [100, 200, 300]) {
      unwrap(
        await client.POST("/v1/charges/{id}/refunds", { params: { path: { id: captured.id } }, body: { amount } }),
      );
    }
    const merchant_id = captured.merchant_id;
    const all = (await list(client, { merchant_id })).data;
    expect(all.map((t) => t.net)).toEqual([-300, -200, -100, 5_000 - 175]);

    expect((await list(client, { merchant_id, type: "refund" })).data.map((t) => t.net)).toEqual([-300, -200, -100]);
    expect((await list(client, { type: "charge", source: captured.id })).data.map((t) => t.id)).toEqual([all[3]?.id]);
    // The creation window is half-open: [created_gte, created_lt).
    const window = await list(client, {
      merchant_id,
      created_gte: all[2]?.created_at ?? "",
      created_lt: all[0]?.created_at ?? "",
    });
    const expected = all.filter(
      (t) => t.created_at >= (all[2]?.created_at ?? "") && t.created_at < (all[0]?.created_at ?? ""),
    );
    expect(window.data.map((t) => t.id)).toEqual(expected.map((t) => t.id));
    expect(window.data.map((t) => t.id)).toContain(all[2]?.id);
    expect(window.data.map((t) => t.id)).not.toContain(all[0]?.id);
    expect((await list(client, { merchant_id, created_gte: "2099-01-01T00:00:00Z" })).data).toEqual([]);

    const first = await list(client, { merchant_id, limit: 2 });
    expect(first).toMatchObject({ has_more: true });
    const next = await list(client, { merchant_id, limit: 2, starting_after: first.data[1]?.id ?? "" });
    expect([...first.data, ...next.data].map((t) => t.id)).toEqual(all.map((t) => t.id));
    expect(next.has_more).toBe(false);
  });

  it("a cashout's balance transactions add up to its amount exactly (cashout_id filter, cashout.reconciled)", async () => {
    // Three charges of one merchant (fees 320, 175, 88), a partial refund, then two cashouts.
    const first = await charge(client, 10_000);
    const merchant_id = first.merchant_id;
    const token = unwrap(
      await client.POST("/v1/tokens", {
        body: { card: "4242424242424242", holder: "A", exp_month: 12, exp_year: 2031, cvc: "123" },
      }),
    );
    for (const amount of [5_000, 2_000]) {
      unwrap(
        await client.POST("/v1/charges", {
          body: { merchant_id, amount, currency: "USD", payment_method: { type: "card", token: token.id } },
        }),
      );
    }
    unwrap(
      await client.POST("/v1/charges/{id}/refunds", { params: { path: { id: first.id } }, body: { amount: 1_234 } }),
    );
    const destination = {
      type: "us_bank_account" as const,
      routing_number: "110000000",
      account_number: "000123456789",
      account_holder: "Acme",
    };
    const cashout = async (amount: number) =>
      unwrap(await client.POST("/v1/cashouts", { body: { merchant_id, amount, currency: "USD", destination } }));
    // Available: 9,680 + 4,825 + 1,912 − 1,234 = 15,183.
    const a = await cashout(12_000);
    const b = await cashout(3_183);
    for (const c of [a, b]) {
      const paid = (await list(client, { cashout_id: c.id, limit: 100 })).data;
      expect(paid.reduce((sum, t) => sum + t.net, 0)).toBe(c.amount);
      expect(paid.every((t) => t.cashout_id === c.id)).toBe(true);
    }
    // First in, first out: the first took the first charge and the second, which went past its amount and
    // was split (an adjustment of −2,505); the second took the split's rest (+2,505) and the third charge,
    // which went past its amount too (an adjustment of −1,234): the refund after it waits, with the
    // +1,234 left of the split: together 0, the available balance.
    const contents = async (cashoutId: string) =>
      (await list(client, { cashout_id: cashoutId })).data.map((t) => `${t.type} ${t.net}`).sort();
    expect(await contents(a.id)).toEqual(["adjustment -2505", "charge 4825", "charge 9680"]);
    expect(await contents(b.id)).toEqual(["adjustment -1234", "adjustment 2505", "charge 1912"]);
    const events = unwrap(await client.GET("/v1/events", { params: { query: { type: "cashout.reconciled" } } })).data;
    const reconciled = events.find((e) => "cashout_id" in e && e.cashout_id === a.id);
    expect(reconciled).toMatchObject({ amount: 12_000, balance_transaction_count: 3 });
    const waiting = (await list(client, { merchant_id, limit: 100 })).data.filter(
      (t) => t.type !== "cashout" && t.cashout_id === null,
    );
    expect(waiting.map((t) => `${t.type} ${t.net}`).sort()).toEqual(["adjustment 1234", "refund -1234"]);
  });

  it("an unknown id is a 404 naming it", async () => {
    const { error, response } = await client.GET("/v1/balance_transactions/{id}", {
      params: { path: { id: "txn_0000000000000000000000zz" } },
    });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ code: "not_found", param: "id" });
  });
});
