import { type PaymentsClient, unwrap } from "@payments/client";
import type { NotificationItem } from "@payments/server/adyen";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMerchant, createToken, freshCardNumber } from "../e2e/fixtures.ts";
import { signedItem, startNotifiedServer, testRequest } from "../support/adyen-notifications.ts";
import { deliverNotifications } from "../support/adyen-stand-in/stand-in.ts";
import type { TestServer } from "../support/server.ts";

// Money Adyen reverses after the fact (docs/going-live-with-adyen.md "Money reversed after the fact") on a
// real server, through its notification endpoint (receiveAdyenNotifications) and the typed client:
// REFUND_FAILED, CAPTURE_FAILED, PAIDOUT_REVERSED and a chargeback decided twice (CHARGEBACK,
// CHARGEBACK_REVERSED, SECOND_CHARGEBACK), every item delivered twice and the whole shuffled, under three
// seeds. Each is applied exactly once whatever the order: the objects' statuses through the API (the
// client validates the answers against the contract), each event once, the balance what the four
// reversals add up to, and the ledger verifies clean.

let server: TestServer;
let client: PaymentsClient;
let endpoint: string;

beforeAll(async () => {
  ({ server, client, endpoint } = await startNotifiedServer());
});

afterAll(async () => {
  await server?.close();
});

const request = (item: NotificationItem) => testRequest(item);

async function cardCharge(merchantId: string, amount: number) {
  const token = await createToken(client, freshCardNumber());
  return unwrap(
    await client.POST("/v1/charges", {
      body: { merchant_id: merchantId, amount, currency: "USD", payment_method: { type: "card", token: token.id } },
    }),
  );
}

async function available(merchantId: string): Promise<number> {
  const balance = unwrap(await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchantId } } }));
  return balance.balances.find((b) => b.currency === "USD")?.available ?? 0;
}

async function eventsOf(type: "payment.refund_failed" | "payment.failed" | "cashout.failed" | "dispute.closed") {
  return unwrap(await client.GET("/v1/events", { params: { query: { type, limit: 100 } } })).data;
}

describe("money reversed after the fact, each notification delivered twice, shuffled", () => {
  it.each([1, 2, 3])(
    "applies each reversal exactly once (seed %i)",
    async (seed) => {
      const merchant = await createMerchant(client);
      const refunded = await cardCharge(merchant.id, 8000);
      const refund = unwrap(
        await client.POST("/v1/charges/{id}/refunds", {
          params: { path: { id: refunded.id } },
          body: { amount: 3000 },
        }),
      );
      const uncaptured = await cardCharge(merchant.id, 4000);
      const disputed = await cardCharge(merchant.id, 6000);
      const cashout = unwrap(
        await client.POST("/v1/cashouts", {
          body: {
            merchant_id: merchant.id,
            amount: 1000,
            currency: "USD",
            destination: {
              type: "us_bank_account",
              routing_number: "110000000",
              account_number: "000123456789",
              account_holder: "Acme Coffee Roasters Inc.",
            },
          },
        }),
      );
      const paid = unwrap(await client.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id: cashout.id } } }));
      expect(paid.status).toBe("paid");
      const before = await available(merchant.id);
      const credits = unwrap(
        await client.GET("/v1/balance_transactions", {
          params: { query: { merchant_id: merchant.id, source: uncaptured.id, type: "charge" } },
        }),
      );
      const uncapturedCredit = typeof credits === "string" ? undefined : credits.data[0];

      const dispute = {
        pspReference: `DSP${seed}${disputed.id.slice(3, 15)}`,
        originalReference: `PAY${seed}${disputed.id.slice(3, 15)}`,
        merchantReference: disputed.id,
        amount: { value: 6000, currency: "USD" },
      };
      const items = [
        signedItem({ eventCode: "REFUND_FAILED", merchantReference: refund.id, reason: "Account closed" }),
        signedItem({
          eventCode: "CAPTURE_FAILED",
          merchantReference: uncaptured.id,
          amount: { value: 4000, currency: "USD" },
        }),
        signedItem({ eventCode: "CHARGEBACK", ...dispute }),
        signedItem({ eventCode: "CHARGEBACK_REVERSED", ...dispute }),
        signedItem({ eventCode: "SECOND_CHARGEBACK", ...dispute }),
        signedItem({ eventCode: "PAIDOUT_REVERSED", merchantReference: cashout.id, reason: "Account closed" }),
      ];
      const answers = await deliverNotifications(endpoint, items.map(request), { times: 2, seed });
      expect(answers.filter((a) => a.status !== 200 || a.text !== "[accepted]")).toEqual([]);
      expect(await server.running.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(0);

      const refunds = unwrap(
        await client.GET("/v1/charges/{id}/refunds", { params: { path: { id: refunded.id } } }),
      ).data;
      expect(refunds.map((r) => r.status)).toEqual(["failed"]);
      expect(unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: refunded.id } } }))).toMatchObject({
        status: "captured",
        amount_refunded: 0,
      });
      expect(unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: uncaptured.id } } }))).toMatchObject({
        status: "declined",
        amount_captured: 0,
        failure_code: "capture_failed",
      });
      const disputes = unwrap(await client.GET("/v1/disputes", { params: { query: { charge_id: disputed.id } } })).data;
      expect(disputes.map((d) => d.status)).toEqual(["lost"]);
      const lost = disputes[0] ?? { fee: Number.NaN };
      expect(unwrap(await client.GET("/v1/cashouts/{id}", { params: { path: { id: cashout.id } } }))).toMatchObject({
        status: "failed",
        failure_code: "account_closed",
      });

      // Each event once for these objects.
      const mine = (events: object[]) => events.filter((e) => "merchant_id" in e && e.merchant_id === merchant.id);
      expect(mine(await eventsOf("payment.refund_failed"))).toHaveLength(1);
      expect(mine(await eventsOf("payment.failed"))).toHaveLength(1);
      expect(mine(await eventsOf("cashout.failed"))).toHaveLength(1);
      // The refund's 3000 and the cashout's 1000 come back; the failed capture's credit and the lost
      // chargeback (its amount and fee) go.
      expect(await available(merchant.id)).toBe(before + 3000 + 1000 - (uncapturedCredit?.net ?? 0) - 6000 - lost.fee);
      expect((await server.running.domain.ledger.verify()).differences).toEqual([]);
    },
    120_000,
  );
});
