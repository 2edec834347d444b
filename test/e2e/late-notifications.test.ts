import { unwrap } from "@payments/client";
import { describe, expect, it } from "vitest";
import {
  controlAt,
  deliverNotifications,
  type NotificationRequestBody,
  takeNotificationsAt,
} from "../support/adyen-stand-in/stand-in.ts";
import { ACQUIRER, ADYEN_STAND_IN_URL } from "../support/server.ts";
import { createMerchant, createToken, freshCardNumber, useServer } from "./fixtures.ts";

// Adyen's late words on money already settled, sent by the stand-in itself (signed, Webhooks v1) through
// the server's notification endpoint (receiveAdyenNotifications), under the Adyen config
// (test/vitest.adyen.config.ts): REFUNDED_REVERSED (a confirmed refund comes back: the refund fails, its
// amount back in `available`), and PREARBITRATION_WON / PREARBITRATION_LOST, the last word on a dispute
// decided twice (Webhooks v1: "Cardholder's bank accepted pre-arbitration case": the merchant keeps the
// money, the dispute ends `won`; "... declined ...": it ends `lost`). Every notification is delivered
// twice and shuffled, the late words after what they follow (as Adyen sends them, days apart), under two
// seeds; then all of them again, shuffled together: nothing more moves
// (docs/going-live-with-adyen.md "Money reversed after the fact").

describe.runIf(ACQUIRER === "adyen")("late notifications from Adyen, each delivered twice and shuffled", () => {
  const { server, client } = useServer();
  const standIn = ADYEN_STAND_IN_URL ?? "";
  const NOTIFICATIONS = () => `${server.url}/v1/acquirers/adyen/notifications`;

  async function charge(merchantId: string, amount: number) {
    const token = await createToken(client, freshCardNumber());
    const created = unwrap(
      await client.POST("/v1/charges", {
        body: { merchant_id: merchantId, amount, currency: "USD", payment_method: { type: "card", token: token.id } },
      }),
    );
    expect(created.status).toBe("captured");
    return created;
  }

  it.each([5, 23])(
    "REFUNDED_REVERSED fails the refund; PREARBITRATION_WON ends a dispute won, _LOST lost; each applied once (seed %i)",
    async (seed) => {
      const merchant = await createMerchant(client);
      const refunded = await charge(merchant.id, 8000);
      const refund = unwrap(
        await client.POST("/v1/charges/{id}/refunds", {
          params: { path: { id: refunded.id } },
          body: { amount: 3000 },
        }),
      );
      await controlAt(standIn, "refunds/reverse", { merchantReference: refund.id });
      // Won in the end: chargeback, reversal, second chargeback, then the pre-arbitration accepted.
      const won = await charge(merchant.id, 6000);
      const wonDispute = await controlAt(standIn, "chargeback", {
        merchantReference: won.id,
        reversed: "true",
        second: "true",
      });
      await controlAt(standIn, "prearbitration", {
        disputeReference: wonDispute.disputeReference ?? "",
        outcome: "won",
      });
      // Lost in the end: chargeback, reversal, then the pre-arbitration declined.
      const lost = await charge(merchant.id, 5000);
      const lostDispute = await controlAt(standIn, "chargeback", { merchantReference: lost.id, reversed: "true" });
      await controlAt(standIn, "prearbitration", {
        disputeReference: lostDispute.disputeReference ?? "",
        outcome: "lost",
      });

      // Adyen echoes the connector's merchantReference: a refund's is its key, `re_…:refund`.
      const bodies: NotificationRequestBody[] = (
        await Promise.all(
          [`${refund.id}:refund`, refunded.id, won.id, lost.id].map((ref) => takeNotificationsAt(standIn, ref)),
        )
      ).flat();
      const codes = bodies.map((b) => b.notificationItems[0]?.NotificationRequestItem.eventCode);
      for (const code of [
        "REFUND",
        "REFUNDED_REVERSED",
        "SECOND_CHARGEBACK",
        "PREARBITRATION_WON",
        "PREARBITRATION_LOST",
      ]) {
        expect(codes, code).toContain(code);
      }
      const deliver = async (some: NotificationRequestBody[], round: number) => {
        const answers = await deliverNotifications(NOTIFICATIONS(), some, { times: 2, seed: seed + round });
        expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      };
      // As Adyen sends them: the late words after what they follow (days later), each group twice, shuffled.
      const LATE = ["REFUNDED_REVERSED", "PREARBITRATION_WON", "PREARBITRATION_LOST"];
      const isLate = (b: NotificationRequestBody) =>
        LATE.includes(String(b.notificationItems[0]?.NotificationRequestItem.eventCode));
      await deliver(
        bodies.filter((b) => !isLate(b)),
        0,
      );
      await deliver(bodies.filter(isLate), 1);

      const refundAfter = unwrap(
        await client.GET("/v1/charges/{id}/refunds", { params: { path: { id: refunded.id } } }),
      ).data.find((r) => r.id === refund.id);
      expect(refundAfter?.status).toBe("failed");
      expect(unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: refunded.id } } }))).toMatchObject({
        status: "captured",
        amount_refunded: 0,
      });
      const disputes = unwrap(
        await client.GET("/v1/disputes", { params: { query: { merchant_id: merchant.id, limit: 10 } } }),
      ).data;
      expect(disputes.find((d) => d.charge_id === won.id)?.status).toBe("won");
      expect(disputes.find((d) => d.charge_id === lost.id)?.status).toBe("lost");

      const snapshot = async () => {
        const balance = unwrap(
          await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } }),
        );
        const events = unwrap(await client.GET("/v1/events", { params: { query: { limit: 100 } } })).data.filter(
          (e) =>
            ("charge_id" in e && [refunded.id, won.id, lost.id].includes(String(e.charge_id))) ||
            ("tx_id" in e && [refunded.id, won.id, lost.id].includes(String(e.tx_id))),
        );
        return { balances: balance.balances, events: events.map((e) => e.id).sort() };
      };
      const before = await snapshot();
      expect(before.events.length).toBeGreaterThan(0);
      expect(
        unwrap(
          await client.GET("/v1/events", { params: { query: { type: "payment.refund_failed", limit: 100 } } }),
        ).data.filter((e) => "refund_id" in e && e.refund_id === refund.id),
      ).toHaveLength(1);
      // Everything once more, in another order: applied already, nothing moves.
      await deliver(bodies, 100);
      expect(await snapshot()).toEqual(before);
      expect((await server.running.domain.ledger.verify()).differences).toEqual([]);
    },
    120_000,
  );
});
