import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import type { OutcomeRecorder } from "../kernel/commit.ts";
import { DomainError } from "../kernel/errors.ts";
import { losingAcquirer } from "./losing-acquirer.fixture.ts";
import { AcquirerCallInDoubt } from "./processor.ts";

// A call to the acquirer left in doubt (AcquirerCallInDoubt: what the Adyen connector throws for a time-out,
// a dropped connection, a 5xx or 429) is answered `acquirer_in_doubt` (503, in-doubt.ts) by a charge, a
// capture, a void and a review's approval or rejection, with the charge unchanged and the intent open; a
// retry with the same Idempotency-Key, or the recovery job, completes it, applied once at the acquirer. A
// refund is recorded before its call, so it is answered as made and completed by recovery.

/** The simulator, whose calls named in `doubt` apply and then end in doubt (the answer lost). */
function doubtfulAcquirer() {
  const { processor, sim, losing } = losingAcquirer(
    (name) => new AcquirerCallInDoubt(`${name}: HTTP 500 Internal error`),
  );
  return { processor, sim, doubt: losing };
}

async function world() {
  const acquirer = doubtfulAcquirer();
  const ctx = testDomain({ processor: acquirer.processor });
  const caller = ctx.caller(false);
  const merchant = await ctx.domain.merchants.create(caller, { name: "Shop" });
  const card = async (number: string) =>
    ctx.domain.tokens.create(caller, { card: number, holder: "Ada", exp_month: 12, exp_year: 2031 });
  const token = await card("4242424242424242");
  const charge = async (capture: boolean, tokenId = token.id) =>
    ctx.domain.charges.create(caller, {
      merchant_id: merchant.id,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card", token: tokenId },
      capture,
    });
  /** A caller whose request carries an Idempotency-Key (stored as `key`); its outcome is not kept here. */
  const withKey = (key: string) => {
    const outcome: OutcomeRecorder = { key, record: async () => {} };
    return { ...caller, outcome };
  };
  const intent = (id: string) => ctx.store.get("acquirer_intents", id);
  const stored = (id: string) => ctx.store.get("charges", id);
  return { ...ctx, ...acquirer, caller, card, charge, withKey, intent, stored };
}

/** The answer of a use case whose call was left in doubt: an `acquirer_in_doubt` DomainError naming the charge. */
async function inDoubt(promise: Promise<unknown>, chargeId: string, what: RegExp) {
  await expect(promise).rejects.toBeInstanceOf(DomainError);
  await expect(promise).rejects.toMatchObject({
    code: "acquirer_in_doubt",
    cause: expect.any(AcquirerCallInDoubt),
    message: expect.stringContaining(`charge ${chargeId} `),
  });
  await expect(promise).rejects.toMatchObject({ message: expect.stringMatching(what) });
}

const LOCK = 60; // IDEMPOTENCY_LOCK_SECONDS' default

