import { unwrap } from "@payments/client";
import { describe, expect, it } from "vitest";
import {
  controlAt,
  deliverNotifications,
  type NotificationRequestBody,
  takeNotificationsAt,
} from "../support/adyen-stand-in/stand-in.ts";
import { ACQUIRER, ADYEN_STAND_IN_URL } from "../support/server.ts";
import { createMerchant, createToken, eventTypesOf, type ServerFixture, useServer } from "./fixtures.ts";

// Card authorisations Adyen takes `Received` and decides later, through the server against the stand-in
// under the Adyen config (test/vitest.adyen.config.ts): the stand-in's RECEIVED_CARDS answer /payments (or,
// after a 3-D Secure challenge, /payments/details) `Received`, and queue the signed AUTHORISATION that
// decides them, taken through its side door and delivered to the server's notification endpoint twice,
// shuffled. The charge is `pending` until then; then authorized, captured or declined `card_declined` once,
// with one authorisation at Adyen, each event once and the ledger verified
// (docs/going-live-with-adyen.md "Card authorization" and "3-D Secure"). A charge the fraud evaluation sent
// to review is held once authorized, as one authorized at once is.

/** The stand-in's cards (test/support/adyen-stand-in/stand-in.ts RECEIVED_CARDS). */
const RECEIVED_AUTHORISED = "4000000000007718";
const RECEIVED_REFUSED = "4000000000007726";
const CHALLENGED_RECEIVED_AUTHORISED = "4000000000007734";
const CHALLENGED_RECEIVED_REFUSED = "4000000000007742";

const adyen = ACQUIRER === "adyen";
const standIn = () => ADYEN_STAND_IN_URL ?? "";

