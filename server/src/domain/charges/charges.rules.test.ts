import { afterEach, describe, expect, it, vi } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { createSimulatorProcessor } from "../../adapters/processor-simulator.ts";
import type { Decision } from "../fraud/rules.ts";
import { DomainError } from "../kernel/errors.ts";
import type { EventDoc } from "../kernel/events.ts";
import { iso } from "../kernel/time.ts";
import { merchantLinesOf } from "../ledger/lines.fixture.ts";
import type { ChargeAttempt, FraudScreen } from "./fraud-screen.ts";
import type { ChargeDoc, ChargeStatus } from "./records.ts";
import { CHARGE_TRANSITIONS } from "./state.ts";

// The rules of charges and refunds where money moves (spec/resources/charges.tsp: createCharge,
// captureCharge, voidCharge, createRefund, listRefunds; spec/resources/sandbox.tsp). The state machine table
// itself is in charges.test.ts; this file checks what each use case refuses, what it asks the processor and
// the fraud screen, and what it writes (ledger, balances, events). Errors are checked by code and param,
// never by wording.

const VISA = "4242424242424242";
const DECLINED = "4000000000000002";

function world(options: { settlementDelaySeconds?: number } = {}) {
  const processor = createSimulatorProcessor();
  const calls = {
    authorize: vi.spyOn(processor, "authorizeCard"),
    capture: vi.spyOn(processor, "capture"),
    void: vi.spyOn(processor, "void"),
    refund: vi.spyOn(processor, "refund"),
    startLocal: vi.spyOn(processor, "startLocalPayment"),
  };
  let verdict: { decision: Decision; score: number; signals: string[] } = { decision: "allow", score: 0, signals: [] };
  // A stand-in screen: its verdict is set by the test, and it records nothing of its own.
  const evaluate = vi.fn(async (_attempt: ChargeAttempt) => ({
    evaluationId: "fe_000000000000000000000000",
    ...verdict,
    reviewWindowSeconds: 3600,
    record: async () => {},
  }));
  const fraud: FraudScreen = { assessCharge: evaluate };
  const ctx = testDomain({ ...options, processor, fraud });
  const { domain, store } = ctx;

  const merchant = (livemode = false) => domain.merchants.create(ctx.caller(livemode), { name: "Shop" });
  const token = (livemode = false, card = VISA) =>
    domain.tokens.create(ctx.caller(livemode), { card, holder: "Ada", exp_month: 12, exp_year: 2031 });

  async function card(options: { livemode?: boolean; amount?: number; capture?: boolean; pan?: string } = {}) {
    const livemode = options.livemode ?? false;
    const m = await merchant(livemode);
    const t = await token(livemode, options.pan);
    const charge = await domain.charges.create(ctx.caller(livemode), {
      merchant_id: m.id,
      amount: options.amount ?? 1000,
      currency: "USD",
      payment_method: { type: "card", token: t.id },
      capture: options.capture ?? true,
    });
    return { merchant: m, token: t, charge };
  }

  async function pix(livemode = false, amount = 1000) {
    const m = await merchant(livemode);
    const charge = await domain.charges.create(ctx.caller(livemode), {
      merchant_id: m.id,
      amount,
      currency: "BRL",
      payment_method: { type: "pix" },
    });
    return { merchant: m, charge };
  }

  /** The events about one charge, oldest first. */
  async function eventsOf(chargeId: string): Promise<EventDoc[]> {
    const all = await store.findAll("events", {}, 1000);
    return all.filter((e) => e.payload.tx_id === chargeId).sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** The merchant's movements: its postings' lines (the ledger's one record of them since issue 36). */
  const ledgerOf = async (merchantId: string) =>
    merchantLinesOf(await store.findAll("postings", { merchant_id: merchantId }, 1000), merchantId);
  /** The pending capture credits kept as entries as well (ledger/postings.ts isPendingCredit). */
  const entriesOf = (merchantId: string) => store.findAll("ledger_entries", { merchant_id: merchantId }, 1000);
  const balancesOf = (merchantId: string) => store.findAll("balances", { merchant_id: merchantId }, 1000);
  const stored = async (id: string) => (await store.get("charges", id)) as ChargeDoc;

  return {
    ...ctx,
    calls,
    evaluate,
    setVerdict: (v: { decision: Decision; score: number; signals: string[] }) => {
      verdict = v;
    },
    merchant,
    token,
    card,
    pix,
    eventsOf,
    ledgerOf,
    entriesOf,
    balancesOf,
    stored,
  };
}

type World = ReturnType<typeof world>;
let w: World;
afterEach(async () => {
  vi.restoreAllMocks();
  await w?.store.close();
});

async function refused(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  return err;
}

describe("the state machine's final states", () => {
  it.each(["declined", "blocked", "voided", "expired"] as ChargeStatus[])("%s leads nowhere", (status) => {
    expect(CHARGE_TRANSITIONS[status]).toEqual([]);
  });

  it("refunded leads back only where a refund the acquirer reports failed returns it", () => {
    expect(CHARGE_TRANSITIONS.refunded).toEqual(["partially_refunded", "captured"]);
  });
});

describe("environments: every read and write is confined to the caller's", () => {
  it("a sandbox charge is not found with a production key, and the reverse", async () => {
    w = world();
    const { charge: sandbox } = await w.card({ capture: false });
    const { charge: live } = await w.card({ livemode: true, capture: false });
    const test = w.caller(false);
    const prod = w.caller(true);
    for (const [caller, id] of [
      [prod, sandbox.id],
      [test, live.id],
    ] as const) {
      for (const attempt of [
        w.domain.charges.get(caller, id),
        w.domain.charges.capture(caller, id),
        w.domain.charges.void(caller, id),
        w.domain.charges.refund(caller, id, {}),
        w.domain.charges.listRefunds(caller, id, { limit: 10 }),
      ]) {
        const err = await refused(attempt);
        expect(err.code).toBe("not_found");
        expect(err.param).toBe("id");
      }
    }
    expect((await w.stored(sandbox.id)).status).toBe("authorized");
    expect((await w.stored(live.id)).status).toBe("authorized");
    expect(w.calls.capture).not.toHaveBeenCalled();
    expect(w.calls.void).not.toHaveBeenCalled();
  });

  it("the sandbox helpers (complete, expire) do not exist in production", async () => {
    w = world();
    const { charge } = await w.pix(true);
    const prod = w.caller(true);
    for (const attempt of [w.domain.charges.complete(prod, charge.id), w.domain.charges.expire(prod, charge.id)]) {
      const err = await refused(attempt);
      expect(err.code).toBe("not_found");
      expect(err.param).toBe("id");
    }
    expect((await w.stored(charge.id)).status).toBe("pending");
    expect(await w.eventsOf(charge.id)).toEqual([]);
    expect(await w.balancesOf(charge.merchant_id)).toEqual([]);
  });

  it("a sandbox key cannot complete a production charge either", async () => {
    w = world();
    const { charge } = await w.pix(true);
    const err = await refused(w.domain.charges.complete(w.caller(false), charge.id));
    expect(err.code).toBe("not_found");
    expect((await w.stored(charge.id)).status).toBe("pending");
  });

  it("lists only the caller's environment, filtered by merchant and status", async () => {
    w = world();
    const a = await w.card({ capture: false });
    const b = await w.card();
    await w.card({ livemode: true });
    const test = w.caller(false);
    const ids = async (filter: { merchant_id?: string; status?: ChargeStatus }) =>
      (await w.domain.charges.list(test, filter, { limit: 10 })).data.map((c) => c.id);
    expect((await ids({})).sort()).toEqual([a.charge.id, b.charge.id].sort());
    expect(await ids({ merchant_id: a.merchant.id })).toEqual([a.charge.id]);
    expect(await ids({ status: "captured" })).toEqual([b.charge.id]);
    expect(await ids({ merchant_id: a.merchant.id, status: "captured" })).toEqual([]);
  });
});

describe("create: what is refused before anything is written or asked", () => {
  async function nothingHappened() {
    expect(await w.store.findAll("charges", {})).toEqual([]);
    // Only the fixtures' own events (merchant.created, service_key.created): none about a payment.
    expect((await w.store.findAll("events", {})).filter((e) => !/^(merchant|service_key)\./.test(e.type))).toEqual([]);
    expect(w.calls.authorize).not.toHaveBeenCalled();
    expect(w.calls.startLocal).not.toHaveBeenCalled();
    expect(w.evaluate).not.toHaveBeenCalled();
  }

  it.each([
    [0, "USD", "amount"],
    [-100, "USD", "amount"],
    [10.5, "USD", "amount"],
    [100_000_000, "USD", "amount"],
    [100, "XAU", "currency"],
    [100, "GBP", "currency"], // real, but not in this installation's SUPPORTED_CURRENCIES
    [100, "usd", "currency"],
  ])("%d %s: 400 naming %s", async (amount, currency, param) => {
    w = world();
    const m = await w.merchant();
    const t = await w.token();
    const err = await refused(
      w.domain.charges.create(w.caller(), {
        merchant_id: m.id,
        amount,
        currency,
        payment_method: { type: "card", token: t.id },
      }),
    );
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe(param);
    await nothingHappened();
  });

  it.each([
    ["pix", "USD"],
    ["boleto", "MXN"],
    ["oxxo", "BRL"],
    ["spei", "USD"],
  ] as const)("a %s payment in %s: 400 naming currency", async (type, currency) => {
    w = world();
    const m = await w.merchant();
    const err = await refused(
      w.domain.charges.create(w.caller(), { merchant_id: m.id, amount: 100, currency, payment_method: { type } }),
    );
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe("currency");
    await nothingHappened();
  });

  it("a sepa_debit payment outside EUR: 400 naming currency", async () => {
    w = world();
    const m = await w.merchant();
    const err = await refused(
      w.domain.charges.create(w.caller(), {
        merchant_id: m.id,
        amount: 100,
        currency: "USD",
        payment_method: { type: "sepa_debit", iban: "DE89370400440532013000", account_holder: "Ada" },
      }),
    );
    expect(err.param).toBe("currency");
    await nothingHappened();
  });

  it("an unknown merchant, or one of the other environment: 404 naming merchant_id", async () => {
    w = world();
    const live = await w.merchant(true);
    const t = await w.token();
    for (const merchantId of ["mch_000000000000000000000000", live.id]) {
      const err = await refused(
        w.domain.charges.create(w.caller(), {
          merchant_id: merchantId,
          amount: 100,
          currency: "USD",
          payment_method: { type: "card", token: t.id },
        }),
      );
      expect(err.code).toBe("not_found");
      expect(err.param).toBe("merchant_id");
    }
    await nothingHappened();
  });

  it.each(["suspended", "closed"] as const)(
    "a %s merchant cannot take payments (409 merchant_inactive)",
    async (status) => {
      w = world();
      const m = await w.merchant();
      await w.domain.merchants.update(w.caller(), m.id, { status });
      const t = await w.token();
      for (const payment_method of [{ type: "card", token: t.id } as const, { type: "pix" } as const]) {
        const err = await refused(
          w.domain.charges.create(w.caller(), {
            merchant_id: m.id,
            amount: 100,
            currency: payment_method.type === "pix" ? "BRL" : "USD",
            payment_method,
          }),
        );
        expect(err.code).toBe("merchant_inactive");
        expect(err.param).toBe("merchant_id");
      }
      await nothingHappened();
    },
  );

  it("an unknown token, or one of the other environment: 404 naming payment_method.token", async () => {
    w = world();
    const m = await w.merchant();
    const live = await w.token(true);
    for (const token of ["tok_000000000000000000000000", live.id]) {
      const err = await refused(
        w.domain.charges.create(w.caller(), {
          merchant_id: m.id,
          amount: 100,
          currency: "USD",
          payment_method: { type: "card", token },
        }),
      );
      expect(err.code).toBe("not_found");
      expect(err.param).toBe("payment_method.token");
    }
    await nothingHappened();
  });
});

describe("create: card charges", () => {
  it("authorizes and captures: the charge, the processor calls, the credit and the events", async () => {
    w = world();
    const m = await w.merchant();
    const t = await w.token();
    const charge = await w.domain.charges.create(w.caller(), {
      merchant_id: m.id,
      amount: 2500,
      currency: "USD",
      payment_method: { type: "card", token: t.id },
      description: "Order 1042",
      metadata: { order: "1042" },
      customer: { email: "ada@example.com", country: "GB" },
    });
    expect(charge.id).toMatch(/^tx_[0-9A-Za-z]{24}$/);
    expect(charge).toMatchObject({
      livemode: false,
      merchant_id: m.id,
      amount: 2500,
      currency: "USD",
      status: "captured",
      amount_captured: 2500,
      amount_refunded: 0,
      description: "Order 1042",
      metadata: { order: "1042" },
      customer: { email: "ada@example.com", country: "GB" },
      next_action: null,
      failure_code: null,
    });
    expect(charge.payment_method).toEqual({
      type: "card",
      token: t.id,
      brand: "visa",
      last4: "4242",
      fingerprint: t.fingerprint,
    });
    expect(await w.stored(charge.id)).toEqual(charge);

    expect(w.calls.authorize).toHaveBeenCalledTimes(1);
    // Authorized and captured in one call, under the key derived from the charge (processor.ts acquirerKey).
    expect(w.calls.authorize.mock.calls[0]?.[0]).toEqual({
      idempotencyKey: `${charge.id}:authorize`,
      chargeId: charge.id,
      pan: VISA,
      expMonth: 12,
      expYear: 2031,
      amount: 2500,
      currency: "USD",
      capture: true,
      livemode: false,
      now: new Date("2026-11-21T10:00:00Z"),
      // Where an acquirer that runs 3-D Secure itself sends the payer back: our challenge step, with its token.
      returnUrl: expect.stringMatching(
        new RegExp(`^https://pay\\.example\\.com/3ds/${charge.id}/return\\?t=[\\w-]{43}$`),
      ),
    });
    expect(charge.processor_ref).toMatch(/^sim_auth_/);
    expect(w.calls.capture).not.toHaveBeenCalled();

    const ledger = await w.ledgerOf(m.id);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ bucket: "available", amount: 2500, type: "capture", source_id: charge.id });
    expect(await w.balancesOf(m.id)).toMatchObject([{ currency: "USD", available: 2500, pending: 0 }]);

    const events = await w.eventsOf(charge.id);
    expect(events.map((e) => e.type)).toEqual(["payment.authorized", "payment.captured"]);
    const common = {
      tx_id: charge.id,
      merchant_id: m.id,
      amount: 2500,
      currency: "USD",
      payment_method_type: "card",
    };
    expect(events[0]?.payload).toEqual({ ...common, status: "authorized" });
    expect(events[1]?.payload).toEqual({ ...common, status: "captured", amount_captured: 2500 });
  });

  it("leaves description, metadata and customer empty when not given", async () => {
    w = world();
    const { charge } = await w.card();
    expect(charge).toMatchObject({ description: null, metadata: {}, customer: null });
  });

  it("capture: false only authorizes: no capture call, no money, one event", async () => {
    w = world();
    const { charge, merchant } = await w.card({ capture: false });
    expect(charge).toMatchObject({ status: "authorized", amount_captured: 0 });
    expect(w.calls.capture).not.toHaveBeenCalled();
    expect(await w.ledgerOf(merchant.id)).toEqual([]);
    expect(await w.balancesOf(merchant.id)).toEqual([]);
    expect((await w.eventsOf(charge.id)).map((e) => [e.type, e.payload.status])).toEqual([
      ["payment.authorized", "authorized"],
    ]);
  });

  it("a decline is a declined charge with its reason and a payment.failed event, and no money", async () => {
    w = world();
    const { charge, merchant } = await w.card({ pan: DECLINED });
    expect(charge).toMatchObject({
      status: "declined",
      amount_captured: 0,
      failure_code: "card_declined",
      failure_message: expect.any(String),
    });
    expect(w.calls.capture).not.toHaveBeenCalled();
    expect(await w.balancesOf(merchant.id)).toEqual([]);
    const events = await w.eventsOf(charge.id);
    expect(events.map((e) => e.type)).toEqual(["payment.failed"]);
    expect(events[0]?.payload).toMatchObject({
      status: "declined",
      failure_code: "card_declined",
      failure_message: charge.failure_message,
    });
  });

  it("asks the fraud screen about the charge before authorizing it", async () => {
    w = world();
    const m = await w.merchant(true);
    const t = await w.token(true);
    await w.domain.charges.create(w.caller(true), {
      merchant_id: m.id,
      amount: 700,
      currency: "EUR",
      payment_method: { type: "card", token: t.id },
      customer: { ip: "203.0.113.9" },
    });
    expect(w.evaluate).toHaveBeenCalledTimes(1);
    expect(w.evaluate.mock.calls[0]?.[0]).toEqual({
      livemode: true,
      chargeId: expect.stringMatching(/^tx_/),
      merchantId: m.id,
      amount: 700,
      currency: "EUR",
      card: { pan: VISA, fingerprint: t.fingerprint },
      customer: { ip: "203.0.113.9" },
    });
    expect(w.evaluate.mock.invocationCallOrder[0]).toBeLessThan(w.calls.authorize.mock.invocationCallOrder[0] ?? 0);
    const { token } = await w.card();
    expect(w.evaluate.mock.calls[1]?.[0]).toMatchObject({ customer: null, card: { fingerprint: token.fingerprint } });
  });

  it("a block from the fraud screen stops the charge: blocked, never sent to the processor, no money", async () => {
    w = world();
    w.setVerdict({ decision: "block", score: 95, signals: ["velocity"] });
    const { charge, merchant } = await w.card();
    expect(charge).toMatchObject({ status: "blocked", amount_captured: 0, processor_ref: null });
    expect((await w.stored(charge.id)).status).toBe("blocked");
    expect(w.calls.authorize).not.toHaveBeenCalled();
    expect(w.calls.capture).not.toHaveBeenCalled();
    expect(await w.ledgerOf(merchant.id)).toEqual([]);
    expect(await w.balancesOf(merchant.id)).toEqual([]);
  });

  it("a review verdict holds the card charge authorized, not captured, even with capture: true", async () => {
    w = world();
    w.setVerdict({ decision: "review", score: 70, signals: ["new_card"] });
    const { charge, merchant } = await w.card();
    expect(charge.status).toBe("authorized");
    expect(charge.amount_captured).toBe(0);
    expect(w.calls.authorize).toHaveBeenCalledTimes(1);
    expect(w.calls.capture).not.toHaveBeenCalled();
    expect(await w.balancesOf(merchant.id)).toEqual([]);
  });
});

