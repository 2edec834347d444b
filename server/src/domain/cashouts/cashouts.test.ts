import { describe, expect, it } from "vitest";
import { refusal, testDomain } from "../../../test-support/domain.ts";
import { createSimulatorPayoutRail } from "../../adapters/payout-rail-simulator.ts";
import type { Caller } from "../kernel/caller.ts";
import { merchantLinesOf } from "../ledger/lines.fixture.ts";
import type { DestinationInput } from "./destinations.ts";
import { type PayoutOutcome, type PayoutRail, PayoutRefused, type PayoutRequest } from "./payout-rail.ts";

// The money rules of cashouts (domain/cashouts/cashouts.ts), each guarded here: the debit and its cashout
// are one transaction and never overdraw, also with 100 at once; cancel and failure return the funds
// exactly once; paid moves nothing; the payout job claims before it sends, so a cancel and a send can
// never both win; the destination is stored sealed.

const ACCOUNT = "000123456789";
const usd: DestinationInput = {
  type: "us_bank_account",
  routing_number: "110000000",
  account_number: ACCOUNT,
  account_holder: "Acme Inc.",
};
const closedAccount: DestinationInput = { ...usd, account_number: "000111111113" };

async function world(options: Parameters<typeof testDomain>[0] = {}, funds = 1000) {
  const t = testDomain(options);
  const caller = t.caller();
  const merchant = await t.domain.merchants.create(caller, { name: "Acme" });
  if (funds > 0) {
    const token = await t.domain.tokens.create(caller, {
      card: "4242424242424242",
      holder: "A",
      exp_month: 12,
      exp_year: 2031,
    });
    const charge = await t.domain.charges.create(caller, {
      merchant_id: merchant.id,
      amount: funds,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
    expect(charge.status).toBe("captured");
  }
  const create = (amount: number, destination = usd, who: Caller = caller) =>
    t.domain.cashouts.create(who, { merchant_id: merchant.id, amount, currency: "USD", destination });
  const balance = async () => {
    const b = await t.store.get("balances", `${merchant.id}:USD`);
    return b ? { available: b.available, pending: b.pending } : null;
  };
  /** The merchant's postings' lines add up to the balance in each bucket, and none is negative. */
  const ledgerBalances = async () => {
    const postings = await t.store.findAll("postings", { merchant_id: merchant.id, currency: "USD" }, 10_000);
    const entries = merchantLinesOf(postings, merchant.id);
    const sum = (bucket: string) => entries.filter((e) => e.bucket === bucket).reduce((s, e) => s + e.amount, 0);
    const b = await balance();
    expect(sum("available")).toBe(b?.available);
    expect(sum("pending")).toBe(b?.pending);
    expect(b?.available).toBeGreaterThanOrEqual(0);
    return entries;
  };
  const events = async (cashoutId: string) =>
    (await t.store.findAll("events", {}, 10_000)).filter((e) => e.payload.cashout_id === cashoutId).map((e) => e.type);
  return { ...t, caller, live: t.caller(true), merchant, create, balance, ledgerBalances, events };
}

/** A rail that counts what it is asked, and answers as the simulator unless told otherwise. */
function countingRail(outcome?: (r: PayoutRequest) => PayoutOutcome) {
  const simulator = createSimulatorPayoutRail();
  const sent: PayoutRequest[] = [];
  const asked: string[] = [];
  const rail: PayoutRail = {
    async send(request) {
      sent.push(request);
      return simulator.send(request);
    },
    async outcome(request) {
      asked.push(request.cashoutId);
      return outcome ? outcome(request) : simulator.outcome(request);
    },
  };
  return { rail, sent, asked };
}

describe("creating a cashout", () => {
  it("debits available in the same transaction as the cashout and its cashout.created event", async () => {
    const w = await world();
    const cashout = await w.create(300);
    expect(cashout).toMatchObject({ status: "pending", amount: 300, currency: "USD", payout_ref: null });
    expect(await w.balance()).toEqual({ available: 700, pending: 0 });
    const entries = await w.ledgerBalances();
    expect(entries.filter((e) => e.source_id === cashout.id)).toMatchObject([
      { type: "cashout", bucket: "available", amount: -300 },
    ]);
    expect(await w.events(cashout.id)).toEqual(["cashout.reconciled", "cashout.created"]);
  });

  it("refuses what available does not cover with 422 and writes nothing", async () => {
    const w = await world();
    await w.create(600);
    const err = await refusal(w.create(401));
    expect(err).toMatchObject({ code: "insufficient_balance", param: "amount" });
    expect(await w.balance()).toEqual({ available: 400, pending: 0 });
    expect(await w.store.findAll("cashouts", { merchant_id: w.merchant.id })).toHaveLength(1);
    expect((await w.store.findAll("events", { type: "cashout.created" })).length).toBe(1);
    await w.ledgerBalances();
    // Exactly what is left is fine.
    expect((await w.create(400)).status).toBe("pending");
    expect(await w.balance()).toEqual({ available: 0, pending: 0 });
  });

  it("refuses a merchant without a balance in the currency, and creates no balance for it", async () => {
    const w = await world({}, 0);
    const err = await refusal(w.create(1));
    expect(err).toMatchObject({ code: "insufficient_balance", param: "amount" });
    expect(await w.balance()).toBeNull();
  });

  it("100 at once, 100 each, against 1,000 available: exactly 10 succeed, the rest 422, the ledger balances", async () => {
    const w = await world();
    const results = await Promise.allSettled(Array.from({ length: 100 }, () => w.create(100)));
    const made = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected");
    expect(made).toHaveLength(10);
    expect(refused).toHaveLength(90);
    for (const r of refused) {
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "insufficient_balance" });
    }
    expect(await w.balance()).toEqual({ available: 0, pending: 0 });
    const entries = await w.ledgerBalances();
    expect(entries.filter((e) => e.type === "cashout")).toHaveLength(10);
    expect(await w.store.findAll("cashouts", { merchant_id: w.merchant.id }, 1000)).toHaveLength(10);
  });

  it("checks money and merchant before anything is written", async () => {
    const w = await world();
    for (const amount of [0, -5, 1.5, Number.NaN]) {
      expect(await refusal(w.create(amount)), String(amount)).toMatchObject({
        code: "invalid_request",
        param: "amount",
      });
    }
    const tooMuch = await refusal(w.create(999_999 * 100 + 1));
    expect(tooMuch).toMatchObject({ param: "amount" });
    const unsupported = await refusal(
      w.domain.cashouts.create(w.caller, { merchant_id: w.merchant.id, amount: 1, currency: "CHF", destination: usd }),
    );
    expect(unsupported).toMatchObject({ param: "currency" });
    await w.domain.merchants.update(w.caller, w.merchant.id, { status: "suspended" });
    expect(await refusal(w.create(1))).toMatchObject({ code: "merchant_inactive", param: "merchant_id" });
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    const other = await refusal(w.create(1, usd, w.live));
    expect(other).toMatchObject({ code: "not_found", param: "merchant_id" });
  });

  it("stores the destination sealed: the stored cashout holds only the masked view, the rail gets the account", async () => {
    const { rail, sent } = countingRail();
    const w = await world({ payoutRail: rail });
    const cashout = await w.create(100);
    const stored = await w.store.get("cashouts", cashout.id);
    expect(JSON.stringify(stored)).not.toContain(ACCOUNT);
    expect(stored?.destination).toMatchObject({ masked: "********6789", last4: "6789" });
    await w.domain.cashouts.sandboxPay(w.caller, cashout.id);
    expect(sent.map((r) => r.destination)).toEqual([{ ...usd, account_type: "checking" }]);
  });
});

