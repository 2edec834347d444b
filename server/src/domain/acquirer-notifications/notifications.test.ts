import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { type NotificationItem, signItem } from "../../adapters/adyen/notifications.ts";
import { createSimulatorProcessor } from "../../adapters/processor-simulator.ts";
import { acquirerIntents } from "../charges/intents.ts";
import type { Processor } from "../charges/processor.ts";
import { ELEVATED_RISK_TEST_CARD } from "../fraud/sandbox.ts";
import { DomainError } from "../kernel/errors.ts";
import { verifyLedger } from "../ledger/verify.ts";
import { environmentOf } from "./notifications.ts";

// Adyen's notifications applied to our objects (notifications.ts), on the real domain and an in-memory
// store: each outcome per event code, each applied once however often (and however concurrently) it is
// delivered, out-of-order items kept and applied when their object is ready, forged items refused; the
// ledger verifies clean after each.

const KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
const OLD_KEY = "0011223344556677889900AABBCCDDEEFF";

async function world(processor?: Processor) {
  const errors: string[] = [];
  const infos: string[] = [];
  const log = {
    error: (_: object, message: string) => errors.push(message),
    warn: () => {},
    info: (_: object, message: string) => infos.push(message),
  };
  const t = testDomain({ adyenHmacKeys: [OLD_KEY, KEY], log, ...(processor ? { processor } : {}) });
  const caller = t.caller(false);
  const merchant = await t.domain.merchants.create(caller, { name: "Notified shop" });
  const card = async (amount: number, capture = true, pan = "4242424242424242") => {
    const token = await t.domain.tokens.create(caller, {
      card: pan,
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    return t.domain.charges.create(caller, {
      merchant_id: merchant.id,
      amount,
      currency: "USD",
      capture,
      payment_method: { type: "card", token: token.id },
    });
  };
  const pix = () =>
    t.domain.charges.create(caller, {
      merchant_id: merchant.id,
      amount: 5000,
      currency: "BRL",
      payment_method: { type: "pix" },
    });
  /**
   * An authorized card charge whose capture call is on its way (its intent open, our capture not yet
   * committed: what a notification arriving first finds), and `commit()` that lets the capture commit.
   */
  const captureInFlight = async () => {
    const authorized = await card(2500, false);
    const intents = acquirerIntents({ store: t.store, clock: t.domain.clock, lockSeconds: 60 });
    await t.store.insert(
      "acquirer_intents",
      intents.build({
        livemode: false,
        chargeId: authorized.id,
        objectId: authorized.id,
        operation: "capture",
        finish: "capture",
        amount: 2500,
        currency: "USD",
        reference: authorized.processor_ref,
      }),
    );
    const commit = async () => {
      await t.store.delete("acquirer_intents", `${authorized.id}:capture`);
      await t.domain.charges.capture(caller, authorized.id);
    };
    return { authorized, commit };
  };
  let sequence = 0;
  /** A signed item as Adyen sends it. */
  const item = (fields: Partial<NotificationItem> & Pick<NotificationItem, "eventCode" | "merchantReference">) => {
    const unsigned = {
      pspReference: `PSP${String(++sequence).padStart(13, "0")}`,
      merchantAccountCode: "PaymentsPlatformECOM",
      amount: { value: 5000, currency: "BRL" },
      success: "true",
      eventDate: "2026-11-21T10:00:00+01:00",
      ...fields,
    } as NotificationItem;
    return {
      ...unsigned,
      additionalData: { ...unsigned.additionalData, hmacSignature: signItem(unsigned, KEY) },
    } as NotificationItem;
  };
  const body = (...items: NotificationItem[]) => ({
    live: "false",
    notificationItems: items.map((NotificationRequestItem) => ({ NotificationRequestItem })),
  });
  const receive = (...items: NotificationItem[]) => t.domain.acquirerNotifications.receive(body(...items));
  const verified = async () => expect((await verifyLedger(t.store)).differences).toEqual([]);
  const available = async (currency: string) =>
    (await t.store.get("balances", `${merchant.id}:${currency}`))?.available;
  return {
    ...t,
    caller,
    merchant,
    card,
    pix,
    captureInFlight,
    item,
    body,
    receive,
    verified,
    available,
    errors,
    infos,
  };
}

describe("local payments decided by AUTHORISATION", () => {
  it("captures a pending pix charge once, however many times the item arrives", async () => {
    const w = await world();
    const charge = await w.pix();
    expect(charge.status).toBe("pending");
    const paid = w.item({ eventCode: "AUTHORISATION", merchantReference: charge.id, pspReference: "PIXPSP0000000001" });
    expect(await w.receive(paid)).toEqual({ stored: 1, refused: 0 });
    expect(await w.receive(paid, paid)).toEqual({ stored: 2, refused: 0 });
    const after = await w.domain.charges.load(false, charge.id);
    expect(after).toMatchObject({ status: "captured", amount_captured: 5000, processor_ref: "PIXPSP0000000001" });
    expect(await w.store.findAll("postings", { source_id: charge.id, type: "capture" })).toHaveLength(1);
    expect(await w.available("BRL")).toBe(5000);
    const [stored] = await w.domain.acquirerNotifications.inState(false, "applied");
    expect(stored).toMatchObject({ id: "adyen:PIXPSP0000000001:AUTHORISATION:true", attempts: 1 });
    await w.verified();
  });

  it("declines a refused one with payment.failed, and expires an expired one; no money moves", async () => {
    const w = await world();
    const refused = await w.pix();
    const expired = await w.pix();
    await w.receive(
      w.item({ eventCode: "AUTHORISATION", merchantReference: refused.id, success: "false", reason: "Refused" }),
      w.item({ eventCode: "AUTHORISATION", merchantReference: expired.id, success: "false", reason: "Expired" }),
    );
    expect(await w.domain.charges.load(false, refused.id)).toMatchObject({
      status: "declined",
      failure_code: "processing_error",
      failure_message: "The payment was not completed: Refused.",
    });
    expect(await w.domain.charges.load(false, expired.id)).toMatchObject({ status: "expired" });
    const types = (await w.store.findAll("events", { livemode: false }, 100)).map((e) => e.type);
    expect(types).toContain("payment.failed");
    expect(types).toContain("payment.expired");
    expect(await w.available("BRL")).toBeUndefined();
    await w.verified();
  });

  it("applies an item that arrives at once twice (two deliveries racing) exactly once", async () => {
    const w = await world();
    const charges = await Promise.all(Array.from({ length: 20 }, () => w.pix()));
    const items = charges.map((c) => w.item({ eventCode: "AUTHORISATION", merchantReference: c.id }));
    await Promise.all(items.flatMap((i) => [w.receive(i), w.receive(i), w.receive(i)]));
    expect(await w.store.findAll("postings", { type: "capture" }, 1000)).toHaveLength(20);
    expect(await w.available("BRL")).toBe(20 * 5000);
    expect(await w.domain.acquirerNotifications.inState(false, "applied")).toHaveLength(20);
    await w.verified();
  });
});

describe("a card authorization the acquirer took undecided (Adyen's Received / Pending)", () => {
  /** The simulator, answering every card authorization undecided; `lose` first: the answer never comes. */
  function undecided() {
    const state = { lose: false, reversed: [] as string[] };
    const simulator = createSimulatorProcessor();
    const processor: Processor = {
      ...simulator,
      authorizeCard: async (request) => {
        if (state.lose) throw new Error("Adyen the card payment: connection reset; repeat with the same key");
        return { approved: false, undecided: { reference: `PSP-${request.chargeId}` } };
      },
      reverse: async (request) => {
        state.reversed.push(request.idempotencyKey);
        return { status: "pending" };
      },
    };
    return { processor, state };
  }
  const authorisation = (w: Awaited<ReturnType<typeof world>>, chargeId: string, success = "true") =>
    w.item({
      eventCode: "AUTHORISATION",
      pspReference: `PSP-${chargeId}`,
      merchantReference: chargeId,
      amount: { value: 2500, currency: "USD" },
      success,
    });

  it("stores the charge pending, its intent resolved; AUTHORISATION authorizes or captures it as asked, once", async () => {
    const { processor } = undecided();
    const w = await world(processor);
    const immediate = await w.card(2500);
    const held = await w.card(2500, false);
    expect(immediate).toMatchObject({ status: "pending", processor_ref: `PSP-${immediate.id}`, amount_captured: 0 });
    expect(await w.domain.charges.unresolvedIntents(false)).toEqual([]);
    for (let i = 0; i < 2; i++) await w.receive(authorisation(w, immediate.id), authorisation(w, held.id));
    expect(await w.domain.charges.load(false, immediate.id)).toMatchObject({
      status: "captured",
      amount_captured: 2500,
    });
    expect(await w.domain.charges.load(false, held.id)).toMatchObject({ status: "authorized", amount_captured: 0 });
    expect(await w.available("USD")).toBe(2500);
    const events = await w.store.findAll("events", { livemode: false, type: "payment.authorized" }, 10);
    expect(events).toHaveLength(2);
    expect(await w.domain.acquirerNotifications.inState(false, "applied")).toHaveLength(2);
    expect((await w.domain.charges.capture(w.caller, held.id)).status).toBe("captured");
    await w.verified();
  });

  it("declines it when the AUTHORISATION says refused, however often it comes", async () => {
    const { processor } = undecided();
    const w = await world(processor);
    const charge = await w.card(2500);
    const refused = authorisation(w, charge.id, "false");
    await w.receive(refused, refused);
    await w.receive(refused);
    expect(await w.domain.charges.load(false, charge.id)).toMatchObject({
      status: "declined",
      failure_code: "card_declined",
      amount_captured: 0,
    });
    expect(await w.store.findAll("events", { livemode: false, type: "payment.failed" }, 10)).toHaveLength(1);
    await w.verified();
  });

  it("holds one the evaluation sent to review once AUTHORISATION authorizes it, as a card authorized at once, once", async () => {
    const { processor } = undecided();
    const w = await world(processor);
    // The sandbox's elevated-risk test card: the evaluation decides `review` (fraud/sandbox.ts).
    const charge = await w.card(2500, true, ELEVATED_RISK_TEST_CARD);
    expect(charge).toMatchObject({ status: "pending", review: null, amount_captured: 0 });
    // Sent to authorize only, as a held charge is: its intent's capture is false.
    expect(await w.store.get("acquirer_intents", `${charge.id}:authorize`)).toMatchObject({ capture: false });
    w.advance(45);
    const item = authorisation(w, charge.id);
    await w.receive(item, item);
    await w.receive(item);
    const held = await w.domain.charges.load(false, charge.id);
    expect(held).toMatchObject({
      status: "authorized",
      amount_captured: 0,
      review: { status: "open", capture: true, closed_at: null },
      review_on_authorization: null,
    });
    expect(held.review_expires_at).toBe(held.review?.expires_at);
    expect(Date.parse(held.review?.expires_at ?? "") - Date.parse(held.review?.opened_at ?? "")).toBe(604_800_000);
    expect(Date.parse(held.review?.opened_at ?? "")).toBe(Date.parse("2026-11-21T10:00:45Z"));
    // The same events as a charge held at creation: fraud.evaluated, then payment.authorized; nothing captured.
    const types = (await w.store.findAll("events", { livemode: false }, 100))
      .filter((e) => e.payload.tx_id === charge.id)
      .map((e) => e.type);
    expect(types.toSorted()).toEqual(["fraud.evaluated", "payment.authorized"]);
    await expect(w.domain.charges.capture(w.caller, charge.id)).rejects.toMatchObject({
      code: "invalid_state_transition",
    });
    expect(await w.domain.charges.approveReview(w.caller, charge.id)).toMatchObject({
      status: "captured",
      amount_captured: 2500,
      review: { status: "approved" },
    });
    expect(await w.available("USD")).toBe(2500);
    await w.verified();
  });

  it("an AUTHORISATION before recovery waits; the recovery reverses the charge never stored; then it is applied, once", async () => {
    const { processor, state } = undecided();
    const w = await world(processor);
    state.lose = true;
    await expect(w.card(2500)).rejects.toThrow(/connection reset/);
    const [intent] = await w.domain.charges.unresolvedIntents(false);
    const chargeId = intent?.charge_id ?? "";
    const item = authorisation(w, chargeId);
    await w.receive(item, item);
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(1);
    state.lose = false;
    w.advance(60); // IDEMPOTENCY_LOCK_SECONDS' default: the recovery job takes the intent over
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    expect(state.reversed).toEqual([`${chargeId}:reverse`]);
    expect(await w.domain.jobs.applyNotifications()).toBe(1);
    await w.receive(item);
    expect(await w.domain.acquirerNotifications.inState(false, "applied")).toHaveLength(1);
    expect(await w.store.get("charges", chargeId)).toBeNull();
    expect(await w.available("USD")).toBeUndefined();
    await w.verified();
  });
});

describe("captures, cancellations and refunds confirmed", () => {
  it("notes a confirmation of what is recorded, and logs a contradiction for a person without changing anything", async () => {
    const w = await world();
    const captured = await w.card(2500);
    const refund = await w.domain.charges.refund(w.caller, captured.id, { amount: 500 });
    await w.receive(
      w.item({ eventCode: "CAPTURE", merchantReference: captured.id, originalReference: "A" }),
      w.item({ eventCode: "REFUND", merchantReference: refund.id, originalReference: "A" }),
    );
    const noted = await w.domain.acquirerNotifications.inState(false, "noted");
    expect(noted.map((n) => n.effect)).toEqual(["confirmed", "confirmed"]);
    expect(w.errors).toEqual([]);
    await w.receive(w.item({ eventCode: "CAPTURE_FAILED", merchantReference: captured.id, originalReference: "A" }));
    expect(w.errors).toHaveLength(1);
    expect(w.errors[0]).toMatch(/contradicts what is recorded/);
    expect(await w.domain.charges.load(false, captured.id)).toMatchObject({ status: "partially_refunded" });
    await w.verified();
  });

  it("finds the charge or refund by our call's key, the merchantReference the connector sends (none left waiting)", async () => {
    const w = await world();
    const captured = await w.card(2500, false);
    await w.domain.charges.capture(w.caller, captured.id);
    const voided = await w.card(1500, false);
    await w.domain.charges.void(w.caller, voided.id);
    const refunded = await w.card(3000);
    const kept = await w.domain.charges.refund(w.caller, refunded.id, { amount: 500 });
    const refused = await w.domain.charges.refund(w.caller, refunded.id, { amount: 700 });
    // processor.ts (Adyen) sends each modification's idempotency key as Adyen's `reference`.
    await w.receive(
      w.item({ eventCode: "CAPTURE", merchantReference: `${captured.id}:capture`, originalReference: "A" }),
      w.item({ eventCode: "CANCELLATION", merchantReference: `${voided.id}:void`, originalReference: "B" }),
      w.item({ eventCode: "REFUND", merchantReference: `${kept.id}:refund`, originalReference: "C" }),
      w.item({ eventCode: "REFUND", merchantReference: `${refused.id}:refund`, success: "false" }),
    );
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toEqual([]);
    const noted = await w.domain.acquirerNotifications.inState(false, "noted");
    expect(noted.map((n) => `${n.event_code} ${n.effect}`).sort()).toEqual([
      "CANCELLATION confirmed",
      "CAPTURE confirmed",
      "REFUND confirmed",
    ]);
    expect(await w.domain.acquirerNotifications.inState(false, "applied")).toHaveLength(1);
    expect(await w.store.get("refunds", refused.id)).toMatchObject({ status: "failed" });
    expect(await w.domain.charges.load(false, refunded.id)).toMatchObject({ amount_refunded: 500 });
    expect(w.errors).toEqual([]);
    await w.verified();
  });

  it("keeps a CAPTURE that arrives before the charge is captured waiting, and applies it once it is", async () => {
    const w = await world();
    const { authorized, commit } = await w.captureInFlight();
    await w.receive(w.item({ eventCode: "CAPTURE", merchantReference: authorized.id }));
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(1);
    await commit();
    expect(await w.domain.jobs.applyNotifications()).toBe(1);
    const [noted] = await w.domain.acquirerNotifications.inState(false, "noted");
    expect(noted).toMatchObject({ effect: "confirmed", attempts: 2 });
  });
});

describe("the recovery job's reversals (an authorization the ledger never recorded)", () => {
  /** An authorize intent for a charge never stored, as the recovery job leaves it (create.ts reverseUnrecorded). */
  async function unrecorded(w: Awaited<ReturnType<typeof world>>, state: "open" | "resolved") {
    const chargeId = "tx_0000000000000000Unrecorded";
    const intent = acquirerIntents({ store: w.store, clock: w.domain.clock, lockSeconds: 60 }).build({
      livemode: false,
      chargeId,
      objectId: chargeId,
      operation: "authorize",
      finish: "create",
      amount: 5000,
      currency: "USD",
      reference: null,
    });
    await w.store.insert("acquirer_intents", {
      ...intent,
      ...(state === "resolved" ? { state: "resolved", resolution: "reversed", resolved_at: intent.created_at } : {}),
    });
    return chargeId;
  }

  it("marks the AUTHORISATION applied (nothing to change) and confirms the CANCEL_OR_REFUND at info, not as an error", async () => {
    const w = await world();
    const chargeId = await unrecorded(w, "resolved");
    await w.receive(
      w.item({ eventCode: "AUTHORISATION", merchantReference: chargeId, pspReference: "AUTHPSP000000001" }),
      w.item({
        eventCode: "CANCEL_OR_REFUND",
        merchantReference: `${chargeId}:reverse`,
        originalReference: "AUTHPSP000000001",
      }),
    );
    const applied = await w.domain.acquirerNotifications.inState(false, "applied");
    expect(applied.map((n) => [n.event_code, n.effect])).toEqual([["AUTHORISATION", "applied"]]);
    const noted = await w.domain.acquirerNotifications.inState(false, "noted");
    expect(noted.map((n) => [n.event_code, n.effect])).toEqual([["CANCEL_OR_REFUND", "confirmed"]]);
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toEqual([]);
    expect(w.errors).toEqual([]);
    expect(w.infos).toEqual([expect.stringMatching(/confirmed our reversal/)]);
    expect(await w.store.findAll("charges", {})).toEqual([]);
    await w.verified();
  });

  it("keeps both waiting while the intent is open (its reversal may be on its way)", async () => {
    const w = await world();
    const chargeId = await unrecorded(w, "open");
    await w.receive(
      w.item({ eventCode: "AUTHORISATION", merchantReference: chargeId }),
      w.item({ eventCode: "CANCEL_OR_REFUND", merchantReference: `${chargeId}:reverse` }),
    );
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(2);
    expect(w.errors).toEqual([]);
  });

  it("logs for a person a refused reversal, and a CANCEL_OR_REFUND we did not send", async () => {
    const w = await world();
    const chargeId = await unrecorded(w, "resolved");
    await w.receive(
      w.item({ eventCode: "CANCEL_OR_REFUND", merchantReference: `${chargeId}:reverse`, success: "false" }),
      w.item({ eventCode: "CANCEL_OR_REFUND", merchantReference: "someone-else" }),
    );
    const noted = await w.domain.acquirerNotifications.inState(false, "noted");
    expect(noted.map((n) => n.effect)).toEqual(["attention", "attention"]);
    expect(w.errors).toHaveLength(2);
  });
});

describe("chargebacks as disputes", () => {
  it("applies a chargeback's notifications once in any order: opened once, won by the reversal (money out once, back once)", async () => {
    const w = await world();
    const charge = await w.card(10_000);
    const dispute = {
      merchantReference: charge.id,
      originalReference: "PAY",
      amount: { value: 10_000, currency: "USD" },
    };
    const data = { additionalData: { chargebackReasonCode: "13.1" } as NotificationItem["additionalData"] };
    const notified = w.item({ eventCode: "NOTIFICATION_OF_CHARGEBACK", pspReference: "DSP1", ...dispute, ...data });
    const chargeback = w.item({ eventCode: "CHARGEBACK", pspReference: "DSP1", ...dispute, ...data });
    const reversed = w.item({ eventCode: "CHARGEBACK_REVERSED", pspReference: "DSP1", ...dispute, ...data });
    // Out of order: the reversal first (waits), then the rest, each twice.
    await w.receive(reversed);
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(1);
    await w.receive(chargeback, notified, notified, chargeback, reversed);
    const after = await w.domain.charges.load(false, charge.id);
    const opened = await w.domain.disputes.load(false, after.dispute_id ?? "");
    // The chargeback came first: it opened the dispute as a chargeback; the notification only confirmed it.
    expect(opened).toMatchObject({ status: "won", reason: "product_not_received", acquirer_ref: "DSP1" });
    expect(await w.store.findAll("postings", { source_id: opened.id }, 100)).toHaveLength(2);
    expect(await w.available("USD")).toBe(10_000);
    expect(await w.domain.acquirerNotifications.inState(false, "applied")).toHaveLength(2);
    await w.verified();
  });

  it("loses a chargeback on SECOND_CHARGEBACK; an inquiry (REQUEST_FOR_INFORMATION) moves no money", async () => {
    const w = await world();
    const lost = await w.card(3000);
    const asked = await w.card(4000);
    await w.receive(
      w.item({ eventCode: "CHARGEBACK", pspReference: "DSP2", merchantReference: lost.id }),
      w.item({ eventCode: "SECOND_CHARGEBACK", pspReference: "DSP2", merchantReference: lost.id }),
      w.item({ eventCode: "REQUEST_FOR_INFORMATION", pspReference: "DSP3", merchantReference: asked.id }),
    );
    const lostDispute = await w.domain.disputes.load(
      false,
      (await w.domain.charges.load(false, lost.id)).dispute_id ?? "",
    );
    const inquiry = await w.domain.disputes.load(
      false,
      (await w.domain.charges.load(false, asked.id)).dispute_id ?? "",
    );
    expect(lostDispute.status).toBe("lost");
    expect(inquiry).toMatchObject({ status: "warning_needs_response", reason: "general" });
    expect(await w.available("USD")).toBe(4000);
    // The bank escalates the inquiry: the chargeback withdraws what the charge has left.
    await w.receive(w.item({ eventCode: "CHARGEBACK", pspReference: "DSP3", merchantReference: asked.id }));
    expect((await w.domain.disputes.load(false, inquiry.id)).status).toBe("needs_response");
    expect(await w.available("USD")).toBe(0);
    await w.verified();
  });
});

describe("chargebacks decided twice", () => {
  const orders = [
    ["CHARGEBACK", "CHARGEBACK_REVERSED", "SECOND_CHARGEBACK"],
    ["CHARGEBACK", "SECOND_CHARGEBACK", "CHARGEBACK_REVERSED"],
    ["CHARGEBACK_REVERSED", "CHARGEBACK", "SECOND_CHARGEBACK"],
    ["CHARGEBACK_REVERSED", "SECOND_CHARGEBACK", "CHARGEBACK"],
    ["SECOND_CHARGEBACK", "CHARGEBACK", "CHARGEBACK_REVERSED"],
    ["SECOND_CHARGEBACK", "CHARGEBACK_REVERSED", "CHARGEBACK"],
  ] as const;

  it.each(orders)(
    "ends lost, the amount withdrawn once on balance, for %s, %s, %s each delivered twice",
    async (...codes) => {
      const w = await world();
      const charge = await w.card(10_000);
      const items = codes.map((eventCode) =>
        w.item({ eventCode, pspReference: "DSPTWICE", merchantReference: charge.id, originalReference: "PAY" }),
      );
      for (const item of items) await w.receive(item, item);
      const after = await w.domain.charges.load(false, charge.id);
      const dispute = await w.domain.disputes.load(false, after.dispute_id ?? "");
      expect(dispute).toMatchObject({ status: "lost", amount: 10_000, second_chargeback: true });
      // Refunds stay refused: the cardholder has the money back.
      expect(after.chargeback_id).toBe(dispute.id);
      const fee = dispute.fee;
      expect(await w.available("USD")).toBe(10_000 - 10_000 - fee);
      expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(0);
      expect(w.errors).toEqual([]);
      await w.verified();
    },
  );

  it("a second chargeback after a win takes what the charge has left (the merchant refunded part meanwhile); with nothing left, a person looks", async () => {
    const w = await world();
    const part = await w.card(10_000);
    const all = await w.card(10_000);
    for (const charge of [part, all]) {
      await w.receive(
        w.item({ eventCode: "CHARGEBACK", pspReference: `DSP${charge.id}`, merchantReference: charge.id }),
        w.item({ eventCode: "CHARGEBACK_REVERSED", pspReference: `DSP${charge.id}`, merchantReference: charge.id }),
      );
    }
    await w.domain.charges.refund(w.caller, part.id, { amount: 4000 });
    await w.domain.charges.refund(w.caller, all.id, {});
    const before = (await w.available("USD")) ?? 0;
    for (const charge of [part, all]) {
      const second = w.item({
        eventCode: "SECOND_CHARGEBACK",
        pspReference: `DSP${charge.id}`,
        merchantReference: charge.id,
      });
      await w.receive(second, second);
    }
    const disputeOf = async (id: string) =>
      w.domain.disputes.load(false, (await w.domain.charges.load(false, id)).dispute_id ?? "");
    expect(await disputeOf(part.id)).toMatchObject({ status: "lost", amount: 6000 });
    expect(await disputeOf(all.id)).toMatchObject({ status: "won" });
    expect(await w.available("USD")).toBe(before - 6000);
    expect(w.errors).toHaveLength(1);
    await w.verified();
  });

  it("pre-arbitration has the last word: won and lost end so in any order, each delivered twice, money moved once", async () => {
    const w = await world();
    const won = await w.card(10_000);
    const lost = await w.card(10_000);
    const start = (await w.available("USD")) ?? 0;
    const stages = (charge: { id: string }, last: "PREARBITRATION_WON" | "PREARBITRATION_LOST") =>
      (["CHARGEBACK", "CHARGEBACK_REVERSED", "SECOND_CHARGEBACK", last] as const).map((eventCode) =>
        w.item({ eventCode, pspReference: `DSP${charge.id}`, merchantReference: charge.id }),
      );
    const [cbW, revW, secondW, preW] = stages(won, "PREARBITRATION_WON");
    const [cbL, revL, secondL, preL] = stages(lost, "PREARBITRATION_LOST");
    // Out of order and twice: the pre-arbitration first (waits for its chargeback), late stages after it.
    const order = [preW, preL, cbW, secondW, preW, cbL, revW, revL, preL, secondL, secondW, revW, cbW, cbL];
    for (const item of order) if (item) await w.receive(item);
    const disputeOf = async (id: string) =>
      w.domain.disputes.load(false, (await w.domain.charges.load(false, id)).dispute_id ?? "");
    expect(await disputeOf(won.id)).toMatchObject({ status: "won", prearbitration: "won" });
    expect(await disputeOf(lost.id)).toMatchObject({ status: "lost", prearbitration: "lost" });
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(0);
    // The won one cost nothing but its chargeback fee; the lost one its amount and fee, once each.
    const { fee } = await disputeOf(lost.id);
    expect(await w.available("USD")).toBe(start - fee - (10_000 + fee));
    expect(w.errors).toEqual([]);
    await w.verified();
  });

  it("a chargeback reversed after it was lost is won after all: the money comes back once", async () => {
    const processor: Processor = { ...createSimulatorProcessor(), acceptDispute: async () => {} };
    const w = await world(processor);
    const charge = await w.card(10_000);
    await w.receive(w.item({ eventCode: "CHARGEBACK", pspReference: "DSPLATE", merchantReference: charge.id }));
    const id = (await w.domain.charges.load(false, charge.id)).dispute_id ?? "";
    expect((await w.domain.disputes.close(w.caller, id)).status).toBe("lost");
    const fee = (await w.domain.disputes.load(false, id)).fee;
    const reversed = w.item({
      eventCode: "CHARGEBACK_REVERSED",
      pspReference: "DSPLATE",
      merchantReference: charge.id,
    });
    await w.receive(reversed, reversed);
    expect(await w.domain.disputes.load(false, id)).toMatchObject({ status: "won" });
    expect((await w.domain.charges.load(false, charge.id)).chargeback_id).toBeNull();
    expect(await w.available("USD")).toBe(10_000 - fee);
    const reinstated = await w.store.findAll("events", { livemode: false, type: "dispute.funds_reinstated" }, 10);
    expect(reinstated).toHaveLength(1);
    await w.verified();
  });
});

describe("answering a dispute the acquirer reported", () => {
  /** The simulator, with the Disputes API calls an Adyen acquirer makes, recorded (or refused). */
  function acquirerWithDisputes(refuse = false) {
    const calls: string[] = [];
    const record = (answer: string) => async (request: { idempotencyKey: string; disputeReference: string }) => {
      calls.push(`${answer} ${request.disputeReference} ${request.idempotencyKey}`);
      if (refuse) throw Object.assign(new Error("Dispute is not open"), { name: "AcquirerRefused" });
    };
    const processor: Processor = {
      ...createSimulatorProcessor(),
      defendDispute: record("defend"),
      acceptDispute: record("accept"),
    };
    return { processor, calls };
  }

  it("defends a submitted one and accepts a closed one at the acquirer, keyed, before recording them", async () => {
    const { processor, calls } = acquirerWithDisputes();
    const w = await world(processor);
    const defended = await w.card(3000);
    const accepted = await w.card(3000);
    const own = await w.card(3000);
    await w.receive(
      w.item({ eventCode: "CHARGEBACK", pspReference: "DSPDEFEND", merchantReference: defended.id }),
      w.item({ eventCode: "CHARGEBACK", pspReference: "DSPACCEPT", merchantReference: accepted.id }),
    );
    const disputeOf = async (chargeId: string) => (await w.domain.charges.load(false, chargeId)).dispute_id ?? "";
    const submitted = await w.domain.disputes.update(w.caller, await disputeOf(defended.id), {
      evidence: { uncategorized_text: "Delivered, signed for." },
      submit: true,
    });
    expect(submitted.status).toBe("under_review");
    const closed = await w.domain.disputes.close(w.caller, await disputeOf(accepted.id));
    expect(closed.status).toBe("lost");
    // A dispute the sandbox made itself is not the acquirer's: nothing is sent.
    const sandboxDispute = await w.domain.disputes.sandboxOpen(w.caller, own.id, {});
    await w.domain.disputes.close(w.caller, sandboxDispute.id);
    expect(calls).toEqual([`defend DSPDEFEND ${submitted.id}:defend`, `accept DSPACCEPT ${closed.id}:accept`]);
  });

  it("records nothing when the acquirer refuses the answer", async () => {
    const { processor, calls } = acquirerWithDisputes(true);
    const w = await world(processor);
    const charge = await w.card(3000);
    await w.receive(w.item({ eventCode: "CHARGEBACK", pspReference: "DSPREFUSED", merchantReference: charge.id }));
    const id = (await w.domain.charges.load(false, charge.id)).dispute_id ?? "";
    const err = await w.domain.disputes.close(w.caller, id).catch((e) => e);
    expect(err).toMatchObject({
      code: "invalid_state_transition",
      message: expect.stringMatching(/Dispute is not open/),
    });
    expect(calls).toHaveLength(1);
    expect((await w.domain.disputes.load(false, id)).status).toBe("needs_response");
  });
});

describe("payout outcomes as cashouts", () => {
  it("pays an in_transit cashout, fails another with its money back, and keeps one for a pending cashout waiting", async () => {
    const w = await world();
    await w.card(10_000);
    const destination = {
      type: "us_bank_account" as const,
      routing_number: "110000000",
      account_number: "000123456789",
      account_holder: "Acme",
    };
    const make = () =>
      w.domain.cashouts.create(w.caller, { merchant_id: w.merchant.id, amount: 1000, currency: "USD", destination });
    const paid = await make();
    const failed = await make();
    w.advance(7 * 86_400);
    await w.domain.jobs.payouts();
    const pending = await make();
    await w.receive(
      w.item({ eventCode: "PAYOUT_THIRDPARTY", merchantReference: paid.id }),
      w.item({
        eventCode: "PAYOUT_DECLINE",
        merchantReference: failed.id,
        success: "true",
        reason: "declined by reviewer",
      }),
      w.item({ eventCode: "PAYOUT_THIRDPARTY", merchantReference: pending.id }),
    );
    expect((await w.domain.cashouts.get(w.caller, paid.id)).status).toBe("paid");
    expect(await w.domain.cashouts.get(w.caller, failed.id)).toMatchObject({
      status: "failed",
      failure_code: "declined",
    });
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(1);
    expect(await w.available("USD")).toBe(10_000 - 1000 - 1000);
    await w.verified();
  });

  it("applies every payout outcome once, delivered twice and shuffled: expired and failed give the money back once", async () => {
    const w = await world();
    await w.card(10_000);
    const destination = {
      type: "us_bank_account" as const,
      routing_number: "110000000",
      account_number: "000123456789",
      account_holder: "Acme",
    };
    const make = () =>
      w.domain.cashouts.create(w.caller, { merchant_id: w.merchant.id, amount: 1000, currency: "USD", destination });
    const [paid, closed, expired, declined] = [await make(), await make(), await make(), await make()];
    w.advance(7 * 86_400);
    await w.domain.jobs.payouts();
    const items = [
      w.item({ eventCode: "PAYOUT_THIRDPARTY", merchantReference: paid.id }),
      w.item({
        eventCode: "PAYOUT_THIRDPARTY",
        merchantReference: closed.id,
        success: "false",
        reason: "Account closed",
      }),
      w.item({ eventCode: "PAYOUT_EXPIRE", merchantReference: expired.id, reason: "Payout expired" }),
      w.item({ eventCode: "PAYOUT_DECLINE", merchantReference: declined.id }),
    ];
    // Each twice, in an order that is neither the sending order nor its reverse.
    await w.receive(
      ...[items[2], items[0], items[3], items[1], items[1], items[3], items[2], items[0]].flatMap((i) =>
        i ? [i] : [],
      ),
    );
    const status = async (id: string) => w.domain.cashouts.get(w.caller, id);
    expect(await status(paid.id)).toMatchObject({ status: "paid" });
    expect(await status(closed.id)).toMatchObject({ status: "failed", failure_code: "account_closed" });
    expect(await status(expired.id)).toMatchObject({ status: "failed", failure_code: "could_not_process" });
    expect(await status(declined.id)).toMatchObject({ status: "failed", failure_code: "declined" });
    for (const id of [closed.id, expired.id, declined.id]) {
      expect(await w.store.findAll("postings", { source_id: id, type: "cashout_reversal" }, 10)).toHaveLength(1);
    }
    expect(await w.store.findAll("events", { livemode: false, type: "cashout.failed" }, 100)).toHaveLength(3);
    expect(await w.store.findAll("events", { livemode: false, type: "cashout.paid" }, 100)).toHaveLength(1);
    // Only the paid cashout's money left; the three failed ones are back in available, once each.
    expect(await w.available("USD")).toBe(10_000 - 1000);
    expect(w.errors).toEqual([]);
    await w.verified();
  });
});

describe("money reversed after the fact", () => {
  const bank = {
    type: "us_bank_account" as const,
    routing_number: "110000000",
    account_number: "000123456789",
    account_holder: "Acme",
  };

  it("undoes a capture the acquirer reports failed (CAPTURE_FAILED) once: declined, capture_failed, its money and fee taken back", async () => {
    const w = await world();
    const kept = await w.card(1000);
    const charge = await w.card(2500);
    const failed = w.item({ eventCode: "CAPTURE_FAILED", merchantReference: charge.id, originalReference: "PAY" });
    await w.receive(failed, failed);
    await w.receive(failed);
    expect(await w.domain.charges.load(false, charge.id)).toMatchObject({
      status: "declined",
      amount_captured: 0,
      failure_code: "capture_failed",
      failure_message: expect.stringMatching(/capture failed/),
    });
    const events = await w.store.findAll("events", { livemode: false, type: "payment.failed" }, 10);
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toMatchObject({ tx_id: charge.id, failure_code: "capture_failed" });
    const reversals = await w.store.findAll(
      "balance_transactions",
      { source_id: charge.id, type: "charge_failure" },
      10,
    );
    expect(reversals).toHaveLength(1);
    expect(reversals[0]?.net).toBeLessThan(0);
    // What the first charge earned stays; the failed one's credit is gone.
    const [keptCapture] = await w.store.findAll("balance_transactions", { source_id: kept.id, type: "charge" }, 10);
    expect(await w.available("USD")).toBe(keptCapture?.net);
    expect(w.errors).toEqual([]);
    await w.verified();
  });

  it("fails a refund the acquirer reports failed (REFUND_FAILED) once, in any order: money back, charge restored, payment.refund_failed", async () => {
    const w = await world();
    const charge = await w.card(3000);
    const net = (await w.available("USD")) ?? 0;
    const first = await w.domain.charges.refund(w.caller, charge.id, { amount: 1000 });
    const second = await w.domain.charges.refund(w.caller, charge.id, {});
    expect((await w.domain.charges.load(false, charge.id)).status).toBe("refunded");
    const failedItem = (id: string) =>
      w.item({ eventCode: "REFUND_FAILED", merchantReference: id, reason: "Account closed" });
    const refundedItem = (id: string) => w.item({ eventCode: "REFUND", merchantReference: id });
    const failSecond = failedItem(second.id);
    // The failure first, twice, then the earlier confirmation, late.
    await w.receive(failSecond, failSecond);
    await w.receive(refundedItem(second.id), failSecond);
    expect(await w.domain.charges.load(false, charge.id)).toMatchObject({
      status: "partially_refunded",
      amount_refunded: 1000,
    });
    const refunds = await w.domain.charges.listRefunds(w.caller, charge.id, { limit: 10 });
    expect(refunds.data.find((r) => r.id === second.id)?.status).toBe("failed");
    expect(refunds.data.find((r) => r.id === first.id)?.status).toBe("succeeded");
    expect(await w.available("USD")).toBe(net - 1000);
    // A REFUND refused outright fails the other: the charge is back to captured.
    const refused = w.item({ eventCode: "REFUND", merchantReference: first.id, success: "false" });
    await w.receive(refused, refused, failedItem(first.id));
    expect(await w.domain.charges.load(false, charge.id)).toMatchObject({ status: "captured", amount_refunded: 0 });
    expect(await w.available("USD")).toBe(net);
    const events = await w.store.findAll("events", { livemode: false, type: "payment.refund_failed" }, 10);
    expect(events.map((e) => e.payload.refund_id).sort()).toEqual([first.id, second.id].sort());
    expect(
      await w.store.findAll("balance_transactions", { type: "refund_failure", merchant_id: w.merchant.id }, 10),
    ).toHaveLength(2);
    // The money can be refunded again.
    await w.domain.charges.refund(w.caller, charge.id, { amount: 3000 });
    expect(w.errors).toEqual([]);
    await w.verified();
  });

  it("fails a refund of the sandbox's refund-failure test card (4000000000005126) after it is made, once", async () => {
    const w = await world();
    const token = await w.domain.tokens.create(w.caller, {
      card: "4000000000005126",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    const charge = await w.domain.charges.create(w.caller, {
      merchant_id: w.merchant.id,
      amount: 2000,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
    const net = (await w.available("USD")) ?? 0;
    const refund = await w.domain.charges.refund(w.caller, charge.id, {});
    const [stored] = (await w.domain.charges.listRefunds(w.caller, charge.id, { limit: 10 })).data;
    expect(stored).toMatchObject({ id: refund.id, status: "failed" });
    expect(await w.domain.charges.load(false, charge.id)).toMatchObject({ status: "captured", amount_refunded: 0 });
    expect(await w.available("USD")).toBe(net);
    const events = await w.store.findAll("events", { livemode: false, type: "payment.refund_failed" }, 10);
    expect(events.map((e) => e.payload.failure_message)).toEqual([expect.stringMatching(/test card 4000000000005126/)]);
    await w.verified();
  });

  it("keeps a CAPTURE_FAILED that comes before our capture committed waiting, and undoes the capture once it has", async () => {
    const w = await world();
    const { authorized, commit } = await w.captureInFlight();
    await w.receive(w.item({ eventCode: "CAPTURE_FAILED", merchantReference: authorized.id }));
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(1);
    await commit();
    expect(await w.domain.jobs.applyNotifications()).toBe(1);
    expect(await w.domain.charges.load(false, authorized.id)).toMatchObject({ status: "declined", amount_captured: 0 });
    expect(await w.available("USD")).toBe(0);
    await w.verified();
  });

  it("never takes a failed capture's money below zero: when the balance no longer covers it, a person looks", async () => {
    const w = await world();
    const charge = await w.card(10_000);
    const net = (await w.available("USD")) ?? 0;
    await w.domain.cashouts.create(w.caller, {
      merchant_id: w.merchant.id,
      amount: net,
      currency: "USD",
      destination: bank,
    });
    await w.receive(w.item({ eventCode: "CAPTURE_FAILED", merchantReference: charge.id }));
    expect(await w.domain.charges.load(false, charge.id)).toMatchObject({ status: "captured" });
    expect(w.errors).toHaveLength(1);
    expect(await w.available("USD")).toBe(0);
    await w.verified();
  });

  it("fails a paid cashout the bank sent back (PAIDOUT_REVERSED) once, in any order, its money back in available", async () => {
    const w = await world();
    await w.card(10_000);
    const make = () =>
      w.domain.cashouts.create(w.caller, {
        merchant_id: w.merchant.id,
        amount: 1000,
        currency: "USD",
        destination: bank,
      });
    const inOrder = await make();
    const early = await make();
    w.advance(7 * 86_400);
    await w.domain.jobs.payouts();
    const paid = (id: string) => w.item({ eventCode: "PAYOUT_THIRDPARTY", merchantReference: id });
    const returned = (id: string) =>
      w.item({ eventCode: "PAIDOUT_REVERSED", merchantReference: id, reason: "Account closed" });
    const returnedInOrder = returned(inOrder.id);
    const returnedEarly = returned(early.id);
    const paidEarly = paid(early.id);
    await w.receive(paid(inOrder.id), returnedInOrder, returnedInOrder);
    // Out of order: the return before the payment it takes back waits for it, then applies.
    await w.receive(returnedEarly);
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(1);
    await w.receive(paidEarly, returnedEarly, paidEarly);
    for (const id of [inOrder.id, early.id]) {
      expect(await w.domain.cashouts.get(w.caller, id)).toMatchObject({
        status: "failed",
        failure_code: "account_closed",
        failure_message: expect.stringMatching(/sent the paid cashout back.*Account closed/),
      });
      expect(await w.store.findAll("postings", { source_id: id, type: "cashout_reversal" }, 10)).toHaveLength(1);
    }
    const failedEvents = await w.store.findAll("events", { livemode: false, type: "cashout.failed" }, 100);
    expect(failedEvents).toHaveLength(2);
    expect(await w.available("USD")).toBe(10_000);
    expect(await w.domain.acquirerNotifications.inState(false, "waiting")).toHaveLength(0);
    expect(w.errors).toEqual([]);
    await w.verified();
  });

  it("logs a return of a cashout that never paid for a person, changing nothing", async () => {
    const w = await world();
    await w.card(10_000);
    const cashout = await w.domain.cashouts.create(w.caller, {
      merchant_id: w.merchant.id,
      amount: 1000,
      currency: "USD",
      destination: bank,
    });
    w.advance(7 * 86_400);
    await w.domain.jobs.payouts();
    await w.receive(w.item({ eventCode: "PAYOUT_DECLINE", merchantReference: cashout.id }));
    await w.receive(w.item({ eventCode: "PAIDOUT_REVERSED", merchantReference: cashout.id }));
    expect(w.errors).toHaveLength(1);
    expect(await w.available("USD")).toBe(10_000);
    await w.verified();
  });
});

describe("refused requests", () => {
  it("refuses unsigned and tampered items, storing only the valid ones, and accepts a rotated key's signature", async () => {
    const w = await world();
    const charge = await w.pix();
    const good = w.item({ eventCode: "AUTHORISATION", merchantReference: charge.id });
    const tampered = { ...good, amount: { value: 1, currency: "BRL" } };
    const { hmacSignature: _, ...noSignature } = good.additionalData as Record<string, string>;
    const unsigned = { ...good, pspReference: "OTHER", additionalData: noSignature } as NotificationItem;
    expect(await w.receive(tampered, unsigned)).toEqual({ stored: 0, refused: 2 });
    expect(await w.store.findAll("acquirer_notifications", {}, 10)).toHaveLength(0);
    const byOldKey = { ...good, additionalData: { hmacSignature: signItem(good, OLD_KEY) } } as NotificationItem;
    expect(await w.receive(byOldKey)).toEqual({ stored: 1, refused: 0 });
    expect((await w.domain.charges.load(false, charge.id)).status).toBe("captured");
  });

  it("answers acquirer_not_configured, storing nothing, while no HMAC key is set", async () => {
    const t = testDomain();
    const err = await t.domain.acquirerNotifications.receive({ live: "false", notificationItems: [] }).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: "acquirer_not_configured", message: expect.stringMatching(/ADYEN_HMAC_KEYS/) });
  });
});

describe("which of our environments an item acts on", () => {
  it("is the one Adyen serves, whatever `live` says; `live` decides only when it serves both or neither", () => {
    const production = { production: true, sandbox: false };
    const sandbox = { production: false, sandbox: true };
    const both = { production: true, sandbox: true };
    expect([environmentOf(false, production), environmentOf(true, production)]).toEqual([true, true]);
    expect([environmentOf(false, sandbox), environmentOf(true, sandbox)]).toEqual([false, false]);
    expect([environmentOf(false, both), environmentOf(true, both)]).toEqual([false, true]);
    expect([environmentOf(false, undefined), environmentOf(true, undefined)]).toEqual([false, true]);
  });

  it("applies `live: false` items to production when production alone is on Adyen (its test environment)", async () => {
    const t = testDomain({ adyenHmacKeys: [KEY], adyenEnvironments: { production: true, sandbox: false } });
    const caller = t.caller(true);
    const merchant = await t.domain.merchants.create(caller, { name: "Live shop on Adyen test" });
    const charge = await t.domain.charges.create(caller, {
      merchant_id: merchant.id,
      amount: 5000,
      currency: "BRL",
      payment_method: { type: "pix" },
    });
    const unsigned = {
      pspReference: "PIXLIVE000000001",
      merchantAccountCode: "PaymentsPlatformECOM",
      amount: { value: 5000, currency: "BRL" },
      success: "true",
      eventCode: "AUTHORISATION",
      merchantReference: charge.id,
    } as NotificationItem; // cast: the fields of a signed item, its signature added below
    const item = { ...unsigned, additionalData: { hmacSignature: signItem(unsigned, KEY) } };
    await t.domain.acquirerNotifications.receive({
      live: "false",
      notificationItems: [{ NotificationRequestItem: item }],
    });
    expect(await t.domain.charges.load(true, charge.id)).toMatchObject({ status: "captured" });
    expect(await t.domain.acquirerNotifications.inState(true, "applied")).toHaveLength(1);
    expect(await t.domain.acquirerNotifications.inState(false, "waiting")).toEqual([]);
  });
});