describe("create: local payment methods", () => {
  it("pix starts pending with the processor's next action, and moves no money", async () => {
    w = world();
    const { charge, merchant } = await w.pix();
    expect(charge).toMatchObject({ status: "pending", amount_captured: 0, processor_ref: null });
    expect(charge.payment_method).toEqual({ type: "pix" });
    expect(w.calls.startLocal).toHaveBeenCalledTimes(1);
    const request = w.calls.startLocal.mock.calls[0]?.[0];
    expect(request).toMatchObject({ chargeId: charge.id, method: "pix", amount: 1000, currency: "BRL" });
    expect(request?.iban).toBeUndefined();
    const action = await w.calls.startLocal.mock.results[0]?.value;
    expect(charge.next_action).toEqual(action);
    expect(charge.expires_at).toBe(action.expires_at);
    expect(w.calls.authorize).not.toHaveBeenCalled();
    // Local methods are screened too (customer and address signals), before the processor.
    expect(w.evaluate).toHaveBeenCalledTimes(1);
    expect(w.evaluate.mock.calls[0]?.[0]).toMatchObject({ chargeId: charge.id, card: undefined });
    expect(w.evaluate.mock.invocationCallOrder[0]).toBeLessThan(w.calls.startLocal.mock.invocationCallOrder[0] ?? 0);
    expect(await w.eventsOf(charge.id)).toEqual([]);
    expect(await w.balancesOf(merchant.id)).toEqual([]);
  });

  it("sepa_debit hands the IBAN to the processor and keeps only its last four characters", async () => {
    w = world();
    const m = await w.merchant();
    const charge = await w.domain.charges.create(w.caller(), {
      merchant_id: m.id,
      amount: 1000,
      currency: "EUR",
      payment_method: { type: "sepa_debit", iban: "DE89 3704 0044 0532 0130 00", account_holder: "Ada" },
    });
    expect(w.calls.startLocal.mock.calls[0]?.[0]).toMatchObject({
      method: "sepa_debit",
      iban: "DE89 3704 0044 0532 0130 00",
    });
    expect(charge.payment_method).toEqual({ type: "sepa_debit", last4: "3000" });
    expect(JSON.stringify(await w.stored(charge.id))).not.toContain("0532");
  });
});

