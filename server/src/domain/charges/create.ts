import type { components } from "@payments/contract/types";
import { assertIp } from "../fraud/ip.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import { assertMoney } from "../kernel/money.ts";
import { iso } from "../kernel/time.ts";
import { type FeeSchedule, rateFor } from "../ledger/fees.ts";
import type { ChargeContext } from "./context.ts";
import type { ChargeAssessment } from "./fraud-screen.ts";
import { answeredInDoubt } from "./in-doubt.ts";
import { authorizationOf, refusedRepeat } from "./intents.ts";
import {
  acquirerKey,
  LOCAL_METHODS,
  type LocalMethod,
  type LocalPaymentRequest,
  type NextAction,
} from "./processor.ts";
import type { AcquirerIntentDoc, ChargeDoc, ChargeTx } from "./records.ts";
import { CHARGE_MACHINE, eventFields } from "./state.ts";
import { type AuthenticationInput, openReview, threeDSecure } from "./three-d-secure.ts";

// createCharge (POST /v1/charges, spec/resources/charges.tsp): checks, fraud evaluation, then the
// processor, under an intent written first (intents.ts): a card is authorized and, unless held or
// `capture: false`, captured in the same call; a local method starts a payment the payer completes. Then one
// transaction with the charge, its evaluation, its events, its money and its intent's resolution.

type PaymentMethodInput = components["schemas"]["PaymentMethodInput"];

/** createCharge's body (the contract's ChargeCreate). */
export type ChargeCreate = components["schemas"]["ChargeCreate"];

/** For charges made through a payment link's hosted page (domain/payment-links). */
export interface ChargeCreateOptions {
  paymentLinkId?: string | undefined;
  /** The card's token was made for this charge alone (a hosted page's): 3-D Secure erases it once answered. */
  singleUseToken?: boolean | undefined;
  /** Runs inside the charge's transaction, after the charge is written: counts it against its link. */
  inTransaction?: ((tx: ChargeTx, charge: ChargeDoc) => Promise<void>) | undefined;
}

/** A `block` decision: the charge is `blocked` and the processor is never called. */
function block(charge: ChargeDoc, assessment: ChargeAssessment): void {
  charge.status = CHARGE_MACHINE.start("blocked");
  charge.failure_code = "fraud_blocked";
  charge.failure_message =
    `Blocked by fraud evaluation ${assessment.evaluationId} ` +
    `(score ${assessment.score}: ${assessment.signals.join(", ") || "no signals"}).`;
}

/** A declined or blocked charge's code and message: both are set wherever a charge fails (above, and payByCard). */
function failureOf(charge: ChargeDoc) {
  const { failure_code, failure_message } = charge;
  if (failure_code === null || failure_message === null) throw new Error(`charge ${charge.id} failed without a reason`);
  return { failure_code, failure_message };
}

/**
 * A new charge, not yet stored: `pending`, nothing captured, nothing evaluated. Until it is stored, its
 * status is its creation outcome (CHARGE_MACHINE's initial statuses), chosen once below.
 */
function newCharge(
  clock: Clock,
  caller: Caller,
  input: ChargeCreate,
  merchantId: string,
  options: ChargeCreateOptions,
  fees: FeeSchedule,
) {
  // One timestamp for the creation: updated_at is created_at to the millisecond, never the earlier `at`.
  const created = clock.createdAt(caller.livemode);
  const charge: ChargeDoc = {
    id: newId("tx"),
    livemode: caller.livemode,
    created_at: created,
    updated_at: iso(new Date(created)),
    merchant_id: merchantId,
    amount: input.amount,
    currency: input.currency,
    status: CHARGE_MACHINE.start("pending"),
    amount_captured: 0,
    amount_refunded: 0,
    payment_method: { type: input.payment_method.type },
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
    fee_rate: rateFor(fees, input.payment_method.type, input.currency),
  };
  return charge;
}