describe.runIf(adyen)("card authorisations Adyen takes Received and decides by AUTHORISATION", () => {
  const fixture = useServer();
  const { client } = fixture;
  const h = helpers(fixture);

  it.each([
    { capture: true, status: "captured", seed: 3 },
    { capture: false, status: "authorized", seed: 8 },
  ] as const)(
    "a Received card charge (capture $capture) is pending, then $status once by its AUTHORISATION delivered twice",
    async ({ capture, status, seed }) => {
      const { merchant, charge } = await h.pay(RECEIVED_AUTHORISED, { capture });
      expect(charge).toMatchObject({ status: "pending", amount_captured: 0, next_action: null, failure_code: null });
      expect(await h.balances(merchant.id)).toEqual([]);
      expect((await eventTypesOf(client, charge.id)).sort()).toEqual(["fraud.evaluated"]);

      await h.deliverTwice(charge.id, seed);
      const after = await h.charge(charge.id);
      expect(after).toMatchObject({ status, amount_captured: capture ? 4200 : 0 });
      expect((await eventTypesOf(client, charge.id)).sort()).toEqual(
        capture
          ? ["fraud.evaluated", "payment.authorized", "payment.captured"]
          : ["fraud.evaluated", "payment.authorized"],
      );
      if (!capture) {
        const captured = unwrap(
          await client.POST("/v1/charges/{id}/capture", { params: { path: { id: charge.id } }, body: {} }),
        );
        expect(captured).toMatchObject({ status: "captured", amount_captured: 4200 });
      }
      expect(await h.balances(merchant.id)).toEqual([{ currency: "EUR", available: 4200, pending: 0 }]);
      expect(await h.performed(charge.id)).toMatchObject({ authorisation: "1" });
      await h.verified();
    },
    120_000,
  );

  it("a Received card charge refused by its AUTHORISATION is declined card_declined once; nothing moves", async () => {
    const { merchant, charge } = await h.pay(RECEIVED_REFUSED);
    expect(charge.status).toBe("pending");
    await h.deliverTwice(charge.id, 5);
    expect(await h.charge(charge.id)).toMatchObject({
      status: "declined",
      failure_code: "card_declined",
      amount_captured: 0,
    });
    expect((await eventTypesOf(client, charge.id)).sort()).toEqual(["fraud.evaluated", "payment.failed"]);
    expect(await h.balances(merchant.id)).toEqual([]);
    expect(await h.performed(charge.id)).toMatchObject({ authorisation: "1" });
    await h.verified();
  }, 120_000);

  it("through 3-D Secure: the payer's return finds the charge pending (to return_url), then AUTHORISATION captures it once", async () => {
    const { merchant, charge } = await h.pay(CHALLENGED_RECEIVED_AUTHORISED, {
      returnUrl: "https://shop.example/orders/9",
    });
    expect(charge.status).toBe("requires_action");
    const back = await h.passChallenge(charge.next_action?.url ?? "");
    // The payer goes back to the merchant, whose page reads the charge: pending until Adyen decides.
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe(`https://shop.example/orders/9?tx_id=${charge.id}`);
    const pending = await h.charge(charge.id);
    expect(pending).toMatchObject({ status: "pending", next_action: null, amount_captured: 0 });
    expect(pending.three_d_secure).toEqual({
      result: "authenticated",
      version: "2.2.0",
      liability_shift: true,
      eci: "05",
    });
    // A reload of the return sends nothing again.
    expect((await fetch(back.url, { redirect: "manual" })).status).toBe(303);

    await h.deliverTwice(charge.id, 11);
    expect(await h.charge(charge.id)).toMatchObject({ status: "captured", amount_captured: 4200 });
    expect((await eventTypesOf(client, charge.id)).sort()).toEqual([
      "fraud.evaluated",
      "payment.authorized",
      "payment.captured",
      "payment.requires_action",
    ]);
    expect(await h.balances(merchant.id)).toEqual([{ currency: "EUR", available: 4200, pending: 0 }]);
    expect(await h.performed(charge.id)).toMatchObject({ authorisation: "1", details: "1" });
    await h.verified();
  }, 120_000);

  it("through 3-D Secure without a return_url: the return shows the payment being confirmed; a refusal declines it once", async () => {
    const { charge } = await h.pay(CHALLENGED_RECEIVED_REFUSED);
    const back = await h.passChallenge(charge.next_action?.url ?? "");
    expect(back.status).toBe(200);
    const page = await back.text();
    expect(page).toContain('data-status="pending"');
    expect(page).toContain("Payment being confirmed");
    await h.deliverTwice(charge.id, 17);
    expect(await h.charge(charge.id)).toMatchObject({
      status: "declined",
      failure_code: "card_declined",
      amount_captured: 0,
    });
    expect((await eventTypesOf(client, charge.id)).sort()).toEqual([
      "fraud.evaluated",
      "payment.failed",
      "payment.requires_action",
    ]);
    expect(await h.performed(charge.id)).toMatchObject({ authorisation: "1", details: "1" });
    await h.verified();
  }, 120_000);
});

describe.runIf(adyen)("a Received card charge the fraud evaluation sent to review", () => {
  const fixture = useServer();
  const { client } = fixture;
  const h = helpers(fixture);

  it("is held for review once its AUTHORISATION authorizes it (not captured), then approved; events once", async () => {
    // Review from 40 points: a flag list on the card's fingerprint (highrisk_card, 48) sends it to review.
    unwrap(await client.PATCH("/v1/fraud/settings", { body: { review_threshold: 40 } }));
    const token = await createToken(client, RECEIVED_AUTHORISED);
    const list = unwrap(
      await client.POST("/v1/fraud/lists", {
        body: { name: "held cards", kind: "card_fingerprint", action: "flag" },
      }),
    );
    unwrap(
      await client.POST("/v1/fraud/lists/{id}/items", {
        params: { path: { id: list.id } },
        body: { value: token.card.fingerprint },
      }),
    );
    const { merchant, charge } = await h.pay(RECEIVED_AUTHORISED, { tokenId: token.id });
    expect(charge).toMatchObject({ status: "pending", review: null });

    await h.deliverTwice(charge.id, 2);
    const held = await h.charge(charge.id);
    expect(held).toMatchObject({ status: "authorized", amount_captured: 0, review: { status: "open" } });
    expect(await h.balances(merchant.id)).toEqual([]);
    // Where a charge authorized at once with `review` goes: capture is refused until the review is approved.
    const capture = await client.POST("/v1/charges/{id}/capture", { params: { path: { id: charge.id } }, body: {} });
    expect(capture.response.status).toBe(409);
    expect((await eventTypesOf(client, charge.id)).sort()).toEqual(["fraud.evaluated", "payment.authorized"]);
    const approved = unwrap(
      await client.POST("/v1/charges/{id}/review/approve", { params: { path: { id: charge.id } } }),
    );
    expect(approved).toMatchObject({ status: "captured", amount_captured: 4200, review: { status: "approved" } });
    expect((await eventTypesOf(client, charge.id)).sort()).toEqual([
      "fraud.evaluated",
      "payment.authorized",
      "payment.captured",
    ]);
    expect(await h.performed(charge.id)).toMatchObject({ authorisation: "1" });
    await h.verified();
  }, 120_000);
});

