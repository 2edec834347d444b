import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { type NotificationItem, signItem } from "../../adapters/adyen/notifications.ts";
import { createSimulatorProcessor } from "../../adapters/processor-simulator.ts";
import type { EventDoc } from "../kernel/events.ts";
import type { FraudScreen } from "./fraud-screen.ts";
import type { AuthenticationReturn, CardAuthorizationRequest, Processor } from "./processor.ts";

// 3-D Secure run by the acquirer (Adyen: three-d-secure.ts challengedByAcquirer, returnFromIssuer,
// finishAuthenticationReturn): the authorization answers a challenge, the charge waits requires_action on
// the issuer's page, and the payer's return finishes it under an intent keyed `tx_…:authenticate`. The
// acquirer here is a fake with Adyen's shape (authenticateCard not_needed, a challenge card, and
// completeAuthentication) whose answer can be lost after it applied the call, as a crash or a time-out
// loses it.

const CHALLENGE = "4917610000000000"; // Adyen's 3-D Secure 2 challenge test card
const HMAC_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
const LOCK = 60; // IDEMPOTENCY_LOCK_SECONDS' default
const EXPIRY = 3600; // THREE_D_SECURE_EXPIRY_SECONDS' default

function adyenLike() {
  const sim = createSimulatorProcessor();
  const returnUrls = new Map<string, string>();
  const completions: AuthenticationReturn[] = [];
  /** Payments the fake authorized after their challenge (applied once per key), and reversals. */
  const authorized = new Map<string, number>();
  const reversed: string[] = [];
  /** `received`: /payments/details answers Received (taken, not decided: its AUTHORISATION decides it). */
  const state = { lose: false, received: false };
  const processor: Processor = {
    ...sim,
    authenticateCard: async () => ({ kind: "not_needed" }),
    async authorizeCard(request: CardAuthorizationRequest) {
      if (request.pan !== CHALLENGE) return sim.authorizeCard(request);
      returnUrls.set(request.chargeId, request.returnUrl ?? "");
      return {
        approved: false,
        challenge: {
          url: `https://issuer.example/3ds?psp=PSP_${request.chargeId}`,
          reference: `PSP_${request.chargeId}`,
          version: "2.2.0",
        },
      };
    },
    async completeAuthentication(request) {
      completions.push(request);
      const passed = request.redirectResult === "passed";
      if (passed && !authorized.has(request.idempotencyKey)) authorized.set(request.idempotencyKey, 1);
      if (state.lose) throw new Error("/payments/details: connection reset after Adyen applied it");
      if (passed && state.received) {
        return {
          authorization: { approved: false, undecided: { reference: `PSP_${request.chargeId}` } },
          threeDSecure: { result: "authenticated", version: "2.2.0", liabilityShift: true, eci: "05" },
        };
      }
      return passed
        ? {
            authorization: { approved: true, reference: `PSP_${request.chargeId}`, captured: request.capture },
            threeDSecure: { result: "authenticated", version: "2.2.0", liabilityShift: true, eci: "05" },
          }
        : {
            authorization: {
              approved: false,
              failureCode: "authentication_failed",
              failureMessage: "The payer did not complete 3-D Secure authentication.",
            },
            threeDSecure: { result: "failed", version: "2.2.0", liabilityShift: false, eci: null },
          };
    },
    async reverse(request) {
      reversed.push(request.idempotencyKey);
      return { status: "pending" };
    },
  };
  return { processor, returnUrls, completions, authorized, reversed, state };
}