describe("capture", () => {
  it("captures part of an authorization: the amount, the processor, the credit and the event", async () => {
    w = world();
    const { charge, merchant } = await w.card({ capture: false });
    const captured = await w.domain.charges.capture(w.caller(), charge.id, 600);
    expect(captured).toMatchObject({ status: "captured", amount: 1000, amount_captured: 600 });
    expect(w.calls.capture).toHaveBeenCalledWith({
      idempotencyKey: `${charge.id}:capture`,
      reference: charge.processor_ref,
      amount: 600,
      currency: "USD",
    });
    expect(await w.ledgerOf(merchant.id)).toMatchObject([{ bucket: "available", amount: 600, type: "capture" }]);
    const events = await w.eventsOf(charge.id);
    expect(events.map((e) => e.type)).toEqual(["payment.authorized", "payment.captured"]);
    expect(events[1]?.payload).toMatchObject({ status: "captured", amount_captured: 600, amount: 1000 });
  });

  it("captures everything authorized when no amount is given", async () => {
    w = world();
    const { charge } = await w.card({ capture: false });
    expect((await w.domain.charges.capture(w.caller(), charge.id)).amount_captured).toBe(1000);
    expect(w.calls.capture).toHaveBeenCalledWith({
      idempotencyKey: `${charge.id}:capture`,
      reference: charge.processor_ref,
      amount: 1000,
      currency: "USD",
    });
  });

  it("refuses more than the authorized amount before asking the processor (400 naming amount)", async () => {
    w = world();
    const { charge, merchant } = await w.card({ capture: false });
    const err = await refused(w.domain.charges.capture(w.caller(), charge.id, 1001));
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe("amount");
    expect(w.calls.capture).not.toHaveBeenCalled();
    expect((await w.stored(charge.id)).status).toBe("authorized");
    expect(await w.ledgerOf(merchant.id)).toEqual([]);
  });

  it.each([0, -500, 12.5])("refuses an amount of %d (MinorUnits), whoever calls", async (amount) => {
    w = world();
    const { charge, merchant } = await w.card({ capture: false });
    const err = await refused(w.domain.charges.capture(w.caller(), charge.id, amount));
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe("amount");
    expect(w.calls.capture).not.toHaveBeenCalled();
    expect((await w.stored(charge.id)).status).toBe("authorized");
    expect(await w.balancesOf(merchant.id)).toEqual([]);
  });

  it("does not ask the processor to capture a charge that is not authorized", async () => {
    w = world();
    const { charge } = await w.card();
    w.calls.capture.mockClear();
    expect((await refused(w.domain.charges.capture(w.caller(), charge.id))).code).toBe("invalid_state_transition");
    expect(w.calls.capture).not.toHaveBeenCalled();
  });

  it("in production credits pending until the settlement delay has passed", async () => {
    w = world({ settlementDelaySeconds: 172_800 });
    const { charge, merchant } = await w.card({ livemode: true, capture: false });
    await w.domain.charges.capture(w.caller(true), charge.id);
    expect(await w.ledgerOf(merchant.id)).toMatchObject([{ bucket: "pending", amount: 1000, type: "capture" }]);
    // A pending capture credit is an entry too (it settles and is drawn on later): its date and state.
    const [credit] = await w.entriesOf(merchant.id);
    expect(credit).toMatchObject({ bucket: "pending", amount: 1000, type: "capture", settled: false });
    expect(credit?.available_on).toBe(iso(new Date(Date.parse("2026-11-21T10:00:00Z") + 172_800_000)));
    w.advance(172_799);
    expect(await w.domain.jobs.settle()).toBe(0);
    expect(await w.balancesOf(merchant.id)).toMatchObject([{ available: 0, pending: 1000 }]);
    w.advance(1);
    expect(await w.domain.jobs.settle()).toBe(1);
    expect(await w.balancesOf(merchant.id)).toMatchObject([{ available: 1000, pending: 0 }]);
  });

  it("in the sandbox credits available at once, whatever the settlement delay", async () => {
    w = world({ settlementDelaySeconds: 172_800 });
    const { merchant } = await w.card();
    expect(await w.ledgerOf(merchant.id)).toMatchObject([{ bucket: "available", amount: 1000, type: "capture" }]);
    // Nothing waits to settle, so no line is kept as an entry as well (ledger/postings.ts isPendingCredit).
    expect(await w.entriesOf(merchant.id)).toEqual([]);
  });
});