/**
 * What both blocks do: pay with a card, read a charge, deliver its AUTHORISATION twice, count at the stand-in.
 * `fixture`'s server and client are read when a test runs (useServer starts them before the tests).
 */
function helpers(fixture: ServerFixture) {
  const client = () => fixture.client;
  const { server } = fixture;
  return {
    async pay(card: string, options: { capture?: boolean; returnUrl?: string; tokenId?: string } = {}) {
      const merchant = await createMerchant(client());
      const token = options.tokenId ?? (await createToken(client(), card)).id;
      const charge = unwrap(
        await client().POST("/v1/charges", {
          body: {
            merchant_id: merchant.id,
            amount: 4200,
            currency: "EUR",
            payment_method: { type: "card", token },
            ...(options.capture === undefined ? {} : { capture: options.capture }),
            ...(options.returnUrl ? { return_url: options.returnUrl } : {}),
          },
        }),
      );
      return { merchant, charge };
    },
    charge: async (id: string) => unwrap(await client().GET("/v1/charges/{id}", { params: { path: { id } } })),
    balances: async (merchantId: string) =>
      unwrap(await client().GET("/v1/merchants/{id}/balance", { params: { path: { id: merchantId } } })).balances,
    /** The charge's one AUTHORISATION from the stand-in, delivered twice, shuffled: each answered `[accepted]`. */
    async deliverTwice(chargeId: string, seed: number) {
      const bodies: NotificationRequestBody[] = await takeNotificationsAt(standIn(), chargeId);
      expect(bodies.map((b) => b.notificationItems[0]?.NotificationRequestItem.eventCode)).toEqual(["AUTHORISATION"]);
      const answers = await deliverNotifications(`${server.url}/v1/acquirers/adyen/notifications`, bodies, {
        times: 2,
        seed,
      });
      expect(answers.map((a) => [a.status, a.text])).toEqual([
        [200, "[accepted]"],
        [200, "[accepted]"],
      ]);
    },
    /**
     * The payer passes the challenge on the issuer's page (the stand-in's), which sends them back to our
     * return with Adyen's redirectResult: what the server answers their browser there.
     */
    async passChallenge(issuerPage: string): Promise<Response> {
      expect(issuerPage.startsWith(server.url)).toBe(false);
      const pressed = await fetch(issuerPage, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "outcome=complete",
      });
      expect(pressed.status).toBe(302);
      const back = pressed.headers.get("location") ?? "";
      expect(back).toMatch(new RegExp(`^${server.url}/3ds/tx_\\w+/return\\?t=[\\w-]+&redirectResult=`));
      return fetch(back, { redirect: "manual" });
    },
    /** What moved at the stand-in for the charge (authorisations, 3-D Secure details, …), replays excluded. */
    performed: (chargeId: string) => controlAt(standIn(), "performed", { merchantReference: chargeId }),
    /** The ledger of the server under test (issue 30's verification) has no difference. */
    verified: async () => expect((await server.running.domain.ledger.verify()).differences).toEqual([]),
  };
}
