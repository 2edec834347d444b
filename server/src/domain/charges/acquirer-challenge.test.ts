import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { createSimulatorProcessor } from "../../adapters/processor-simulator.ts";
import type { AuthenticationReturn, CardAuthorizationRequest, Processor } from "./processor.ts";

// 3-D Secure run by the acquirer (Adyen: three-d-secure.ts challengedByAcquirer, returnFromIssuer,
// finishAuthenticationReturn): the authorization answers a challenge, the charge waits requires_action on
// the issuer's page, and the payer's return finishes it under an intent keyed `tx_…:authenticate`. The
// acquirer here is a fake with Adyen's shape (authenticateCard not_needed, a challenge card, and
// completeAuthentication) whose answer can be lost after it applied the call, as a crash or a time-out
// loses it.

const CHALLENGE = "4917610000000000"; // Adyen's 3-D Secure 2 challenge test card
const LOCK = 60; // IDEMPOTENCY_LOCK_SECONDS' default
const EXPIRY = 3600; // THREE_D_SECURE_EXPIRY_SECONDS' default

function adyenLike() {
  const sim = createSimulatorProcessor();
  const returnUrls = new Map<string, string>();
  const completions: AuthenticationReturn[] = [];
  /** Payments the fake authorized after their challenge (applied once per key), and reversals. */
  const authorized = new Map<string, number>();
  const reversed: string[] = [];
  const state = { lose: false };
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

async function world(capture = true) {
  const acquirer = adyenLike();
  const ctx = testDomain({ processor: acquirer.processor });
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
  return { ...ctx, ...acquirer, caller, merchant, charge, returnUrl, back, intent, load };
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
