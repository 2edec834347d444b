import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { createSimulatorProcessor, type SimulatorProcessor } from "../../adapters/processor-simulator.ts";
import type { OutcomeRecorder } from "../kernel/commit.ts";
import { keptOnceResolved } from "./intents.ts";
import { losingAcquirer } from "./losing-acquirer.fixture.ts";

// Crash safety toward the acquirer (intents.ts): a call whose answer is lost (the instance dies after
// the acquirer applied it, before the outcome commits) is never applied twice, and is resolved by a
// retry of the same request or by the recovery job once its lock (IDEMPOTENCY_LOCK_SECONDS) runs out.

/** The simulator, with calls whose answer is lost after the acquirer applied them (a crash, a time-out). */
function flakyAcquirer() {
  const { processor, sim, losing } = losingAcquirer(
    (name) => new Error(`${name}: connection reset after the acquirer applied it`),
  );
  return { processor, sim, failing: losing };
}

async function world() {
  const acquirer = flakyAcquirer();
  const ctx = testDomain({ processor: acquirer.processor });
  const caller = ctx.caller(true);
  const merchant = await ctx.domain.merchants.create(caller, { name: "Shop" });
  const token = await ctx.domain.tokens.create(caller, {
    card: "4242424242424242",
    holder: "Ada",
    exp_month: 12,
    exp_year: 2031,
  });
  const charge = (capture = true, who = caller) =>
    ctx.domain.charges.create(who, {
      merchant_id: merchant.id,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
      capture,
    });
  /** A caller whose request carries an Idempotency-Key (stored as `key`); its outcome is not kept here. */
  const withKey = (key: string) => {
    const outcome: OutcomeRecorder = { key, record: async () => {} };
    return { ...caller, outcome };
  };
  const charges = () => ctx.store.findAll("charges", { livemode: true }, 100);
  const recover = () => ctx.domain.jobs.recoverIntents();
  const unresolved = () => ctx.domain.charges.unresolvedIntents(true);
  const verify = () => ctx.domain.ledger.verify();
  return { ...ctx, ...acquirer, caller, merchant, charge, withKey, charges, recover, unresolved, verify };
}

const LOCK = 60; // IDEMPOTENCY_LOCK_SECONDS' default