async function world(capture = true, fraud?: FraudScreen) {
  const acquirer = adyenLike();
  const ctx = testDomain({ processor: acquirer.processor, adyenHmacKeys: [HMAC_KEY], ...(fraud ? { fraud } : {}) });
  const caller = ctx.caller(true);
  const merchant = await ctx.domain.merchants.create(caller, { name: "Shop" });
  const token = await ctx.domain.tokens.create(caller, {
    card: CHALLENGE,
    holder: "Ada",
    exp_month: 12,
    exp_year: 2031,
  });
  const charge = await ctx.domain.charges.create(caller, {
    merchant_id: merchant.id,
    amount: 1000,
    currency: "EUR",
    payment_method: { type: "card", token: token.id },
    capture,
    return_url: "https://shop.example/done",
  });
  const returnUrl = new URL(acquirer.returnUrls.get(charge.id) ?? "");
  const back = (redirectResult: string, token = returnUrl.searchParams.get("t") ?? "") =>
    ctx.domain.charges.returnFromIssuer(charge.id, token, redirectResult);
  const intent = (operation: string) => ctx.store.get("acquirer_intents", `${charge.id}:${operation}`);
  const load = () => ctx.domain.charges.load(true, charge.id);
  /** Adyen's AUTHORISATION for the payment, signed, delivered to the notifications endpoint as Adyen does. */
  const authorisation = (success: boolean) => {
    const unsigned = {
      pspReference: `PSP_${charge.id}`,
      merchantReference: charge.id,
      merchantAccountCode: "PaymentsPlatformECOM",
      amount: { value: 1000, currency: "EUR" },
      eventCode: "AUTHORISATION",
      success: success ? "true" : "false",
      reason: success ? "" : "Refused",
      eventDate: "2026-11-21T10:00:00+01:00",
    } as NotificationItem;
    return { ...unsigned, additionalData: { hmacSignature: signItem(unsigned, HMAC_KEY) } } as NotificationItem;
  };
  const deliver = (...items: NotificationItem[]) =>
    ctx.domain.acquirerNotifications.receive({
      live: "true",
      notificationItems: items.map((NotificationRequestItem) => ({ NotificationRequestItem })),
    });
  const eventsOf = async (type: EventDoc["type"]) =>
    (await ctx.store.findAll("events", { livemode: true, type }, 100)).filter((e) => e.payload.tx_id === charge.id);
  return {
    ...ctx,
    ...acquirer,
    caller,
    merchant,
    charge,
    returnUrl,
    back,
    intent,
    load,
    authorisation,
    deliver,
    eventsOf,
  };
}

describe("a challenge run by the acquirer", () => {
  it("waits requires_action on the issuer's page; the payer's return captures it, under tx_…:authenticate", async () => {
    const w = await world();
    expect(w.charge).toMatchObject({
      status: "requires_action",
      amount_captured: 0,
      next_action: {
        type: "redirect_to_url",
        url: `https://issuer.example/3ds?psp=PSP_${w.charge.id}`,
        return_url: "https://shop.example/done",
      },
      three_d_secure: { result: null, liability_shift: false, acquirer_challenge: true },
    });
    // The return address the acquirer was given is our challenge step's, with the charge's link token.
    expect(w.returnUrl.pathname).toBe(`/3ds/${w.charge.id}/return`);
    expect(await w.intent("authorize")).toMatchObject({ state: "resolved", resolution: "committed" });

    const done = await w.back("passed");
    expect(done).toMatchObject({ status: "captured", amount_captured: 1000, next_action: null, expires_at: null });
    expect(done.three_d_secure).toMatchObject({ result: "authenticated", liability_shift: true, eci: "05" });
    expect(w.completions).toEqual([
      { idempotencyKey: `${w.charge.id}:authenticate`, chargeId: w.charge.id, redirectResult: "passed", capture: true },
    ]);
    expect(await w.intent("authenticate")).toMatchObject({
      state: "resolved",
      resolution: "committed",
      redirect_result: "passed",
    });
    // A reload of the return page sends nothing again.
    expect(await w.back("passed")).toMatchObject({ status: "captured" });
    expect(w.completions).toHaveLength(1);
    expect((await w.domain.ledger.verify()).differences).toEqual([]);
  });

  it("keeps `capture: false` (authorized only) and declines a failed challenge as authentication_failed", async () => {
    const held = await world(false);
    expect(await held.back("passed")).toMatchObject({ status: "authorized", amount_captured: 0 });
    expect(held.completions[0]?.capture).toBe(false);

    const failed = await world();
    expect(await failed.back("refused")).toMatchObject({
      status: "declined",
      failure_code: "authentication_failed",
      three_d_secure: { result: "failed", liability_shift: false },
    });
  });

  it("opens nothing for a wrong token, and refuses a return without its result", async () => {
    const w = await world();
    await expect(w.back("passed", "wrong")).rejects.toMatchObject({ code: "not_found" });
    await expect(w.back("")).rejects.toMatchObject({ code: "invalid_request" });
    expect(w.completions).toEqual([]);
    await expect(w.domain.charges.answerFromPage(await w.load(), true)).rejects.toMatchObject({
      code: "invalid_state_transition",
    });
  });

  it("a completion whose answer was lost is finished by recovery after the lock, with the same key and result", async () => {
    const w = await world();
    w.state.lose = true;
    await expect(w.back("passed")).rejects.toThrow(/connection reset/);
    expect(await w.load()).toMatchObject({ status: "requires_action" });
    expect(await w.intent("authenticate")).toMatchObject({ state: "open", redirect_result: "passed" });
    w.state.lose = false;

    w.advance(LOCK - 1);
    expect(await w.domain.jobs.recoverIntents()).toBe(0);
    w.advance(1);
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    expect(await w.load()).toMatchObject({ status: "captured", amount_captured: 1000 });
    expect(w.completions.map((c) => [c.idempotencyKey, c.redirectResult])).toEqual([
      [`${w.charge.id}:authenticate`, "passed"],
      [`${w.charge.id}:authenticate`, "passed"],
    ]);
    expect([...w.authorized.values()]).toEqual([1]);
    expect(await w.domain.charges.unresolvedIntents(true)).toEqual([]);
    expect((await w.domain.ledger.verify()).differences).toEqual([]);
  });

  it("reverses an authorization whose charge expired while its completion was in doubt", async () => {
    const w = await world();
    w.state.lose = true;
    await expect(w.back("passed")).rejects.toThrow(/connection reset/);
    w.state.lose = false;
    // The charge expires before the recovery job gets to the intent (its lock renewed meanwhile).
    await w.store.update("acquirer_intents", `${w.charge.id}:authenticate`, {
      set: { locked_until: new Date(Date.parse("2026-11-21T10:00:00Z") + (EXPIRY + LOCK) * 1000).toISOString() },
    });
    w.advance(EXPIRY + 1);
    expect(await w.domain.charges.expireDue(true)).toBe(1);
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    expect(await w.load()).toMatchObject({ status: "expired", amount_captured: 0 });
    expect(w.reversed).toEqual([`${w.charge.id}:reverse`]);
    expect(await w.intent("authenticate")).toMatchObject({ state: "resolved", resolution: "reversed" });
  });
});

