import type { Page, PageResult } from "../store/port.ts";
import { commit } from "./commit.ts";
import type { Caller, Now } from "./context.ts";
import { DomainError, invalid, notFound } from "./errors.ts";
import { recordEvent } from "./events.ts";
import { assertIp } from "./fraud/evaluations.ts";
import type { ChargeAssessment, FraudScreen } from "./fraud/port.ts";
import { newId } from "./ids.ts";
import { drawFromPendingCredit, ensureBalance, post } from "./ledger.ts";
import type { Merchants } from "./merchants.ts";
import { assertMinorUnits, assertMoney, type MoneyRules } from "./money.ts";
import { followTransition } from "./payment-links/usage.ts";
import { LOCAL_METHODS, type LocalMethod, type Processor } from "./processor.ts";
import type { AppStore, AppTx, ChargeDoc, ChargeReviewDoc, ChargeStatus, RefundDoc } from "./records.ts";
import { createdAt, iso } from "./time.ts";
import type { Tokens } from "./tokens.ts";

// Charges, refunds and their money movements (spec/resources/charges.tsp; docs/charges.md 'Charges').
//
// Order of work for every change: checks → the processor (an outside call, never inside a store
// transaction, which may be retried) → one transaction that writes the state change, its ledger
// entries and balance changes, and its events (the outbox), conditional on the state it started from.

/** The charge state machine: every allowed transition. Anything else is a 409 invalid_state_transition. */
export const CHARGE_TRANSITIONS: Record<ChargeStatus, readonly ChargeStatus[]> = {
  pending: ["captured", "expired"],
  authorized: ["captured", "voided"],
  captured: ["partially_refunded", "refunded"],
  partially_refunded: ["partially_refunded", "refunded"],
  refunded: [],
  declined: [],
  blocked: [],
  voided: [],
  expired: [],
};

export function canTransition(from: ChargeStatus, to: ChargeStatus): boolean {
  return CHARGE_TRANSITIONS[from].includes(to);
}

/** Why a transition is refused, in words an integrator can act on. */
function refusal(charge: ChargeDoc, action: "capture" | "void" | "refund" | "complete" | "expire"): DomainError {
  const s = charge.status;
  // spec: ChargeReview — while a review is open, only approve and reject act on the charge.
  if (charge.review?.status === "open" && (action === "capture" || action === "void")) {
    return new DomainError(
      "invalid_state_transition",
      `The charge is held for fraud review: ${action === "capture" ? "approve" : "reject"} the review instead.`,
    );
  }
  const why: Record<typeof action, string> = {
    capture:
      s === "captured" || s === "partially_refunded" || s === "refunded"
        ? `The charge is ${s}; a charge is captured once.`
        : s === "pending"
          ? "The charge is pending: a local payment is captured when the payer pays."
          : `A ${s} charge cannot be captured; only authorized ones can.`,
    void:
      s === "captured" || s === "partially_refunded"
        ? `A ${s} charge cannot be voided; refund it instead.`
        : `A ${s} charge cannot be voided; only authorized ones can.`,
    refund:
      s === "refunded"
        ? "The charge is already fully refunded."
        : s === "authorized"
          ? "An authorized charge has not been captured: void it instead of refunding."
          : `A ${s} charge cannot be refunded; only captured ones can.`,
    complete: `A ${s} charge cannot be completed; only pending ones can.`,
    expire: `A ${s} charge cannot expire; only pending ones can.`,
  };
  return new DomainError("invalid_state_transition", why[action]);
}

/** A `block` decision: the charge is `blocked` and the processor is never called. */
function block(charge: ChargeDoc, assessment: ChargeAssessment): void {
  charge.status = "blocked";
  charge.failure_code = "fraud_blocked";
  charge.failure_message =
    `Blocked by fraud evaluation ${assessment.evaluationId} ` +
    `(score ${assessment.score}: ${assessment.signals.join(", ") || "no signals"}).`;
}

function exceedsRefundable(charge: ChargeDoc, amount: number): DomainError {
  const left = charge.amount_captured - charge.amount_refunded;
  return new DomainError(
    "invalid_state_transition",
    `The refund of ${amount} exceeds what is left to refund (${left} of ${charge.amount_captured} captured).`,
    { param: "amount" },
  );
}