describe("ending a cashout", () => {
  it("cancel returns the funds once (cashout.canceled); a second cancel is a 409 and returns nothing", async () => {
    const w = await world();
    const cashout = await w.create(300);
    const canceled = await w.domain.cashouts.cancel(w.caller, cashout.id);
    expect(canceled).toMatchObject({ status: "canceled", next_step_at: null });
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    expect(await refusal(w.domain.cashouts.cancel(w.caller, cashout.id))).toMatchObject({
      code: "invalid_state_transition",
    });
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    const entries = await w.ledgerBalances();
    expect(entries.filter((e) => e.source_id === cashout.id).map((e) => [e.type, e.amount])).toEqual([
      ["cashout_reversal", 300],
      ["cashout", -300],
    ]);
    expect(await w.events(cashout.id)).toEqual(["cashout.canceled", "cashout.reconciled", "cashout.created"]);
  });

  it("ten cancels at once: one wins, the funds come back once", async () => {
    const w = await world();
    const cashout = await w.create(500);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => w.domain.cashouts.cancel(w.caller, cashout.id)),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    // The losers lost on the conditional update: a 409 each, nothing else.
    for (const r of results.filter((x) => x.status === "rejected")) {
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "invalid_state_transition" });
    }
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    await w.ledgerBalances();
  });

  it("a failure returns the funds once, with its code (cashout.failed); paid, failed and canceled are final", async () => {
    const w = await world();
    const cashout = await w.create(250);
    const failed = await w.domain.cashouts.sandboxFail(w.caller, cashout.id, "account_closed");
    expect(failed).toMatchObject({
      status: "failed",
      failure_code: "account_closed",
      failure_message: "The destination account is closed.",
    });
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    for (const again of [
      w.domain.cashouts.sandboxFail(w.caller, cashout.id),
      w.domain.cashouts.sandboxPay(w.caller, cashout.id),
      w.domain.cashouts.cancel(w.caller, cashout.id),
    ]) {
      expect(await refusal(again)).toMatchObject({ code: "invalid_state_transition" });
    }
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    await w.ledgerBalances();
    expect(await w.events(cashout.id)).toEqual(["cashout.failed", "cashout.reconciled", "cashout.created"]);
    const defaulted = await w.domain.cashouts.sandboxFail(w.caller, (await w.create(1)).id);
    expect(defaulted.failure_code).toBe("could_not_process");
  });

  it("paid moves no money (it left at creation); cashout.paid", async () => {
    const w = await world();
    const cashout = await w.create(250);
    const paid = await w.domain.cashouts.sandboxPay(w.caller, cashout.id);
    expect(paid).toMatchObject({ status: "paid", failure_code: null, next_step_at: null });
    expect(paid.payout_ref).toMatch(/^sim_po_/);
    expect(await w.balance()).toEqual({ available: 750, pending: 0 });
    const entries = await w.ledgerBalances();
    expect(entries.filter((e) => e.source_id === cashout.id)).toHaveLength(1);
    expect(await w.events(cashout.id)).toEqual(["cashout.paid", "cashout.reconciled", "cashout.created"]);
  });

  it("the sandbox pays an in_transit cashout too, sending it to the rail once in all", async () => {
    const { rail, sent } = countingRail();
    const w = await world({ payoutRail: rail, cashoutPendingSeconds: 0 });
    const direct = await w.create(100);
    expect(await w.domain.cashouts.sandboxPay(w.caller, direct.id)).toMatchObject({ status: "paid" });
    expect(sent.map((r) => r.cashoutId)).toEqual([direct.id]);
    const viaJob = await w.create(100);
    await w.domain.jobs.payouts();
    expect((await w.store.get("cashouts", viaJob.id))?.payout_ref).toMatch(/^sim_po_/);
    const paid = await w.domain.cashouts.sandboxPay(w.caller, viaJob.id);
    expect(paid).toMatchObject({ status: "paid" });
    expect(sent.map((r) => r.cashoutId)).toEqual([direct.id, viaJob.id]);
    expect(await w.balance()).toEqual({ available: 800, pending: 0 });
  });

  it("a magic failing destination fails when the bank processes it, and its funds come back", async () => {
    const w = await world();
    const cashout = await w.create(400, closedAccount);
    const result = await w.domain.cashouts.sandboxPay(w.caller, cashout.id);
    expect(result).toMatchObject({ status: "failed", failure_code: "account_closed" });
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    await w.ledgerBalances();
  });

  it("the sandbox helpers do not exist in production", async () => {
    const w = await world();
    const live = w.live;
    const liveMerchant = await w.domain.merchants.create(live, { name: "Live" });
    await w.store.insert("balances", {
      id: `${liveMerchant.id}:USD`,
      livemode: true,
      created_at: "2026-11-21T10:00:00.000000Z",
      updated_at: "2026-11-21T10:00:00.000000Z",
      merchant_id: liveMerchant.id,
      currency: "USD",
      available: 100,
      pending: 0,
    });
    const cashout = await w.domain.cashouts.create(live, {
      merchant_id: liveMerchant.id,
      amount: 100,
      currency: "USD",
      destination: usd,
    });
    expect(await refusal(w.domain.cashouts.sandboxPay(live, cashout.id))).toMatchObject({ code: "not_found" });
    expect(await refusal(w.domain.cashouts.sandboxFail(live, cashout.id))).toMatchObject({ code: "not_found" });
    // And a sandbox caller cannot see it either.
    expect(await refusal(w.domain.cashouts.get(w.caller, cashout.id))).toMatchObject({ code: "not_found" });
  });
});