/** What 3-D Secure needs of a card charge: asked by the issuer first (the simulator), or by the acquirer (Adyen). */
function authenticationInput(
  pan: string,
  input: ChargeCreate,
  assessment: ChargeAssessment,
  options: ChargeCreateOptions,
): AuthenticationInput {
  const asked = input.payment_method_options?.card?.request_three_d_secure ?? "automatic";
  return {
    pan,
    // A fraud evaluation that decides request_3ds asks the issuer for a challenge (FraudDecision).
    request: assessment.decision === "request_3ds" ? "challenge" : asked,
    capture: input.capture ?? true,
    returnUrl: input.return_url ?? null,
    reviewWindowSeconds: assessment.decision === "review" ? assessment.reviewWindowSeconds : null,
    eraseToken: options.singleUseToken ?? false,
  };
}

/**
 * The recovery of an authorization whose charge was never stored (intents.ts): the same call is sent
 * again under its key, which tells what the acquirer did without authorizing again, and whatever
 * stands is reversed (released, or refunded when captured in the same call). The request that sent
 * it got no answer, so for its caller the charge was never made.
 */
async function reverseUnrecorded(ctx: ChargeContext, intent: AcquirerIntentDoc): Promise<void> {
  if (!intent.token) throw new Error(`authorization intent ${intent.id} has no token`);
  const processor = ctx.processorFor(intent.livemode);
  const { token: card, pan } = await ctx.tokens.pan(intent.livemode, intent.token);
  const auth = await processor.authorizeCard(
    authorizationOf(
      intent,
      { pan, expMonth: card.exp_month, expYear: card.exp_year },
      ctx.clock.now(intent.livemode),
      ctx.challengeLinks.returnUrl(intent.charge_id),
    ),
  );
  // Refused as a request, the repeat tells nothing: the authorization may stand. Never resolved as reversed.
  if (!auth.approved && "requestRefused" in auth) throw refusedRepeat(intent);
  // A challenge answered again holds nothing: the acquirer authorizes only after the payer's return.
  // One taken and not decided yet is reversed too: the acquirer cancels it whatever it decides.
  const standing = auth.approved ? auth.reference : "undecided" in auth ? auth.undecided.reference : null;
  if (standing) {
    await processor.reverse({ idempotencyKey: acquirerKey(intent.charge_id, "reverse"), reference: standing });
  }
  await ctx.intents.resolveAlone(intent, "reversed");
}

type LocalMethodInput = Exclude<PaymentMethodInput, { type: "card" }>;

/** What a SEPA debit's start sends of its payer: sealed in its intent, so the recovery job can send it again. */
interface PayerAccount {
  iban: string;
  holder: string;
}

const payerAccountOf = (method: LocalMethodInput & { type: "sepa_debit" }): PayerAccount => ({
  iban: method.iban,
  holder: method.account_holder,
});

/** The method and, for a SEPA debit, the account its start sends. */
const payerOf = (method: LocalMethodInput) =>
  method.type === "sepa_debit" ? { type: method.type, ...payerAccountOf(method) } : { type: method.type };

/** The sealed account's associated data: it opens only for the intent of this charge's start. */
const sealContext = (chargeId: string) => `acquirer_intent:${acquirerKey(chargeId, "start_local")}`;

/**
 * A local payment's start, built from its intent and the payer's details alone, so that every attempt (the
 * first, a retry with the same Idempotency-Key, the recovery job's repeat) is the same request under the
 * same key, whatever BASE_URL the instance that sends it has.
 */
function localStart(
  chargeId: string,
  method: { type: LocalMethod } & Partial<PayerAccount>,
  intent: Pick<AcquirerIntentDoc, "amount" | "currency" | "return_url">,
  at: Date,
): LocalPaymentRequest {
  return {
    returnUrl: intent.return_url,
    idempotencyKey: acquirerKey(chargeId, "start_local"),
    chargeId,
    method: method.type,
    amount: intent.amount,
    currency: intent.currency,
    now: at,
    iban: method.iban,
    accountHolder: method.holder,
  };
}

/**
 * Writes the intent of a local payment's start before its call (intents.ts), or resumes the open one a
 * retry of the same request finds (`resumed`, whose sealed account is already on it).
 */
function openLocalStart(
  ctx: ChargeContext,
  caller: Caller,
  charge: ChargeDoc,
  method: LocalMethodInput,
  resumed: AcquirerIntentDoc | null,
): Promise<AcquirerIntentDoc> {
  return ctx.intents.open({
    livemode: charge.livemode,
    chargeId: charge.id,
    objectId: charge.id,
    operation: "start_local",
    finish: "create",
    amount: charge.amount,
    currency: charge.currency,
    reference: null,
    requestKey: caller.outcome?.key,
    localMethod: method.type,
    returnUrl: ctx.challengeLinks.returnUrl(charge.id),
    ...(method.type === "sepa_debit" && !resumed
      ? { payerAccount: ctx.sealing.seal(JSON.stringify(payerAccountOf(method)), sealContext(charge.id)) }
      : {}),
  });
}