describe("a call to the acquirer left in doubt", () => {
  it("a partial capture: acquirer_in_doubt, the charge still authorized; the keyed retry captures it once, with its amount", async () => {
    const w = await world();
    const charge = await w.charge(false);
    w.doubt.add("capture");
    await inDoubt(w.domain.charges.capture(w.withKey("test:cap"), charge.id, 600), charge.id, /same Idempotency-Key/);
    expect(await w.stored(charge.id)).toMatchObject({ status: "authorized", amount_captured: 0 });
    expect(await w.intent(`${charge.id}:capture`)).toMatchObject({
      state: "open",
      amount: 600,
      request_key: "test:cap",
    });
    w.doubt.clear();
    const captured = await w.domain.charges.capture(w.withKey("test:cap"), charge.id, 600);
    expect(captured).toMatchObject({ status: "captured", amount_captured: 600 });
    expect(w.sim.counts().calls[`${charge.id}:capture`]).toBe(2);
    expect(w.sim.counts().applied.capture).toEqual({ [charge.processor_ref as string]: 1 });
    expect((await w.domain.ledger.verify()).differences).toEqual([]);
  });

  it("a void without a key: acquirer_in_doubt, then the recovery job completes it once", async () => {
    const w = await world();
    const charge = await w.charge(false);
    w.doubt.add("void");
    await inDoubt(w.domain.charges.void(w.caller, charge.id), charge.id, /recovery job completes it/);
    expect(await w.stored(charge.id)).toMatchObject({ status: "authorized" });
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(0); // still in doubt: the acquirer answers no better
    w.doubt.clear();
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    expect(await w.stored(charge.id)).toMatchObject({ status: "voided" });
    expect(w.sim.counts().applied.void).toEqual({ [charge.processor_ref as string]: 1 });
    expect(await w.domain.charges.unresolvedIntents(false)).toEqual([]);
  });

  it("a charge's authorization: acquirer_in_doubt, nothing stored", async () => {
    const w = await world();
    w.doubt.add("authorizeCard");
    const failed = w.charge(true);
    await expect(failed).rejects.toMatchObject({ code: "acquirer_in_doubt" });
    expect(await w.store.findAll("charges", {}, 10)).toEqual([]);
    expect(await w.domain.charges.unresolvedIntents(false)).toMatchObject([{ operation: "authorize", state: "open" }]);
  });

  it("a review's approval and rejection: acquirer_in_doubt, the review still open until completed", async () => {
    const w = await world();
    // The sandbox's elevated-risk test card always goes to review (docs/fraud.md).
    const risky = await w.card("4000000000009235");
    const approved = await w.charge(true, risky.id);
    const rejected = await w.charge(true, risky.id);
    expect(approved.review?.status).toBe("open");
    w.doubt.add("capture").add("void");
    await inDoubt(w.domain.charges.approveReview(w.caller, approved.id), approved.id, /captured/);
    await inDoubt(w.domain.charges.rejectReview(w.caller, rejected.id), rejected.id, /voided/);
    expect((await w.stored(approved.id))?.review?.status).toBe("open");
    w.doubt.clear();
    expect(await w.domain.charges.approveReview(w.caller, approved.id)).toMatchObject({ status: "captured" });
    expect(await w.domain.charges.rejectReview(w.caller, rejected.id)).toMatchObject({ status: "voided" });
    expect(w.sim.counts().applied.capture).toEqual({ [approved.processor_ref as string]: 1 });
    expect(w.sim.counts().applied.void).toEqual({ [rejected.processor_ref as string]: 1 });
  });

  it("a refund is answered as made (never in doubt): recorded, counted against what is left, sent again once by recovery", async () => {
    const w = await world();
    const charge = await w.charge(true);
    w.doubt.add("refund");
    const refund = await w.domain.charges.refund(w.caller, charge.id, {});
    expect(refund).toMatchObject({ status: "succeeded", amount: 1000 });
    // A second full refund without a key (a client that lost the answer) finds the charge refunded.
    await expect(w.domain.charges.refund(w.caller, charge.id, {})).rejects.toMatchObject({
      code: "invalid_state_transition",
    });
    w.doubt.clear();
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    expect(w.sim.counts().calls[`${refund.id}:refund`]).toBe(2);
    expect(w.sim.counts().applied.refund).toEqual({ [`${refund.id}:refund`]: 1 });
    expect((await w.domain.ledger.verify()).differences).toEqual([]);
  });

  it("any other failure passes through unchanged (a 500: not known to be the acquirer's silence)", async () => {
    const w = await world();
    const charge = await w.charge(false);
    w.processor.capture = async () => {
      throw new Error("a bug");
    };
    await expect(w.domain.charges.capture(w.caller, charge.id)).rejects.toThrow(/^a bug$/);
  });
});

describe("a refund the acquirer refuses as a request (Adyen's 4xx)", () => {
  const refused = async () =>
    ({ status: "failed", reason: "the acquirer refused the refund request (HTTP 422)", requestRefused: true }) as const;

  it("at its first call: failed once, its amount refundable again, the intent resolved, the ledger clean", async () => {
    const w = await world();
    const charge = await w.charge(true);
    w.processor.refund = refused;
    const refund = await w.domain.charges.refund(w.caller, charge.id, { amount: 400 });
    expect(await w.store.get("refunds", refund.id)).toMatchObject({ status: "failed" });
    expect(await w.stored(charge.id)).toMatchObject({ status: "captured", amount_refunded: 0 });
    expect(await w.intent(`${refund.id}:refund`)).toMatchObject({ state: "resolved" });
    // Nothing left for recovery to resend (it used to resend a refused refund on every pass).
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(0);
    expect((await w.domain.ledger.verify()).differences).toEqual([]);
  });

  it("on a repeat after a call left in doubt: kept in doubt (the first call may have refunded), not failed", async () => {
    const w = await world();
    const charge = await w.charge(true);
    w.doubt.add("refund");
    const refund = await w.domain.charges.refund(w.caller, charge.id, {});
    w.processor.refund = refused;
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(0);
    expect(await w.store.get("refunds", refund.id)).toMatchObject({ status: "succeeded" });
    expect(await w.intent(`${refund.id}:refund`)).toMatchObject({ state: "recovering" });
  });
});