describe("the payout job", () => {
  it("waits out the pending time, claims and sends once, then records the rail's outcome after the transit time", async () => {
    const { rail, sent, asked } = countingRail();
    const w = await world({ payoutRail: rail, cashoutPendingSeconds: 600, cashoutTransitSeconds: 3600 });
    const ok = await w.create(100);
    const closed = await w.create(200, closedAccount);
    expect(await w.domain.jobs.payouts()).toBe(0);
    w.advance(599);
    expect(await w.domain.jobs.payouts()).toBe(0);
    w.advance(1);
    // Two instances running the job at the same moment send each cashout once.
    const [a, b] = await Promise.all([w.domain.jobs.payouts(), w.domain.jobs.payouts()]);
    expect(a + b).toBe(2);
    expect(sent.map((r) => r.cashoutId).sort()).toEqual([ok.id, closed.id].sort());
    expect((await w.domain.cashouts.get(w.caller, ok.id)).status).toBe("in_transit");
    // Sent: too late to cancel.
    expect(await refusal(w.domain.cashouts.cancel(w.caller, ok.id))).toMatchObject({
      code: "invalid_state_transition",
    });
    w.advance(3599);
    expect(await w.domain.jobs.payouts()).toBe(0);
    expect(asked).toEqual([]);
    w.advance(1);
    expect(await w.domain.jobs.payouts()).toBe(2);
    expect(await w.domain.cashouts.get(w.caller, ok.id)).toMatchObject({ status: "paid" });
    expect(await w.domain.cashouts.get(w.caller, closed.id)).toMatchObject({
      status: "failed",
      failure_code: "account_closed",
    });
    expect(await w.balance()).toEqual({ available: 900, pending: 0 });
    await w.ledgerBalances();
    expect(sent).toHaveLength(2);
  });

  it("a cancel and a send racing: exactly one wins, and the funds are either sent or back, never both", async () => {
    for (let round = 0; round < 10; round++) {
      const { rail, sent } = countingRail();
      const w = await world({ payoutRail: rail, cashoutPendingSeconds: 0 });
      const cashout = await w.create(300);
      const [job, cancel] = await Promise.allSettled([
        w.domain.jobs.payouts(),
        w.domain.cashouts.cancel(w.caller, cashout.id),
      ]);
      const status = (await w.domain.cashouts.get(w.caller, cashout.id)).status;
      if (status === "canceled") {
        expect(cancel.status).toBe("fulfilled");
        expect(sent).toHaveLength(0);
        expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
      } else {
        expect(status).toBe("in_transit");
        expect(job).toMatchObject({ status: "fulfilled", value: 1 });
        expect(cancel.status).toBe("rejected");
        expect(sent).toHaveLength(1);
        expect(await w.balance()).toEqual({ available: 700, pending: 0 });
      }
      await w.ledgerBalances();
    }
  });

  it("after a crash between the claim and the rail, the next pass sends it again (the rail is idempotent)", async () => {
    let failNextSend = true;
    const simulator = createSimulatorPayoutRail();
    const references: string[] = [];
    const rail: PayoutRail = {
      async send(request) {
        if (failNextSend) {
          failNextSend = false;
          throw new Error("the instance died here");
        }
        const sent = await simulator.send(request);
        references.push(sent.reference);
        return sent;
      },
      outcome: (request) => simulator.outcome(request),
    };
    const w = await world({ payoutRail: rail, cashoutPendingSeconds: 0, cashoutTransitSeconds: 60 });
    const cashout = await w.create(100);
    const other = await w.create(100);
    // The failure is reported at the end of the pass, which still sent the other cashout.
    await expect(w.domain.jobs.payouts()).rejects.toThrow(/died/);
    const stranded = (await w.store.get("cashouts", cashout.id))?.payout_ref === null ? cashout : other;
    expect(await w.store.get("cashouts", stranded.id)).toMatchObject({ status: "in_transit", payout_ref: null });
    expect(references).toHaveLength(1);
    w.advance(60);
    expect(await w.domain.jobs.payouts()).toBe(2);
    const paid = await w.domain.cashouts.get(w.caller, stranded.id);
    expect(paid).toMatchObject({ status: "paid" });
    // Sent again after the crash, under the same reference (the simulator's idempotency).
    expect(references).toHaveLength(2);
    expect(paid.payout_ref).toBe(references[1]);
    expect(await w.balance()).toEqual({ available: 800, pending: 0 });
  });

  it("a payout still on its way is asked about again after another transit time", async () => {
    let answer: PayoutOutcome = { status: "in_transit" };
    const { rail, asked } = countingRail(() => answer);
    const w = await world({ payoutRail: rail, cashoutPendingSeconds: 0, cashoutTransitSeconds: 100 });
    const cashout = await w.create(100);
    await w.domain.jobs.payouts();
    w.advance(100);
    expect(await w.domain.jobs.payouts()).toBe(0);
    expect(asked).toEqual([cashout.id]);
    expect((await w.domain.cashouts.get(w.caller, cashout.id)).status).toBe("in_transit");
    w.advance(99);
    await w.domain.jobs.payouts();
    expect(asked).toHaveLength(1);
    w.advance(1);
    answer = {
      status: "failed",
      failureCode: "declined",
      failureMessage: "The destination's bank declined the transfer.",
    };
    expect(await w.domain.jobs.payouts()).toBe(1);
    expect(await w.domain.cashouts.get(w.caller, cashout.id)).toMatchObject({
      status: "failed",
      failure_code: "declined",
    });
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
  });
});