/**
 * The recovery of a local payment's start whose charge was never stored (intents.ts): the caller got no
 * answer, so for them the charge was never made. A SEPA Direct Debit is collected by the acquirer with no
 * further act of the payer: its start is sent again under its key (the acquirer answers as the first time,
 * starting nothing more) and the debit it started is reversed. Any other method is completed only by its
 * payer, with the code or voucher this answer would have shown them: nothing can be paid, the payment
 * expires unpaid at the acquirer, and the intent is resolved `abandoned` without a call.
 */
async function abandonUnrecorded(ctx: ChargeContext, intent: AcquirerIntentDoc): Promise<void> {
  if (intent.local_method !== "sepa_debit") {
    await ctx.intents.resolveAlone(intent, "abandoned");
    return;
  }
  if (!intent.payer_account) throw new Error(`local payment intent ${intent.id} has no sealed payer account`);
  // cast: the sealed text is JSON.stringify(payerAccountOf(…)) (openLocalStart), and GCM's tag proves it unaltered.
  const account = JSON.parse(ctx.sealing.open(intent.payer_account, sealContext(intent.charge_id))) as PayerAccount;
  const processor = ctx.processorFor(intent.livemode);
  const started = await processor.startLocalPayment(
    localStart(intent.charge_id, { type: "sepa_debit", ...account }, intent, new Date(intent.created_at)),
  );
  // A SEPA debit's next_action names the payment by its reference at the acquirer (only a voucher's differs).
  await processor.reverse({ idempotencyKey: acquirerKey(intent.charge_id, "reverse"), reference: started.reference });
  await ctx.intents.resolveAlone(intent, "reversed");
}