describe("a challenge's completion the acquirer takes undecided (Adyen's Received / Pending from /payments/details)", () => {
  it("leaves the charge pending, its intent resolved; the AUTHORISATION captures it once, however often it comes", async () => {
    const w = await world();
    w.state.received = true;
    const back = await w.back("passed");
    expect(back).toMatchObject({
      status: "pending",
      amount_captured: 0,
      next_action: null,
      expires_at: null,
      processor_ref: `PSP_${w.charge.id}`,
      three_d_secure: { result: "authenticated", liability_shift: true, eci: "05" },
    });
    expect(await w.intent("authenticate")).toMatchObject({ state: "resolved", resolution: "committed" });
    expect(await w.domain.charges.unresolvedIntents(true)).toEqual([]);
    // Nothing is owed and nothing is announced while Adyen decides.
    expect(await w.eventsOf("payment.authorized")).toEqual([]);
    // A reload of the return page sends nothing again.
    expect(await w.back("passed")).toMatchObject({ status: "pending" });
    expect(w.completions).toHaveLength(1);

    const item = w.authorisation(true);
    await w.deliver(item, item);
    await w.deliver(item);
    expect(await w.load()).toMatchObject({ status: "captured", amount_captured: 1000 });
    expect(await w.eventsOf("payment.authorized")).toHaveLength(1);
    expect(await w.eventsOf("payment.captured")).toHaveLength(1);
    expect(await w.domain.acquirerNotifications.inState(true, "applied")).toHaveLength(1);
    expect((await w.domain.ledger.verify()).differences).toEqual([]);
  });

  it("keeps `capture: false` authorized only, and a refused AUTHORISATION declines it card_declined, once", async () => {
    const held = await world(false);
    held.state.received = true;
    expect(await held.back("passed")).toMatchObject({ status: "pending" });
    await held.deliver(held.authorisation(true), held.authorisation(true));
    expect(await held.load()).toMatchObject({ status: "authorized", amount_captured: 0 });
    expect(await held.eventsOf("payment.captured")).toEqual([]);

    const refused = await world();
    refused.state.received = true;
    await refused.back("passed");
    const item = refused.authorisation(false);
    await refused.deliver(item, item);
    expect(await refused.load()).toMatchObject({
      status: "declined",
      failure_code: "card_declined",
      amount_captured: 0,
    });
    expect(await refused.eventsOf("payment.failed")).toHaveLength(1);
    expect((await refused.domain.ledger.verify()).differences).toEqual([]);
  });

  it("an AUTHORISATION before the completion commits (its answer lost) waits; recovery commits pending, then it applies once", async () => {
    const w = await world();
    w.state.received = true;
    w.state.lose = true;
    await expect(w.back("passed")).rejects.toThrow(/connection reset/);
    const item = w.authorisation(true);
    await w.deliver(item, item);
    expect(await w.load()).toMatchObject({ status: "requires_action" });
    expect(await w.domain.acquirerNotifications.inState(true, "waiting")).toHaveLength(1);
    w.state.lose = false;

    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    expect(await w.load()).toMatchObject({ status: "pending", processor_ref: `PSP_${w.charge.id}` });
    expect(await w.domain.jobs.applyNotifications()).toBe(1);
    await w.deliver(item);
    expect(await w.load()).toMatchObject({ status: "captured", amount_captured: 1000 });
    expect(w.completions.map((c) => c.idempotencyKey)).toEqual([
      `${w.charge.id}:authenticate`,
      `${w.charge.id}:authenticate`,
    ]);
    expect([...w.authorized.values()]).toEqual([1]);
    expect(await w.eventsOf("payment.authorized")).toHaveLength(1);
    expect(await w.eventsOf("payment.captured")).toHaveLength(1);
    expect(await w.domain.charges.unresolvedIntents(true)).toEqual([]);
    expect((await w.domain.ledger.verify()).differences).toEqual([]);
  });

  it("reverses one taken undecided whose charge expired while its completion was in doubt; its AUTHORISATION changes nothing", async () => {
    const w = await world();
    w.state.received = true;
    w.state.lose = true;
    await expect(w.back("passed")).rejects.toThrow(/connection reset/);
    w.state.lose = false;
    await w.store.update("acquirer_intents", `${w.charge.id}:authenticate`, {
      set: { locked_until: new Date(Date.parse("2026-11-21T10:00:00Z") + (EXPIRY + LOCK) * 1000).toISOString() },
    });
    w.advance(EXPIRY + 1);
    expect(await w.domain.charges.expireDue(true)).toBe(1);
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    expect(w.reversed).toEqual([`${w.charge.id}:reverse`]);
    expect(await w.intent("authenticate")).toMatchObject({ state: "resolved", resolution: "reversed" });
    await w.deliver(w.authorisation(true));
    expect(await w.load()).toMatchObject({ status: "expired", amount_captured: 0 });
    expect((await w.domain.acquirerNotifications.inState(true, "noted")).map((n) => n.effect)).toEqual(["confirmed"]);
  });

  it("holds it for review once authorized when the evaluation decided `review`, as a charge authorized at once", async () => {
    const review: FraudScreen = {
      assessCharge: async () => ({
        evaluationId: "fe_review",
        decision: "review",
        score: 65,
        signals: ["test_card_elevated_risk"],
        reviewWindowSeconds: 7200,
        record: async () => {},
      }),
    };
    const w = await world(true, review);
    w.state.received = true;
    // The authorization was sent without capture: a review holds it whatever `capture` says.
    expect(w.completions).toEqual([]);
    expect(await w.back("passed")).toMatchObject({ status: "pending", review: null });
    expect(w.completions[0]?.capture).toBe(false);
    w.advance(30);
    const item = w.authorisation(true);
    await w.deliver(item, item);
    const held = await w.load();
    expect(held).toMatchObject({ status: "authorized", amount_captured: 0, review: { status: "open", capture: true } });
    expect(Date.parse(held.review_expires_at ?? "")).toBe(Date.parse("2026-11-21T10:00:30Z") + 7200 * 1000);
    expect(await w.eventsOf("payment.authorized")).toHaveLength(1);
    expect(await w.eventsOf("payment.captured")).toEqual([]);
    expect((await w.domain.charges.approveReview(w.caller, w.charge.id)).status).toBe("captured");
    expect((await w.domain.ledger.verify()).differences).toEqual([]);
  });
});