describe("a payout the rail refuses", () => {
  const SHOWN = "The acquirer refused the payout request (Adyen error 137); nothing was paid.";

  /** A rail that answers each send by the next of `answers` ("refuse", "doubt": a time-out, "send"). */
  function scriptedRail(...answers: Array<"refuse" | "doubt" | "send">) {
    const simulator = createSimulatorPayoutRail();
    const keys: string[] = [];
    const rail: PayoutRail = {
      async send(request) {
        keys.push(request.idempotencyKey);
        const answer = answers.shift() ?? "refuse";
        if (answer === "refuse") throw new PayoutRefused("Adyen refused the payout (HTTP 422, error 137)", SHOWN);
        if (answer === "doubt") throw new Error("Adyen the payout: no complete answer within 30000 ms");
        return simulator.send(request);
      },
      outcome: (request) => simulator.outcome(request),
    };
    return { rail, keys };
  }

  it("fails the cashout once, could_not_process with the message, its amount back in available (cashout.failed)", async () => {
    const { rail, keys } = scriptedRail("refuse");
    const w = await world({ payoutRail: rail, cashoutPendingSeconds: 0, cashoutTransitSeconds: 60 });
    const cashout = await w.create(300);
    expect(await w.balance()).toEqual({ available: 700, pending: 0 });
    // Two instances' passes at once: one claims, its refusal ends the cashout; it is counted as finished.
    const [a, b] = await Promise.all([w.domain.jobs.payouts(), w.domain.jobs.payouts()]);
    expect(a + b).toBe(1);
    expect(await w.domain.cashouts.get(w.caller, cashout.id)).toMatchObject({
      status: "failed",
      failure_code: "could_not_process",
      failure_message: SHOWN,
      next_step_at: null,
    });
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    // Later passes find nothing to do: never retried, never credited twice.
    for (let i = 0; i < 3; i++) {
      w.advance(60);
      expect(await w.domain.jobs.payouts()).toBe(0);
    }
    expect(keys).toEqual([`${cashout.id}:payout`]);
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    expect(await w.events(cashout.id)).toEqual(["cashout.failed", "cashout.reconciled", "cashout.created"]);
    const entries = await w.ledgerBalances();
    expect(entries.filter((e) => e.amount === 300 && e.bucket === "available")).toHaveLength(1);
  });

  it("in doubt (a time-out) stays in transit and is sent again under the same key until the rail answers", async () => {
    const { rail, keys } = scriptedRail("doubt", "doubt", "refuse");
    const w = await world({ payoutRail: rail, cashoutPendingSeconds: 0, cashoutTransitSeconds: 60 });
    const cashout = await w.create(300);
    await expect(w.domain.jobs.payouts()).rejects.toThrow(/no complete answer/);
    expect(await w.store.get("cashouts", cashout.id)).toMatchObject({ status: "in_transit", payout_ref: null });
    expect(await w.balance()).toEqual({ available: 700, pending: 0 });
    w.advance(60);
    await expect(w.domain.jobs.payouts()).rejects.toThrow(/no complete answer/);
    expect((await w.store.get("cashouts", cashout.id))?.status).toBe("in_transit");
    w.advance(60);
    expect(await w.domain.jobs.payouts()).toBe(1);
    expect((await w.store.get("cashouts", cashout.id))?.status).toBe("failed");
    expect(keys).toEqual(Array.from({ length: 3 }, () => `${cashout.id}:payout`));
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    expect(await w.events(cashout.id)).toEqual(["cashout.failed", "cashout.reconciled", "cashout.created"]);
    await w.ledgerBalances();
  });

  it("a crash between the claim and the refusal: the next pass sends it again, is refused, and returns the funds once", async () => {
    let crash = true;
    const { rail: refusing } = scriptedRail("refuse", "refuse");
    const rail: PayoutRail = {
      async send(request) {
        if (crash) {
          crash = false;
          // The rail refused, and the instance died before the failure was committed.
          await refusing.send(request).catch(() => undefined);
          throw new Error("the instance died here");
        }
        return refusing.send(request);
      },
      outcome: (request) => refusing.outcome(request),
    };
    const w = await world({ payoutRail: rail, cashoutPendingSeconds: 0, cashoutTransitSeconds: 60 });
    const cashout = await w.create(400);
    await expect(w.domain.jobs.payouts()).rejects.toThrow(/died/);
    expect(await w.store.get("cashouts", cashout.id)).toMatchObject({ status: "in_transit", payout_ref: null });
    w.advance(60);
    expect(await w.domain.jobs.payouts()).toBe(1);
    expect((await w.store.get("cashouts", cashout.id))?.status).toBe("failed");
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    expect(await w.events(cashout.id)).toEqual(["cashout.failed", "cashout.reconciled", "cashout.created"]);
    await w.ledgerBalances();
  });

  it("the sandbox's pay helper answers the failed cashout, its funds back", async () => {
    const { rail } = scriptedRail("refuse");
    const w = await world({ payoutRail: rail });
    const cashout = await w.create(250);
    expect(await w.domain.cashouts.sandboxPay(w.caller, cashout.id)).toMatchObject({
      status: "failed",
      failure_code: "could_not_process",
    });
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
    expect(await refusal(w.domain.cashouts.sandboxPay(w.caller, cashout.id))).toMatchObject({
      code: "invalid_state_transition",
    });
    expect(await w.balance()).toEqual({ available: 1000, pending: 0 });
  });
});