type PaymentMethodInput =
  | { type: "card"; token: string }
  | { type: "pix" | "boleto" | "oxxo" | "spei" }
  | { type: "sepa_debit"; iban: string; account_holder: string };

export interface ChargeCreate {
  merchant_id: string;
  amount: number;
  currency: string;
  payment_method: PaymentMethodInput;
  capture?: boolean | undefined;
  description?: string | undefined;
  metadata?: Record<string, string> | undefined;
  customer?: { email?: string; ip?: string; country?: string } | undefined;
}

/** For charges made through a payment link's hosted page (domain/payment-links). */
export interface ChargeCreateOptions {
  paymentLinkId?: string | undefined;
  /** Runs inside the charge's transaction, after the charge is written: counts it against its link. */
  inTransaction?: ((tx: AppTx, charge: ChargeDoc) => Promise<void>) | undefined;
}

export interface RefundCreate {
  amount?: number | undefined;
  reason?: RefundDoc["reason"] | undefined;
  metadata?: Record<string, string> | undefined;
}

export interface ChargesDeps {
  store: AppStore;
  now: Now;
  merchants: Merchants;
  tokens: Tokens;
  processor: Processor;
  fraud: FraudScreen;
  money: MoneyRules;
  /** Production captures wait this long in `pending` before they are `available`; the sandbox settles at once. */
  settlementDelaySeconds: number;
}

function eventFields(c: ChargeDoc) {
  return {
    tx_id: c.id,
    merchant_id: c.merchant_id,
    amount: c.amount,
    currency: c.currency,
    status: c.status,
    payment_method_type: c.payment_method.type,
  };
}