describe("acquirer intents", () => {
  it("an authorization whose answer was lost is reversed by recovery after the lock, never authorized again", async () => {
    const w = await world();
    w.failing.add("authorizeCard");
    await expect(w.charge()).rejects.toThrow(/connection reset/);
    expect(await w.charges()).toEqual([]);
    const [intent] = await w.unresolved();
    expect(intent).toMatchObject({ operation: "authorize", state: "open", capture: true });
    w.failing.clear();

    // Not before the lock runs out: the request may still be alive.
    w.advance(LOCK - 1);
    expect(await w.recover()).toBe(0);
    w.advance(1);
    expect(await w.recover()).toBe(1);
    expect(await w.unresolved()).toEqual([]);
    const chargeId = intent?.charge_id as string;
    expect(await w.store.get("acquirer_intents", `${chargeId}:authorize`)).toMatchObject({
      state: "resolved",
      resolution: "reversed",
    });
    const counts = w.sim.counts();
    expect(counts.applied.authorize).toEqual({ [chargeId]: 1 });
    expect(Object.values(counts.applied.reverse)).toEqual([1]);
    expect(await w.charges()).toEqual([]);
  });

  it("a charge decided by its first call keeps no intent; later calls' intents are kept, resolved", async () => {
    const w = await world();
    const captured = await w.charge();
    const held = await w.charge(false);
    expect(captured.status).toBe("captured");
    expect(held.status).toBe("authorized");
    // Deleted in the charge's transaction: nothing reads it again (intents.ts keptOnceResolved).
    expect(await w.store.findAll("acquirer_intents", { livemode: true }, 10)).toEqual([]);
    await w.domain.charges.capture(w.caller, held.id);
    const kept = await w.store.findAll("acquirer_intents", { livemode: true }, 10);
    expect(kept).toEqual([expect.objectContaining({ id: `${held.id}:capture`, state: "resolved" })]);
    // Later calls are keyed on their own operation: a refund of each works and the money adds up.
    await w.domain.charges.refund(w.caller, captured.id, { amount: 400 });
    expect((await w.verify()).differences).toEqual([]);
  });

  it("keeps a resolved intent unless it is a creation's first call that decided its charge", () => {
    const create = { operation: "authorize", finish: "create", attempts: 1 } as const;
    for (const status of ["authorized", "captured", "declined"] as const) {
      expect(keptOnceResolved(create, "committed", status)).toBe(false);
    }
    // The acquirer's AUTHORISATION decides these later, from the intent's `capture`.
    expect(keptOnceResolved(create, "committed", "pending")).toBe(true);
    expect(keptOnceResolved(create, "committed", "requires_action")).toBe(true);
    // A call in doubt that was resumed or recovered, and anything not committed as sent, stay on record.
    expect(keptOnceResolved({ ...create, attempts: 2 }, "committed", "captured")).toBe(true);
    expect(keptOnceResolved(create, "reversed", "captured")).toBe(true);
    expect(keptOnceResolved(create, "conflict", "captured")).toBe(true);
    // Captures, voids, reviews, refunds and 3-D Secure completions: their key guards a second request.
    expect(keptOnceResolved({ ...create, operation: "capture", finish: "capture" }, "committed", "captured")).toBe(
      true,
    );
    expect(keptOnceResolved({ ...create, finish: "authenticate" }, "committed", "captured")).toBe(true);
    // A local payment's start whose charge is stored (pending), on any attempt; kept when reversed or abandoned.
    const start = { operation: "start_local", finish: "create", attempts: 1 } as const;
    expect(keptOnceResolved(start, "committed", "pending")).toBe(false);
    expect(keptOnceResolved({ ...start, attempts: 3 }, "committed", "pending")).toBe(false);
    expect(keptOnceResolved(start, "reversed", "pending")).toBe(true);
    expect(keptOnceResolved(start, "abandoned", "pending")).toBe(true);
  });

  it("a retry with the same Idempotency-Key resumes the same charge: one authorization, one capture", async () => {
    const w = await world();
    w.failing.add("authorizeCard");
    await expect(w.charge(true, w.withKey("live:abc"))).rejects.toThrow(/connection reset/);
    w.failing.clear();
    const charge = await w.charge(true, w.withKey("live:abc"));
    const [intent] = await w.store.findAll("acquirer_intents", { livemode: true }, 10);
    expect(charge.id).toBe(intent?.charge_id);
    expect(charge).toMatchObject({ status: "captured", amount_captured: 1000 });
    expect(intent).toMatchObject({ state: "resolved", resolution: "committed", attempts: 2 });
    const counts = w.sim.counts();
    expect(counts.calls[`${charge.id}:authorize`]).toBe(2);
    expect(counts.applied.authorize).toEqual({ [charge.id]: 1 });
    expect(counts.applied.capture).toEqual({ [charge.processor_ref as string]: 1 });
    // Nothing left for recovery, and the money is counted once.
    w.advance(LOCK);
    expect(await w.recover()).toBe(0);
    expect((await w.verify()).differences).toEqual([]);
  });

  it("a new request with another key is a new charge (the first one is reversed by recovery)", async () => {
    const w = await world();
    w.failing.add("authorizeCard");
    await expect(w.charge(true, w.withKey("live:one"))).rejects.toThrow();
    w.failing.clear();
    const second = await w.charge(true, w.withKey("live:two"));
    w.advance(LOCK);
    expect(await w.recover()).toBe(1);
    expect(await w.charges()).toEqual([second]);
    expect(Object.keys(w.sim.counts().applied.reverse)).toHaveLength(1);
  });

  it("a capture whose answer was lost is completed by recovery: captured once, credited once", async () => {
    const w = await world();
    const charge = await w.charge(false);
    w.failing.add("capture");
    await expect(w.domain.charges.capture(w.caller, charge.id, 600)).rejects.toThrow(/connection reset/);
    expect(await w.store.get("charges", charge.id)).toMatchObject({ status: "authorized", amount_captured: 0 });
    w.failing.clear();
    w.advance(LOCK);
    expect(await w.recover()).toBe(1);
    expect(await w.store.get("charges", charge.id)).toMatchObject({ status: "captured", amount_captured: 600 });
    expect(w.sim.counts().applied.capture).toEqual({ [charge.processor_ref as string]: 1 });
    expect(await w.unresolved()).toEqual([]);
    expect((await w.verify()).differences).toEqual([]);
  });

  it("a capture retried before recovery completes the one in doubt, with its amount", async () => {
    const w = await world();
    const charge = await w.charge(false);
    w.failing.add("capture");
    await expect(w.domain.charges.capture(w.caller, charge.id, 600)).rejects.toThrow();
    w.failing.clear();
    const captured = await w.domain.charges.capture(w.caller, charge.id, 600);
    expect(captured).toMatchObject({ status: "captured", amount_captured: 600 });
    expect(w.sim.counts().calls[`${charge.id}:capture`]).toBe(2);
    expect(w.sim.counts().applied.capture).toEqual({ [charge.processor_ref as string]: 1 });
  });

  it("a void whose answer was lost is completed by recovery", async () => {
    const w = await world();
    const charge = await w.charge(false);
    w.failing.add("void");
    await expect(w.domain.charges.void(w.caller, charge.id)).rejects.toThrow();
    w.failing.clear();
    w.advance(LOCK);
    expect(await w.recover()).toBe(1);
    expect(await w.store.get("charges", charge.id)).toMatchObject({ status: "voided" });
    expect(w.sim.counts().applied.void).toEqual({ [charge.processor_ref as string]: 1 });
  });

  it("a refund whose call was lost stands (answered) and is sent again by recovery, applied once", async () => {
    const w = await world();
    const charge = await w.charge();
    w.failing.add("refund");
    const refund = await w.domain.charges.refund(w.caller, charge.id, { amount: 400 });
    expect(refund).toMatchObject({ status: "succeeded", amount: 400 });
    expect(await w.unresolved()).toMatchObject([{ id: `${refund.id}:refund`, operation: "refund", amount: 400 }]);
    w.failing.clear();
    w.advance(LOCK);
    expect(await w.recover()).toBe(1);
    expect(await w.unresolved()).toEqual([]);
    const counts = w.sim.counts();
    expect(counts.calls[`${refund.id}:refund`]).toBe(2);
    expect(counts.applied.refund).toEqual({ [`${refund.id}:refund`]: 1 });
    expect((await w.verify()).differences).toEqual([]);
  });

  it("a request whose intent recovery took over cannot commit it again", async () => {
    const w = await world();
    const charge = await w.charge(false);
    // A capture so slow its lock runs out: recovery completes it first, and the slow request is refused.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const capture = w.processor.capture;
    w.processor.capture = async (request) => {
      const answer = await capture(request);
      await gate;
      return answer;
    };
    const slow = w.domain.charges.capture(w.caller, charge.id);
    await new Promise((resolve) => setImmediate(resolve));
    w.processor.capture = capture;
    w.advance(LOCK);
    expect(await w.recover()).toBe(1);
    release();
    // Unkeyed, it is told what the charge now is; a keyed one would get the captured charge (below).
    await expect(slow).rejects.toMatchObject({ code: "invalid_state_transition" });
    expect(await w.store.get("charges", charge.id)).toMatchObject({ status: "captured", amount_captured: 1000 });
    expect(w.sim.counts().applied.capture).toEqual({ [charge.processor_ref as string]: 1 });
    expect((await w.verify()).differences).toEqual([]);
  });
});

