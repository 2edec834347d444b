import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import type { OutcomeRecorder } from "../kernel/commit.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
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

describe("a local payment's start left in doubt", () => {
  const IBAN = "DE89 3704 0044 0532 0130 00";
  const local = async (w: Awaited<ReturnType<typeof world>>, type: "pix" | "sepa_debit", who = w.caller) => {
    const merchant = await w.domain.merchants.create(w.caller, { name: "Loja" });
    return w.domain.charges.create(who, {
      merchant_id: merchant.id,
      amount: 2500,
      ...(type === "pix"
        ? { currency: "BRL", payment_method: { type } }
        : { currency: "EUR", payment_method: { type, iban: IBAN, account_holder: "Ada Lovelace" } }),
    });
  };
  /** The one intent in doubt, and its charge's id. */
  const openStart = async (w: Awaited<ReturnType<typeof world>>) => {
    const [intent, ...others] = await w.domain.charges.unresolvedIntents(false);
    expect(others).toEqual([]);
    expect(intent).toMatchObject({ operation: "start_local", finish: "create", state: "open" });
    return intent?.charge_id as string;
  };

  it("a SEPA debit without a key: acquirer_in_doubt, nothing stored, the account sealed; recovery starts it again under its key and reverses it, once", async () => {
    const w = await world();
    w.doubt.add("startLocalPayment");
    await expect(local(w, "sepa_debit")).rejects.toMatchObject({
      code: "acquirer_in_doubt",
      message: expect.stringMatching(/start of charge tx_\w+'s payment.*direct debit .* cancelled by the recovery job/),
    });
    expect(await w.store.findAll("charges", {}, 10)).toEqual([]);
    const id = await openStart(w);
    const stored = await w.intent(`${id}:start_local`);
    expect(stored).toMatchObject({ local_method: "sepa_debit", payer_account: { kek_id: expect.any(String) } });
    // The return address is kept and sent again as it was (an acquirer refuses a key reused with another request).
    expect(stored?.return_url).toContain(`/3ds/${id}/return`);
    // The IBAN and its holder are sealed, never in clear in storage.
    expect(JSON.stringify(stored)).not.toMatch(/370400440532013000|3704 0044|Lovelace/);

    w.doubt.clear();
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    const counts = w.sim.counts();
    expect(counts.calls[`${id}:start_local`]).toBe(2);
    expect(counts.applied.start_local).toEqual({ [id]: 1 });
    expect(counts.calls[`${id}:reverse`]).toBe(1);
    expect(Object.values(counts.applied.reverse)).toEqual([1]);
    expect(await w.intent(`${id}:start_local`)).toMatchObject({
      state: "resolved",
      resolution: "reversed",
      payer_account: null,
    });
    // The acquirer's word on the debit it started (cancelled, or refused) changes nothing: no charge records it.
    const noMark = async () => {};
    const outcome = { succeeded: false, reference: "PSP1" };
    expect(await w.domain.charges.acquirerOutcomes.authorization(false, id, outcome, noMark)).toBe("applied");
  });

  it("a pix with a key: acquirer_in_doubt; the same Idempotency-Key resumes the same charge, started once", async () => {
    const w = await world();
    w.doubt.add("startLocalPayment");
    await expect(local(w, "pix", w.withKey("test:pix"))).rejects.toMatchObject({ code: "acquirer_in_doubt" });
    const id = await openStart(w);
    w.doubt.clear();
    const charge = await local(w, "pix", w.withKey("test:pix"));
    expect(charge).toMatchObject({ id, status: "pending", next_action: { type: "display_qr_code" } });
    expect(w.sim.counts().calls[`${id}:start_local`]).toBe(2);
    expect(w.sim.counts().applied.start_local).toEqual({ [id]: 1 });
    // Deleted once its charge is stored, as a first call's is (intents.ts keptOnceResolved).
    expect(await w.intent(`${id}:start_local`)).toBeNull();
    expect(await w.domain.charges.unresolvedIntents(false)).toEqual([]);
  });

  it("a pix without a key: abandoned by the recovery job without a call (the payer never saw its code)", async () => {
    const w = await world();
    w.doubt.add("startLocalPayment");
    await expect(local(w, "pix")).rejects.toMatchObject({ code: "acquirer_in_doubt" });
    const id = await openStart(w);
    w.doubt.clear();
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    expect(w.sim.counts().calls[`${id}:start_local`]).toBe(1);
    expect(w.sim.counts().calls[`${id}:reverse`]).toBeUndefined();
    expect(await w.intent(`${id}:start_local`)).toMatchObject({ state: "resolved", resolution: "abandoned" });
    // Its expiry unpaid is expected; a payment made anyway holds money no charge records: for a person.
    const noMark = async () => {};
    const report = (succeeded: boolean) =>
      w.domain.charges.acquirerOutcomes.authorization(false, id, { succeeded, reference: "PSP2" }, noMark);
    expect(await report(false)).toBe("applied");
    expect(await report(true)).toBe("attention");
  });

  it("a start the acquirer refuses as a request: its 400 passes through, and no intent is left to repeat", async () => {
    const w = await world();
    w.processor.startLocalPayment = async () => {
      throw invalid("payment_method", "The acquirer (Adyen) refused this sepa_debit payment.");
    };
    await expect(local(w, "sepa_debit")).rejects.toMatchObject({ code: "invalid_request", param: "payment_method" });
    expect(await w.store.findAll("acquirer_intents", {}, 10)).toEqual([]);
    expect(await w.store.findAll("charges", {}, 10)).toEqual([]);
  });
});