export function createCharges(deps: ChargesDeps) {
  const { store, now, processor } = deps;

  async function load(livemode: boolean, id: string, param = "id"): Promise<ChargeDoc> {
    const charge = await store.get("charges", id);
    if (!charge || charge.livemode !== livemode) throw notFound("charge", id, param);
    return charge;
  }

  /** Credits a capture to the merchant: `available` in the sandbox, `pending` until settlement in production. */
  async function creditCapture(tx: AppTx, charge: ChargeDoc, amount: number) {
    const delay = charge.livemode ? deps.settlementDelaySeconds : 0;
    const base = { livemode: charge.livemode, merchantId: charge.merchant_id, currency: charge.currency };
    if (delay === 0) {
      await post(tx, now, { ...base, bucket: "available", amount, type: "capture", sourceId: charge.id });
    } else {
      const availableOn = iso(new Date(now().getTime() + delay * 1000));
      await post(tx, now, { ...base, bucket: "pending", amount, type: "capture", sourceId: charge.id, availableOn });
    }
  }

  /** Applies a transition conditionally on the status it starts from; a concurrent change makes it a 409. */
  async function transition(
    tx: AppTx,
    charge: ChargeDoc,
    to: ChargeStatus,
    set: Partial<ChargeDoc>,
    action: Parameters<typeof refusal>[1],
  ): Promise<ChargeDoc> {
    if (!canTransition(charge.status, to)) throw refusal(charge, action);
    const updated = await tx.update(
      "charges",
      charge.id,
      { set: { ...set, status: to, updated_at: iso(now()) } },
      { status: charge.status },
    );
    if (!updated) {
      const current = await tx.get("charges", charge.id);
      throw current ? refusal(current, action) : notFound("charge", charge.id);
    }
    // A charge made through a payment link moves its link's counts in the same transaction.
    if (updated.payment_link_id) await followTransition(tx, now, charge.status, updated);
    return updated;
  }

  function assertSandbox(caller: Caller, id: string): void {
    // Sandbox helpers do not exist in production: a live key gets 404 (spec/resources/sandbox.tsp).
    if (caller.livemode) throw notFound("charge", id);
  }

  return {
    load,

    async create(caller: Caller, input: ChargeCreate, options: ChargeCreateOptions = {}): Promise<ChargeDoc> {
      assertMoney(input.amount, input.currency, deps.money);
      assertIp(input.customer?.ip, "customer.ip");
      const method = input.payment_method;
      if (method.type !== "card") {
        const required = LOCAL_METHODS[method.type].currency;
        if (input.currency !== required) throw invalid("currency", `${method.type} payments must be in ${required}`);
      }
      const merchant = await deps.merchants.load(caller.livemode, input.merchant_id, "merchant_id");
      if (merchant.status !== "active") {
        throw new DomainError(
          "merchant_inactive",
          `The merchant is ${merchant.status}; only active merchants can take payments.`,
          {
            param: "merchant_id",
          },
        );
      }

      const at = now();
      const id = newId("tx");
      const charge: ChargeDoc = {
        id,
        livemode: caller.livemode,
        created_at: createdAt(at),
        updated_at: iso(at),
        merchant_id: merchant.id,
        amount: input.amount,
        currency: input.currency,
        status: "pending",
        amount_captured: 0,
        amount_refunded: 0,
        payment_method: { type: method.type },
        next_action: null,
        expires_at: null,
        failure_code: null,
        failure_message: null,
        description: input.description ?? null,
        metadata: input.metadata ?? {},
        customer: input.customer ?? null,
        processor_ref: null,
        fraud_evaluation_id: null,
        review: null,
        review_expires_at: null,
        ...(options.paymentLinkId ? { payment_link_id: options.paymentLinkId } : {}),
      };

      /** Every charge is evaluated before the processor is called (spec: POST /v1/charges). */
      const assess = async (c: ChargeDoc, card?: { pan: string; fingerprint: string }) => {
        const result = await deps.fraud.assessCharge({
          livemode: c.livemode,
          chargeId: c.id,
          merchantId: c.merchant_id,
          amount: c.amount,
          currency: c.currency,
          card,
          customer: c.customer,
        });
        c.fraud_evaluation_id = result.evaluationId;
        return result;
      };
      let assessment: ChargeAssessment;

      if (method.type === "card") {
        const { token, pan } = await deps.tokens.pan(caller.livemode, method.token, "payment_method.token");
        charge.payment_method = {
          type: "card",
          token: token.id,
          brand: token.brand,
          last4: token.last4,
          fingerprint: token.fingerprint,
        };
        assessment = await assess(charge, { pan, fingerprint: token.fingerprint });
        if (assessment.decision === "block") {
          block(charge, assessment);
        } else {
          const auth = await processor.authorizeCard({
            chargeId: id,
            pan,
            expMonth: token.exp_month,
            expYear: token.exp_year,
            amount: input.amount,
            currency: input.currency,
            livemode: caller.livemode,
            now: at,
          });
          if (auth.approved) {
            charge.status = "authorized";
            charge.processor_ref = auth.reference;
            if (assessment.decision === "review") {
              // Held: not captured, whatever `capture` says, until the review is approved (spec: ChargeReview).
              const expiresAt = iso(new Date(at.getTime() + assessment.reviewWindowSeconds * 1000));
              charge.review = {
                status: "open",
                opened_at: charge.updated_at,
                expires_at: expiresAt,
                closed_at: null,
                capture: input.capture ?? true,
              };
              charge.review_expires_at = expiresAt;
            } else if (input.capture ?? true) {
              await processor.capture(auth.reference, input.amount);
              charge.status = "captured";
              charge.amount_captured = input.amount;
            }
          } else {
            charge.status = "declined";
            charge.failure_code = auth.failureCode;
            charge.failure_message = auth.failureMessage;
          }
        }
      } else {
        // Local methods are screened on the customer's facts; a `review` cannot hold a payment the payer
        // has not made yet, so it is recorded on the evaluation only (spec: ChargeReview).
        assessment = await assess(charge);
        if (assessment.decision === "block") {
          block(charge, assessment);
        } else {
          const action = await processor.startLocalPayment({
            chargeId: id,
            method: method.type as LocalMethod,
            amount: input.amount,
            currency: input.currency,
            now: at,
            iban: method.type === "sepa_debit" ? method.iban : undefined,
          });
          charge.next_action = action;
          charge.expires_at = action.expires_at;
          if (method.type === "sepa_debit") charge.payment_method.last4 = method.iban.replace(/\s+/g, "").slice(-4);
        }
      }

      if (charge.status === "captured") await ensureBalance(store, caller.livemode, merchant.id, input.currency, now);
      const evaluated = assessment;
      return commit(store, caller, async (tx) => {
        await tx.insert("charges", charge);
        // The evaluation and its `fraud.evaluated` event commit with the charge, before its own events.
        await evaluated.record(tx, charge);
        const fields = eventFields(charge);
        if (charge.status === "authorized" || charge.status === "captured") {
          await recordEvent(tx, now, charge.livemode, "payment.authorized", { ...fields, status: "authorized" });
        }
        if (charge.status === "captured") {
          await creditCapture(tx, charge, charge.amount_captured);
          await recordEvent(tx, now, charge.livemode, "payment.captured", {
            ...fields,
            amount_captured: charge.amount_captured,
          });
        }
        if (charge.status === "declined" || charge.status === "blocked") {
          await recordEvent(tx, now, charge.livemode, "payment.failed", {
            ...fields,
            failure_code: charge.failure_code,
            failure_message: charge.failure_message,
          });
        }
        await options.inTransaction?.(tx, charge);
        return charge;
      });
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    list: (
      caller: Caller,
      filter: {
        merchant_id?: string | undefined;
        status?: ChargeStatus | undefined;
        payment_link_id?: string | undefined;
      },
      page: Page,
    ): Promise<PageResult<ChargeDoc>> =>
      store.list(
        "charges",
        {
          livemode: caller.livemode,
          ...(filter.merchant_id ? { merchant_id: filter.merchant_id } : {}),
          ...(filter.status ? { status: filter.status } : {}),
          ...(filter.payment_link_id ? { payment_link_id: filter.payment_link_id } : {}),
        },
        page,
      ),

    async capture(caller: Caller, id: string, amount?: number): Promise<ChargeDoc> {
      // CaptureCharge.amount is MinorUnits; checked here too, for callers other than the HTTP layer.
      if (amount !== undefined) assertMinorUnits(amount, "amount");
      const charge = await load(caller.livemode, id);
      if (charge.status !== "authorized" || charge.review?.status === "open") throw refusal(charge, "capture");
      const toCapture = amount ?? charge.amount;
      if (toCapture > charge.amount) {
        throw invalid("amount", `must be at most the authorized amount (${charge.amount})`);
      }
      await processor.capture(charge.processor_ref ?? "", toCapture);
      await ensureBalance(store, charge.livemode, charge.merchant_id, charge.currency, now);
      return commit(store, caller, async (tx) => {
        const captured = await transition(tx, charge, "captured", { amount_captured: toCapture }, "capture");
        await creditCapture(tx, captured, toCapture);
        await recordEvent(tx, now, captured.livemode, "payment.captured", {
          ...eventFields(captured),
          amount_captured: toCapture,
        });
        return captured;
      });
    },

    async void(caller: Caller, id: string): Promise<ChargeDoc> {
      const charge = await load(caller.livemode, id);
      if (charge.status !== "authorized" || charge.review?.status === "open") throw refusal(charge, "void");
      await processor.void(charge.processor_ref ?? "");
      return commit(store, caller, async (tx) => {
        const voided = await transition(tx, charge, "voided", {}, "void");
        await recordEvent(tx, now, voided.livemode, "payment.voided", eventFields(voided));
        return voided;
      });
    },

    /**
     * Refunds part or all of what is left. The charge's refunded total is raised with a conditional
     * increment (never past the captured amount) and the merchant's available balance lowered with a
     * conditional decrement (never below zero), in one transaction: concurrent refunds can only ever
     * add up to the captured amount.
     */
    async refund(caller: Caller, id: string, input: RefundCreate): Promise<RefundDoc> {
      // CreateRefund.amount is MinorUnits: a zero or negative refund would credit the merchant.
      if (input.amount !== undefined) assertMinorUnits(input.amount, "amount");
      const charge = await load(caller.livemode, id);
      if (charge.status !== "captured" && charge.status !== "partially_refunded") throw refusal(charge, "refund");
      const left = charge.amount_captured - charge.amount_refunded;
      const amount = input.amount ?? left;
      if (amount > left) throw exceedsRefundable(charge, amount);
      const at = createdAt(now());
      const refund: RefundDoc = {
        id: newId("re"),
        livemode: charge.livemode,
        created_at: at,
        charge_id: charge.id,
        merchant_id: charge.merchant_id,
        amount,
        currency: charge.currency,
        status: "succeeded",
        reason: input.reason ?? null,
        metadata: input.metadata ?? {},
      };
      await commit(store, caller, async (tx) => {
        const raised = await tx.update(
          "charges",
          charge.id,
          { inc: { amount_refunded: amount }, set: { updated_at: at } },
          {
            status: { $in: ["captured", "partially_refunded"] },
            amount_refunded: { $lte: charge.amount_captured - amount },
          },
        );
        if (!raised) {
          // A concurrent refund (or another change) got there first: say which limit now applies.
          const current = (await tx.get("charges", charge.id)) ?? charge;
          throw current.status === "captured" || current.status === "partially_refunded"
            ? exceedsRefundable(current, amount)
            : refusal(current, "refund");
        }
        const status: ChargeStatus =
          raised.amount_refunded === raised.amount_captured ? "refunded" : "partially_refunded";
        const after = (await tx.update("charges", charge.id, { set: { status } })) ?? raised;
        // The money comes first from this charge's own capture credit if it has not settled yet
        // (production), then from `available`: a merchant can refund a same-day order.
        const base = { livemode: charge.livemode, merchantId: charge.merchant_id, currency: charge.currency };
        const fromPending = await drawFromPendingCredit(tx, now, {
          ...base,
          chargeId: charge.id,
          refundId: refund.id,
          amount,
        });
        if (fromPending < amount) {
          await post(tx, now, {
            ...base,
            bucket: "available",
            amount: -(amount - fromPending),
            type: "refund",
            sourceId: refund.id,
          });
        }
        await tx.insert("refunds", refund);
        await recordEvent(tx, now, charge.livemode, "payment.refunded", {
          ...eventFields(after),
          refund_id: refund.id,
          refund_amount: amount,
          amount_refunded: after.amount_refunded,
        });
        return refund;
      });
      // The simulator never fails; a real acquirer's refund failure would need a `failed` refund state.
      await processor.refund(charge.processor_ref ?? "", amount);
      return refund;
    },

    async listRefunds(caller: Caller, id: string, page: Page): Promise<PageResult<RefundDoc>> {
      await load(caller.livemode, id);
      return store.list("refunds", { livemode: caller.livemode, charge_id: id }, page);
    },

    /** Sandbox: the payer pays a pending local payment. */
    async complete(caller: Caller, id: string): Promise<ChargeDoc> {
      assertSandbox(caller, id);
      const charge = await load(caller.livemode, id);
      if (charge.status !== "pending") throw refusal(charge, "complete");
      await ensureBalance(store, charge.livemode, charge.merchant_id, charge.currency, now);
      return commit(store, caller, async (tx) => {
        const captured = await transition(
          tx,
          charge,
          "captured",
          { amount_captured: charge.amount, next_action: null, expires_at: null },
          "complete",
        );
        await creditCapture(tx, captured, captured.amount);
        await recordEvent(tx, now, captured.livemode, "payment.captured", {
          ...eventFields(captured),
          amount_captured: captured.amount,
        });
        return captured;
      });
    },

    /** Sandbox: the payer never pays; the charge expires now. */
    async expire(caller: Caller, id: string): Promise<ChargeDoc> {
      assertSandbox(caller, id);
      const charge = await load(caller.livemode, id);
      return expireOne(charge, caller);
    },

    /** The expiry job: every pending charge past its `expires_at`. Returns how many expired. */
    async expireDue(limit = 500): Promise<number> {
      const due = await store.findAll("charges", { status: "pending", expires_at: { $lte: iso(now()) } }, limit);
      let expired = 0;
      for (const charge of due) {
        try {
          await expireOne(charge);
          expired++;
        } catch (err) {
          // Paid (or expired by another instance) meanwhile: nothing to do.
          if (!(err instanceof DomainError && err.code === "invalid_state_transition")) throw err;
        }
      }
      return expired;
    },

    /**
     * Approves a charge held for review (spec: approveChargeReview): captured, unless it was created
     * with `capture: false`, when it stays authorized for a later capture.
     */
    async approveReview(caller: Caller, id: string): Promise<ChargeDoc> {
      const charge = await load(caller.livemode, id);
      const review = assertOpenReview(charge);
      if (!review.capture) {
        return commit(store, caller, (tx) => closeReview(tx, charge, review, "approved", {}));
      }
      await processor.capture(charge.processor_ref ?? "", charge.amount);
      await ensureBalance(store, charge.livemode, charge.merchant_id, charge.currency, now);
      return commit(store, caller, async (tx) => {
        const captured = await closeReview(tx, charge, review, "approved", {
          status: "captured",
          amount_captured: charge.amount,
        });
        await creditCapture(tx, captured, charge.amount);
        await recordEvent(tx, now, captured.livemode, "payment.captured", {
          ...eventFields(captured),
          amount_captured: charge.amount,
        });
        return captured;
      });
    },

    /** Rejects a charge held for review (spec: rejectChargeReview): voided; nothing was captured, nothing is refunded. */
    async rejectReview(caller: Caller, id: string): Promise<ChargeDoc> {
      return voidHeld(await load(caller.livemode, id), "rejected", caller);
    },

    /** The review-expiry job: every open review past its `expires_at` is voided. Returns how many. */
    async expireReviewsDue(limit = 500): Promise<number> {
      const due = await store.findAll("charges", { review_expires_at: { $lte: iso(now()) } }, limit);
      let expired = 0;
      for (const charge of due) {
        try {
          await voidHeld(charge, "expired", null);
          expired++;
        } catch (err) {
          // Approved, rejected or expired by another instance meanwhile: nothing to do.
          if (!(err instanceof DomainError && (err.code === "invalid_state_transition" || err.code === "conflict"))) {
            throw err;
          }
        }
      }
      return expired;
    },
  };

  /** 409 unless the charge is authorized with an open review. */
  function assertOpenReview(charge: ChargeDoc): ChargeReviewDoc {
    if (charge.status !== "authorized" || charge.review?.status !== "open") {
      throw new DomainError(
        "invalid_state_transition",
        charge.review ? `The charge's review is ${charge.review.status}, not open.` : "The charge has no open review.",
      );
    }
    return charge.review;
  }

  /**
   * Closes an open review (approve, reject, expiry), conditional on the charge still being authorized
   * with that review open: of a concurrent approve, reject and expiry, exactly one wins; the others get
   * a 409 (the expiry job skips).
   */
  async function closeReview(
    tx: AppTx,
    charge: ChargeDoc,
    review: ChargeReviewDoc,
    outcome: "approved" | "rejected" | "expired",
    set: Partial<ChargeDoc>,
  ): Promise<ChargeDoc> {
    const at = iso(now());
    const updated = await tx.update(
      "charges",
      charge.id,
      {
        set: {
          ...set,
          review: { ...review, status: outcome, closed_at: at },
          review_expires_at: null,
          updated_at: at,
        },
      },
      { status: "authorized", review_expires_at: review.expires_at },
    );
    if (!updated) {
      const current = await tx.get("charges", charge.id);
      if (!current) throw notFound("charge", charge.id);
      assertOpenReview(current);
      throw new DomainError("conflict", "The charge changed while its review was being closed; retry.");
    }
    // A held charge made through a payment link: its held use becomes a use (captured) or is freed (voided).
    if (updated.payment_link_id) await followTransition(tx, now, charge.status, updated);
    return updated;
  }

  /** Voids a held charge whose review was rejected or expired (`caller` is null for the expiry job). */
  async function voidHeld(
    charge: ChargeDoc,
    outcome: "rejected" | "expired",
    caller: Caller | null,
  ): Promise<ChargeDoc> {
    const review = assertOpenReview(charge);
    await processor.void(charge.processor_ref ?? "");
    return commit(store, caller, async (tx) => {
      const voided = await closeReview(tx, charge, review, outcome, { status: "voided" });
      await recordEvent(tx, now, voided.livemode, "payment.voided", eventFields(voided));
      return voided;
    });
  }

  /** `caller` is null for the expiry job. */
  async function expireOne(charge: ChargeDoc, caller: Caller | null = null): Promise<ChargeDoc> {
    if (charge.status !== "pending") throw refusal(charge, "expire");
    return commit(store, caller, async (tx) => {
      const expired = await transition(tx, charge, "expired", { next_action: null }, "expire");
      await recordEvent(tx, now, expired.livemode, "payment.expired", eventFields(expired));
      return expired;
    });
  }
}

export type Charges = ReturnType<typeof createCharges>;