export function chargeCreation(ctx: ChargeContext) {
  const { store, clock } = ctx;
  const { authenticate, challengedByAcquirer } = threeDSecure(ctx);

  /** Every charge is evaluated before the processor is called (spec: POST /v1/charges). */
  async function assess(charge: ChargeDoc, card?: { pan: string; fingerprint: string }) {
    const result = await ctx.fraud.assessCharge({
      livemode: charge.livemode,
      chargeId: charge.id,
      merchantId: charge.merchant_id,
      amount: charge.amount,
      currency: charge.currency,
      card,
      customer: charge.customer,
    });
    charge.fraud_evaluation_id = result.evaluationId;
    return result;
  }

  /**
   * A card: screened, then authenticated when 3-D Secure applies (three-d-secure.ts: a challenge leaves
   * it requires_action), then authorized (held for review, or captured in the same call unless
   * `capture: false`), or declined. The authorization is an intent first (intents.ts): written before
   * the call, sent under its idempotency key, resolved in the charge's transaction (record). `resumed`:
   * the intent a retry of the same request resumes, whose call is sent again exactly as it was (its
   * 3-D Secure already passed: the first attempt authenticated before it wrote the intent).
   */
  async function payByCard(
    caller: Caller,
    charge: ChargeDoc,
    input: ChargeCreate,
    token: string,
    at: Date,
    options: ChargeCreateOptions,
    resumed: AcquirerIntentDoc | null,
  ): Promise<{ assessment: ChargeAssessment; intent: AcquirerIntentDoc | null }> {
    const capture = input.capture ?? true;
    const vaulted = await ctx.tokens.pan(charge.livemode, token, "payment_method.token");
    const { token: card, pan } = vaulted;
    charge.payment_method = {
      type: "card",
      token: card.id,
      brand: card.brand,
      last4: card.last4,
      fingerprint: card.fingerprint,
    };
    const assessment = await assess(charge, { pan, fingerprint: card.fingerprint });
    if (assessment.decision === "block") {
      // A resumed intent left open is reversed by the recovery job: the charge is blocked now.
      block(charge, assessment);
      return { assessment, intent: null };
    }
    const authentication = authenticationInput(pan, input, assessment, options);
    if (!resumed && !(await authenticate(charge, authentication, at))) return { assessment, intent: null };
    const intent = await ctx.intents.open({
      livemode: charge.livemode,
      chargeId: charge.id,
      objectId: charge.id,
      operation: "authorize",
      finish: "create",
      amount: charge.amount,
      currency: charge.currency,
      reference: null,
      requestKey: caller.outcome?.key,
      token: card.id,
      // A held charge is authorized only; a resumed intent is sent again exactly as it was first sent.
      capture: resumed?.capture ?? (capture && assessment.decision !== "review"),
      returnUrl: ctx.challengeLinks.returnUrl(charge.id),
    });
    // Left in doubt, answered 503 `acquirer_in_doubt` (in-doubt.ts): the intent stays open for a retry with
    // the same Idempotency-Key (resumable) or the recovery job (reverseUnrecorded).
    const auth = await answeredInDoubt("authorization", charge.id, () =>
      ctx
        .processorFor(charge.livemode)
        .authorizeCard(
          authorizationOf(
            intent,
            { pan, expMonth: card.exp_month, expYear: card.exp_year },
            at,
            ctx.challengeLinks.returnUrl(charge.id),
          ),
        ),
    );
    if (!auth.approved && "requestRefused" in auth && intent.attempts > 1) throw refusedRepeat(intent);
    if (!auth.approved && "challenge" in auth) {
      // The acquirer runs 3-D Secure itself and the issuer asks for a challenge (Adyen): the charge waits
      // requires_action; the intent resolves with it (its call's outcome, the challenge, is recorded), and
      // the payer's return sends the completion under its own intent (three-d-secure.ts returnFromIssuer).
      challengedByAcquirer(charge, authentication, auth.challenge, at);
      return { assessment, intent };
    }
    if (!auth.approved && "undecided" in auth) {
      // Taken, not decided (Adyen's Received/Pending): stored `pending` with the payment's reference, the
      // intent resolved with it; the acquirer's AUTHORISATION decides it as the intent's `capture` asked
      // (acquirer-outcomes.ts authorization), so nothing is left in doubt for the recovery job.
      charge.status = CHARGE_MACHINE.start("pending");
      charge.processor_ref = auth.undecided.reference;
      // A `review` holds it once authorized, as it holds a card authorized at once (below): kept until then.
      if (assessment.decision === "review") {
        charge.review_on_authorization = { window_seconds: assessment.reviewWindowSeconds, capture };
      }
      return { assessment, intent };
    }
    if (!auth.approved) {
      charge.status = CHARGE_MACHINE.start("declined");
      charge.failure_code = auth.failureCode;
      charge.failure_message = auth.failureMessage;
      return { assessment, intent };
    }
    charge.processor_ref = auth.reference;
    if (auth.captured) {
      charge.status = CHARGE_MACHINE.start("captured");
      charge.amount_captured = charge.amount;
    } else {
      charge.status = CHARGE_MACHINE.start("authorized");
    }
    if (assessment.decision === "review" && !auth.captured) {
      // Held: not captured, whatever `capture` says, until the review is approved (spec: ChargeReview).
      const held = openReview(charge.updated_at, at, assessment.reviewWindowSeconds, capture);
      charge.review = held.review;
      charge.review_expires_at = held.review_expires_at;
    }
    return { assessment, intent };
  }

  /**
   * A local method: screened on the customer's facts, then started (`pending` with its next_action). A
   * `review` cannot hold a payment the payer has not made yet, so it is recorded on the evaluation only
   * (spec: ChargeReview). The start is an intent first, like a card's authorization (intents.ts): a SEPA
   * Direct Debit the acquirer started is collected with no further act of the payer, so a start in doubt
   * must never be sent anew under another key. `resumed`: the intent a retry of the same request resumes.
   */
  async function payLocally(
    caller: Caller,
    charge: ChargeDoc,
    method: LocalMethodInput,
    at: Date,
    resumed: AcquirerIntentDoc | null,
  ): Promise<{ assessment: ChargeAssessment; intent: AcquirerIntentDoc | null }> {
    const assessment = await assess(charge);
    if (assessment.decision === "block") {
      // A resumed intent left open is settled by the recovery job (abandonUnrecorded): the charge is blocked now.
      block(charge, assessment);
      return { assessment, intent: null };
    }
    const intent = await openLocalStart(ctx, caller, charge, method, resumed);
    let action: NextAction;
    try {
      // Left in doubt, answered 503 `acquirer_in_doubt` (in-doubt.ts): the intent stays open for a retry
      // with the same Idempotency-Key (resumable) or the recovery job (abandonUnrecorded).
      action = await answeredInDoubt("local_payment", charge.id, () =>
        ctx.processorFor(charge.livemode).startLocalPayment(localStart(charge.id, payerOf(method), intent, at)),
      );
    } catch (err) {
      // Refused as a request at its first call (the acquirer lacks the method, or refused its fields): nothing
      // was started, so nothing is left to repeat. A refusal of a repeat tells nothing: left in doubt.
      if (err instanceof DomainError && err.code !== "acquirer_in_doubt" && intent.attempts === 1) {
        await ctx.intents.discard(intent);
      }
      throw err;
    }
    charge.next_action = action;
    charge.expires_at = action.expires_at;
    if (method.type === "sepa_debit") charge.payment_method.last4 = method.iban.replace(/\s+/g, "").slice(-4);
    return { assessment, intent };
  }

  /**
   * The charge, its evaluation and its events, in one transaction (and its money, when captured), with
   * its authorization's intent resolved.
   */
  function record(
    caller: Caller,
    charge: ChargeDoc,
    assessment: ChargeAssessment,
    intent: AcquirerIntentDoc | null,
    options: ChargeCreateOptions,
  ) {
    return commit(store, caller, async (tx) => {
      if (intent) await ctx.intents.resolve(tx, intent, "committed", charge);
      await tx.insert("charges", charge);
      ctx.reached(tx, charge);
      // The evaluation and its `fraud.evaluated` event commit with the charge, before its own events.
      await assessment.record(tx, charge);
      const fields = eventFields(charge);
      if (charge.status === "requires_action") {
        await recordEvent(tx, clock, charge.livemode, "payment.requires_action", fields);
      }
      if (charge.status === "authorized" || charge.status === "captured") {
        await recordEvent(tx, clock, charge.livemode, "payment.authorized", { ...fields, status: "authorized" });
      }
      if (charge.status === "captured") await ctx.applyCapture(tx, charge, charge.amount_captured);
      if (charge.status === "declined" || charge.status === "blocked") {
        await recordEvent(tx, clock, charge.livemode, "payment.failed", { ...fields, ...failureOf(charge) });
      }
      await options.inTransaction?.(tx, charge);
      return charge;
    });
  }

  return {
    reverseUnrecorded: (intent: AcquirerIntentDoc) => reverseUnrecorded(ctx, intent),
    abandonUnrecorded: (intent: AcquirerIntentDoc) => abandonUnrecorded(ctx, intent),

    async create(caller: Caller, input: ChargeCreate, options: ChargeCreateOptions = {}): Promise<ChargeDoc> {
      ctx.processorFor(caller.livemode); // refused before anything is stored when the environment has none
      assertMoney(input.amount, input.currency, ctx.money);
      assertIp(input.customer?.ip, "customer.ip");
      const method = input.payment_method;
      if (method.type !== "card") {
        const required = LOCAL_METHODS[method.type].currency;
        if (input.currency !== required) throw invalid("currency", `${method.type} payments must be in ${required}`);
      }
      const merchant = await ctx.merchants.loadActive(
        caller.livemode,
        input.merchant_id,
        "merchant_id",
        "take payments",
      );
      const at = clock.now(caller.livemode);
      const charge = newCharge(clock, caller, input, merchant.id, options, await ctx.fees(merchant.id));
      // A retry of a request that crashed after its authorization was sent (same Idempotency-Key, hence
      // the same request) resumes that charge: same id, same call to the acquirer, no second authorization.
      const key = caller.outcome?.key;
      const resumed = key ? await ctx.intents.resumable(caller.livemode, key) : null;
      if (resumed) charge.id = resumed.charge_id;
      const { assessment, intent } =
        method.type === "card"
          ? await payByCard(caller, charge, input, method.token, at, options, resumed)
          : await payLocally(caller, charge, method, at, resumed);
      if (charge.status === "captured") await ctx.prepareCapture(charge);
      return record(caller, charge, assessment, intent, options);
    },
  };
}