describe("production without an acquirer (PRODUCTION_ACQUIRER unset)", () => {
  it("refuses every money operation with acquirer_not_configured and stores nothing; the sandbox is unaffected", async () => {
    const ctx = testDomain({ liveProcessor: null });
    const live = ctx.caller(true);
    const merchant = await ctx.domain.merchants.create(live, { name: "Shop" });
    const token = await ctx.domain.tokens.create(live, {
      card: "4242424242424242",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    const body = {
      merchant_id: merchant.id,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card" as const, token: token.id },
    };
    await expect(ctx.domain.charges.create(live, body)).rejects.toMatchObject({
      code: "acquirer_not_configured",
      message: expect.stringContaining("PRODUCTION_ACQUIRER"),
    });
    for (const refused of [
      ctx.domain.charges.capture(live, "tx_x"),
      ctx.domain.charges.void(live, "tx_x"),
      ctx.domain.charges.refund(live, "tx_x", {}),
      ctx.domain.charges.approveReview(live, "tx_x"),
      ctx.domain.charges.rejectReview(live, "tx_x"),
    ]) {
      await expect(refused).rejects.toMatchObject({ code: "acquirer_not_configured" });
    }
    expect(await ctx.store.findAll("charges", {}, 10)).toEqual([]);
    expect(await ctx.store.findAll("acquirer_intents", {}, 10)).toEqual([]);
    expect(await ctx.store.findAll("fraud_evaluations", {}, 10)).toEqual([]);

    const sandbox = ctx.caller(false);
    const m = await ctx.domain.merchants.create(sandbox, { name: "Shop" });
    const t = await ctx.domain.tokens.create(sandbox, {
      card: "4242424242424242",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    const charge = await ctx.domain.charges.create(sandbox, {
      ...body,
      merchant_id: m.id,
      payment_method: { type: "card", token: t.id },
    });
    expect(charge.status).toBe("captured");
  });
});

describe("a keyed retry after recovery completed its call", () => {
  it("gets the captured charge, not a 409; another key still gets the 409", async () => {
    const w = await world();
    const charge = await w.charge(false);
    w.failing.add("capture");
    await expect(w.domain.charges.capture(w.withKey("live:cap"), charge.id)).rejects.toThrow(/connection reset/);
    w.failing.clear();
    w.advance(LOCK);
    expect(await w.recover()).toBe(1);
    const retried = await w.domain.charges.capture(w.withKey("live:cap"), charge.id);
    expect(retried).toMatchObject({ id: charge.id, status: "captured", amount_captured: 1000 });
    await expect(w.domain.charges.capture(w.withKey("live:other"), charge.id)).rejects.toMatchObject({
      code: "invalid_state_transition",
    });
    await expect(w.domain.charges.capture(w.caller, charge.id)).rejects.toMatchObject({
      code: "invalid_state_transition",
    });
    expect(w.sim.counts().applied.capture).toEqual({ [charge.processor_ref as string]: 1 });
  });
});

describe("an authorization repeated on an instance with another BASE_URL (the Adyen crash suite's finding)", () => {
  /**
   * An acquirer strict as Adyen about its idempotency keys: a key reused with a different request is
   * refused as a request (a 422 at Adyen; processor.ts `requestRefused`), whatever the first call did. The
   * first call's answer is lost while `lose` is set.
   */
  function strictAcquirer() {
    const sim = createSimulatorProcessor({ count: true });
    const sent = new Map<string, string | undefined>();
    const state = { lose: true };
    const processor: SimulatorProcessor = {
      ...sim,
      async authorizeCard(request) {
        if (sent.has(request.idempotencyKey) && sent.get(request.idempotencyKey) !== request.returnUrl) {
          return {
            approved: false,
            failureCode: "processing_error",
            failureMessage: "The acquirer refused the payment request; nothing was charged.",
            requestRefused: true,
          };
        }
        sent.set(request.idempotencyKey, request.returnUrl);
        const answer = await sim.authorizeCard(request);
        if (state.lose) throw new Error("authorizeCard: connection reset after the acquirer applied it");
        return answer;
      },
    };
    return { processor, sim, sent, state };
  }

  async function world(base: { url: string }) {
    const acquirer = strictAcquirer();
    const errors: string[] = [];
    const log = { error: (_: object, message: string) => errors.push(message), warn: () => {} };
    const ctx = testDomain({ processor: acquirer.processor, baseUrl: () => base.url, log });
    const caller = ctx.caller(true);
    const merchant = await ctx.domain.merchants.create(caller, { name: "Shop" });
    const token = await ctx.domain.tokens.create(caller, {
      card: "4242424242424242",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    const charge = (who = caller) =>
      ctx.domain.charges.create(who, {
        merchant_id: merchant.id,
        amount: 1000,
        currency: "USD",
        payment_method: { type: "card", token: token.id },
      });
    return { ...ctx, ...acquirer, caller, charge, errors };
  }

  it("recovery repeats the first request (its return address from the intent), so the authorization is reversed", async () => {
    const base = { url: "http://127.0.0.1:38155" };
    const w = await world(base);
    await expect(w.charge()).rejects.toThrow(/connection reset/);
    w.state.lose = false;
    base.url = "http://127.0.0.1:41000"; // the instance that recovers it has another address
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(1);
    const [intent] = await w.store.findAll("acquirer_intents", { livemode: true }, 10);
    expect(intent).toMatchObject({
      state: "resolved",
      resolution: "reversed",
      return_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:38155\/3ds\//),
    });
    expect(Object.values(w.sim.counts().applied.reverse)).toEqual([1]);
    expect(w.errors).toEqual([]);
  });

  it("a retry with the same Idempotency-Key on the other instance resumes the same request: one authorization", async () => {
    const base = { url: "http://127.0.0.1:38155" };
    const w = await world(base);
    const keyed = { ...w.caller, outcome: { key: "live:k1", record: async () => {} } };
    await expect(w.charge(keyed)).rejects.toThrow(/connection reset/);
    w.state.lose = false;
    base.url = "http://127.0.0.1:41000";
    const charge = await w.charge(keyed);
    expect(charge).toMatchObject({ status: "captured" });
    expect(w.sim.counts().applied.authorize).toEqual({ [charge.id]: 1 });
  });

  it("a repeat refused as a request never counts as nothing authorized: the intent stays in doubt, logged", async () => {
    const base = { url: "http://127.0.0.1:38155" };
    const w = await world(base);
    await expect(w.charge()).rejects.toThrow(/connection reset/);
    w.state.lose = false;
    // What an intent written before return_url was kept looks like: its repeat differs from the first call.
    const [open] = await w.store.findAll("acquirer_intents", { livemode: true }, 10);
    await w.store.update("acquirer_intents", open?.id ?? "", { set: { return_url: "http://elsewhere/3ds" } });
    w.advance(LOCK);
    expect(await w.domain.jobs.recoverIntents()).toBe(0);
    const [intent] = await w.store.findAll("acquirer_intents", { livemode: true }, 10);
    expect(intent).toMatchObject({ state: "recovering", resolution: null });
    expect(w.sim.counts().applied.reverse).toEqual({});
    expect(w.errors).toEqual([expect.stringMatching(/left in doubt/)]);
  });
});