describe("void", () => {
  it("releases an authorization: the processor, the status, the event, and no money", async () => {
    w = world();
    const { charge, merchant } = await w.card({ capture: false });
    const voided = await w.domain.charges.void(w.caller(), charge.id);
    expect(voided.status).toBe("voided");
    expect(w.calls.void).toHaveBeenCalledWith({ idempotencyKey: `${charge.id}:void`, reference: charge.processor_ref });
    expect((await w.eventsOf(charge.id)).map((e) => [e.type, e.payload.status])).toEqual([
      ["payment.authorized", "authorized"],
      ["payment.voided", "voided"],
    ]);
    expect(await w.ledgerOf(merchant.id)).toEqual([]);
  });

  it.each([
    ["captured", { capture: true }],
    ["declined", { pan: DECLINED }],
  ] as const)("does not ask the processor to void a %s charge", async (_status, options) => {
    w = world();
    const { charge } = await w.card(options);
    expect((await refused(w.domain.charges.void(w.caller(), charge.id))).code).toBe("invalid_state_transition");
    expect(w.calls.void).not.toHaveBeenCalled();
  });
});

describe("refund", () => {
  it("refunds part, then the rest: refunds, charge totals, processor, ledger, balance and events", async () => {
    w = world();
    const { charge, merchant } = await w.card();
    const first = await w.domain.charges.refund(w.caller(), charge.id, {
      amount: 300,
      reason: "requested_by_customer",
      metadata: { ticket: "T-1" },
    });
    expect(first.id).toMatch(/^re_[0-9A-Za-z]{24}$/);
    expect(first).toMatchObject({
      livemode: false,
      charge_id: charge.id,
      merchant_id: merchant.id,
      amount: 300,
      currency: "USD",
      status: "succeeded",
      reason: "requested_by_customer",
      metadata: { ticket: "T-1" },
    });
    expect(await w.stored(charge.id)).toMatchObject({ status: "partially_refunded", amount_refunded: 300 });

    const rest = await w.domain.charges.refund(w.caller(), charge.id, {});
    expect(rest).toMatchObject({ amount: 700, reason: null, metadata: {} });
    expect(await w.stored(charge.id)).toMatchObject({ status: "refunded", amount_refunded: 1000 });

    expect(w.calls.refund.mock.calls).toEqual([
      [{ idempotencyKey: `${first.id}:refund`, reference: charge.processor_ref, amount: 300, currency: "USD" }],
      [{ idempotencyKey: `${rest.id}:refund`, reference: charge.processor_ref, amount: 700, currency: "USD" }],
    ]);
    const refunds = (await w.ledgerOf(merchant.id)).filter((e) => e.type === "refund");
    expect(refunds.map((e) => [e.bucket, e.amount, e.source_id]).sort()).toEqual(
      [
        ["available", -300, first.id],
        ["available", -700, rest.id],
      ].sort(),
    );
    expect(await w.balancesOf(merchant.id)).toMatchObject([{ available: 0, pending: 0 }]);

    const events = (await w.eventsOf(charge.id)).filter((e) => e.type === "payment.refunded");
    expect(events.map((e) => e.payload)).toEqual([
      expect.objectContaining({
        status: "partially_refunded",
        refund_id: first.id,
        refund_amount: 300,
        amount_refunded: 300,
      }),
      expect.objectContaining({ status: "refunded", refund_id: rest.id, refund_amount: 700, amount_refunded: 1000 }),
    ]);
  });

  it("stamps the charge's updated_at with the refund's time", async () => {
    w = world();
    const { charge } = await w.card();
    w.advance(60);
    const refund = await w.domain.charges.refund(w.caller(), charge.id, { amount: 100 });
    expect((await w.stored(charge.id)).updated_at).toBe(refund.created_at);
    expect(refund.created_at > charge.updated_at).toBe(true);
  });

  it("refunds what is left of a partial capture by default", async () => {
    w = world();
    const { charge } = await w.card({ capture: false });
    await w.domain.charges.capture(w.caller(), charge.id, 400);
    await w.domain.charges.refund(w.caller(), charge.id, { amount: 100 });
    expect((await w.domain.charges.refund(w.caller(), charge.id, {})).amount).toBe(300);
    expect(await w.stored(charge.id)).toMatchObject({ status: "refunded", amount_captured: 400, amount_refunded: 400 });
  });

  it("refuses more than is left (409 refund_exceeds_remaining naming amount) and changes nothing", async () => {
    w = world();
    const { charge, merchant } = await w.card();
    await w.domain.charges.refund(w.caller(), charge.id, { amount: 600 });
    const err = await refused(w.domain.charges.refund(w.caller(), charge.id, { amount: 401 }));
    expect(err.code).toBe("refund_exceeds_remaining");
    expect(err.message).toBe("The refund of 401 exceeds what is left to refund (400 of 1000 captured).");
    expect(err.param).toBe("amount");
    expect(await w.stored(charge.id)).toMatchObject({ amount_refunded: 600, status: "partially_refunded" });
    expect(await w.balancesOf(merchant.id)).toMatchObject([{ available: 400 }]);
    expect(w.calls.refund).toHaveBeenCalledTimes(1);
  });

  it.each([0, -300, 2.5])(
    "refuses an amount of %d (MinorUnits): a negative refund would credit the merchant",
    async (amount) => {
      w = world();
      const { charge, merchant } = await w.card();
      const err = await refused(w.domain.charges.refund(w.caller(), charge.id, { amount }));
      expect(err.code).toBe("invalid_request");
      expect(err.param).toBe("amount");
      expect(await w.stored(charge.id)).toMatchObject({ status: "captured", amount_refunded: 0 });
      expect(await w.balancesOf(merchant.id)).toMatchObject([{ available: 1000 }]);
      expect(await w.store.findAll("refunds", {})).toEqual([]);
      expect(w.calls.refund).not.toHaveBeenCalled();
    },
  );

  it("an authorized charge is voided, not refunded (409 naming no field)", async () => {
    w = world();
    const { charge } = await w.card({ capture: false });
    for (const input of [{}, { amount: 100 }]) {
      const err = await refused(w.domain.charges.refund(w.caller(), charge.id, input));
      expect(err.code).toBe("invalid_state_transition");
      expect(err.param).toBeUndefined();
    }
    expect(w.calls.refund).not.toHaveBeenCalled();
  });

  it("of two concurrent full refunds one wins; the other finds the charge refunded (409 naming no field)", async () => {
    w = world();
    const { charge, merchant } = await w.card();
    const results = await Promise.allSettled([
      w.domain.charges.refund(w.caller(), charge.id, {}),
      w.domain.charges.refund(w.caller(), charge.id, {}),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const loser = results.find((r) => r.status === "rejected")?.reason as DomainError;
    expect(loser).toBeInstanceOf(DomainError);
    expect(loser.code).toBe("invalid_state_transition");
    expect(loser.param).toBeUndefined();
    expect(await w.balancesOf(merchant.id)).toMatchObject([{ available: 0 }]);
  });

  it("of two concurrent partial refunds that together overshoot, the second is refused naming amount", async () => {
    w = world();
    const { charge } = await w.card();
    const results = await Promise.allSettled([
      w.domain.charges.refund(w.caller(), charge.id, { amount: 600 }),
      w.domain.charges.refund(w.caller(), charge.id, { amount: 600 }),
    ]);
    const loser = results.find((r) => r.status === "rejected")?.reason as DomainError;
    expect(loser.code).toBe("refund_exceeds_remaining");
    expect(loser.param).toBe("amount");
    expect(await w.stored(charge.id)).toMatchObject({ status: "partially_refunded", amount_refunded: 600 });
  });

  it("a completed local payment is refunded like a card charge", async () => {
    w = world();
    const { charge, merchant } = await w.pix();
    await w.domain.charges.complete(w.caller(), charge.id);
    await w.domain.charges.refund(w.caller(), charge.id, { amount: 250 });
    expect(await w.stored(charge.id)).toMatchObject({ status: "partially_refunded", amount_refunded: 250 });
    expect(await w.balancesOf(merchant.id)).toMatchObject([{ currency: "BRL", available: 750 }]);
  });

  it("lists a charge's refunds, newest first, and nothing of other charges", async () => {
    w = world();
    const { charge } = await w.card();
    const { charge: other } = await w.card();
    const a = await w.domain.charges.refund(w.caller(), charge.id, { amount: 100 });
    const b = await w.domain.charges.refund(w.caller(), charge.id, { amount: 200 });
    await w.domain.charges.refund(w.caller(), other.id, { amount: 50 });
    const page = await w.domain.charges.listRefunds(w.caller(), charge.id, { limit: 10 });
    expect(page.data.map((r) => r.id)).toEqual([b.id, a.id]);
    const err = await refused(w.domain.charges.listRefunds(w.caller(), "tx_000000000000000000000000", { limit: 10 }));
    expect(err.code).toBe("not_found");
  });
});

describe("sandbox helpers and expiry", () => {
  it("complete: the payer pays; the whole amount is captured and credited", async () => {
    w = world();
    const { charge, merchant } = await w.pix(false, 1500);
    const captured = await w.domain.charges.complete(w.caller(), charge.id);
    expect(captured).toMatchObject({ status: "captured", amount_captured: 1500, next_action: null, expires_at: null });
    expect(await w.ledgerOf(merchant.id)).toMatchObject([
      { bucket: "available", amount: 1500, type: "capture", source_id: charge.id },
    ]);
    const events = await w.eventsOf(charge.id);
    expect(events.map((e) => e.type)).toEqual(["payment.captured"]);
    expect(events[0]?.payload).toMatchObject({ status: "captured", amount_captured: 1500, payment_method_type: "pix" });
  });

  it("expire: the charge expires, its next action is gone, and nothing is credited", async () => {
    w = world();
    const { charge, merchant } = await w.pix();
    const expired = await w.domain.charges.expire(w.caller(), charge.id);
    expect(expired).toMatchObject({ status: "expired", next_action: null });
    expect(await w.stored(charge.id)).toMatchObject({ status: "expired", next_action: null });
    expect((await w.eventsOf(charge.id)).map((e) => [e.type, e.payload.status])).toEqual([
      ["payment.expired", "expired"],
    ]);
    expect(await w.balancesOf(merchant.id)).toEqual([]);
  });

  it("the expiry job skips a charge paid between its query and its update", async () => {
    w = world();
    const { charge } = await w.pix();
    w.advance(3601);
    const findAll = w.store.findAll.bind(w.store);
    vi.spyOn(w.store, "findAll").mockImplementationOnce(async (...args: Parameters<typeof w.store.findAll>) => {
      const due = await findAll(...args);
      await w.domain.charges.complete(w.caller(), charge.id);
      return due as never;
    });
    expect(await w.domain.jobs.expire()).toBe(0);
    expect((await w.stored(charge.id)).status).toBe("captured");
  });

  it("the expiry job does not swallow failures other than a lost race", async () => {
    for (const failure of [new Error("disk I/O error"), new DomainError("conflict", "store conflict")]) {
      w = world();
      await w.pix();
      w.advance(3601);
      vi.spyOn(w.store, "transaction").mockRejectedValueOnce(failure);
      await expect(w.domain.jobs.expire()).rejects.toBe(failure);
      vi.restoreAllMocks();
      await w.store.close();
    }
    w = world();
  });
});
