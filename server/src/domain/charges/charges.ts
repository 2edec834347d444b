import type { Page, PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import { DomainError } from "../kernel/errors.ts";
import type { QueryParams } from "../kernel/operations.ts";
import { acquirerOutcomes, type ChargeAcquirerOutcomes } from "./acquirer-outcomes.ts";
import { captureAndVoid } from "./capture.ts";
import { type ChargesDeps, chargeContext } from "./context.ts";
import type { ChargeCreate, ChargeCreateOptions } from "./create.ts";
import { chargeCreation } from "./create.ts";
import { claimForDispute, notDisputable, releaseChargeback } from "./disputed.ts";
import { answeredInDoubt } from "./in-doubt.ts";
import { localPayments } from "./local-payments.ts";
import type { AcquirerIntentDoc, ChargeDoc, RefundDoc } from "./records.ts";
import type { RefundCreate } from "./refunds.ts";
import { refunds } from "./refunds.ts";
import { reviews } from "./reviews.ts";
import type { AuthenticationInput } from "./three-d-secure.ts";
import { threeDSecure } from "./three-d-secure.ts";

// Charges, refunds and their money movements (spec/resources/charges.tsp; docs/charges.md 'Charges'): the use
// cases, one file per operation group, over one shared context (context.ts). The state machine is
// state.ts.

export function createCharges(deps: ChargesDeps): Charges {
  const ctx = chargeContext(deps);
  const creation = chargeCreation(ctx);
  const captures = captureAndVoid(ctx);
  const refunding = refunds(ctx);
  const reviewing = reviews(ctx);
  const tds = threeDSecure(ctx);

  /**
   * Resolves one intent left in doubt (intents.ts recoverDue): its call is sent again under its key,
   * and its outcome committed as its own request would have (the capture family, refunds), or, for an
   * authorization whose charge was never stored, reversed.
   */
  async function finish(intent: AcquirerIntentDoc): Promise<void> {
    // A local payment's start whose charge was never stored: a direct debit reversed, any other abandoned.
    if (intent.operation === "start_local") return creation.abandonUnrecorded(intent);
    // An authorization whose outcome never committed, at creation or after a 3-D Secure challenge.
    if (intent.finish === "create" || intent.finish === "authenticate") return creation.reverseUnrecorded(intent);
    if (intent.finish === "refund") return refunding.sendRefund(intent);
    // The payer's return from an acquirer-run 3-D Secure challenge: completed (or reversed) at the acquirer.
    if (intent.finish === "authentication_return") return tds.finishAuthenticationReturn(intent);
    const charge = await ctx.load(intent.livemode, intent.charge_id);
    try {
      if (intent.finish === "capture") await captures.finishCapture(intent, charge, null);
      else if (intent.finish === "void") await captures.finishVoid(intent, charge, null);
      else if (intent.finish === "approve_review") await reviewing.finishApproval(intent, charge, null);
      else await reviewing.finishVoidHeld(intent, charge, null);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      // The charge moved on while the call was in doubt (another path captured or released it): the
      // acquirer and the ledger may now disagree, which only a person can settle.
      deps.log.error(
        { err, intent: intent.id, charge: charge.id, status: charge.status },
        "a call to the acquirer left in doubt no longer fits its charge; reconcile it with the acquirer",
      );
      await ctx.intents.resolveAlone(intent, "conflict");
    }
  }

  return {
    load: ctx.load,
    get: (caller: Caller, id: string) => ctx.load(caller.livemode, id),
    list: (
      caller: Caller,
      filter: Pick<QueryParams<"listCharges">, "merchant_id" | "status" | "payment_link_id">,
      page: Page,
    ): Promise<PageResult<ChargeDoc>> =>
      deps.store.list(
        "charges",
        {
          livemode: caller.livemode,
          ...(filter.merchant_id ? { merchant_id: filter.merchant_id } : {}),
          ...(filter.status ? { status: filter.status } : {}),
          ...(filter.payment_link_id ? { payment_link_id: filter.payment_link_id } : {}),
        },
        page,
      ),
    create: creation.create,
    // A capture or void (a review's too) whose call the acquirer left unanswered is answered 503
    // `acquirer_in_doubt` (in-doubt.ts), not a 500: every call these send is under its intent, left open
    // for a retry with the same Idempotency-Key or the recovery job to complete (finish, above).
    capture: (caller, id, amount) => answeredInDoubt("capture", id, () => captures.capture(caller, id, amount)),
    void: (caller, id) => answeredInDoubt("void", id, () => captures.void(caller, id)),
    refund: refunding.refund,
    listRefunds: refunding.listRefunds,
    approveReview: (caller, id) => answeredInDoubt("approval", id, () => reviewing.approveReview(caller, id)),
    rejectReview: (caller, id) => answeredInDoubt("rejection", id, () => reviewing.rejectReview(caller, id)),
    expireReviewsDue: reviewing.expireReviewsDue,
    nextReviewExpiry: reviewing.nextReviewExpiry,
    ...tds,
    ...localPayments(ctx),
    /** The recovery job for one environment: resolves every intent whose lock has run out (intents.ts). */
    recoverIntentsDue: (livemode: boolean) => ctx.intents.recoverDue(livemode, finish, deps.log),
    /** What the acquirer reports after the fact (its notifications: domain/acquirer-notifications). */
    acquirerOutcomes: acquirerOutcomes(ctx),
    /** Intents still in doubt (tests; an operator's check after an incident). */
    unresolvedIntents: (livemode: boolean) => ctx.intents.unresolved(livemode),
    /** A charge's side of a dispute: the disputes area's DisputedCharges port (disputed.ts). */
    disputed: { load: ctx.load, find: ctx.find, notDisputable, claim: claimForDispute, releaseChargeback },
  };
}

/** The charges area's service (spec/resources/charges.tsp): charges, refunds, reviews, 3-D Secure, local payments, recovery. */
export interface Charges {
  /** The recovery job for one environment: resolves every intent whose lock has run out (intents.ts). */
  recoverIntentsDue: (livemode: boolean) => Promise<number>;
  /** Intents still in doubt (tests; an operator's check after an incident). */
  unresolvedIntents: (livemode: boolean) => Promise<AcquirerIntentDoc[]>;
  /** What the acquirer reports after the fact (its notifications: domain/acquirer-notifications). */
  acquirerOutcomes: ChargeAcquirerOutcomes;
  /** A charge's side of a dispute: the disputes area's DisputedCharges port (disputed.ts). */
  disputed: {
    load: (livemode: boolean, id: string, param?: string) => Promise<ChargeDoc>;
    find: (livemode: boolean, id: string) => Promise<ChargeDoc | null>;
    notDisputable: typeof notDisputable;
    claim: typeof claimForDispute;
    releaseChargeback: typeof releaseChargeback;
  };
  complete(caller: Caller, id: string): Promise<ChargeDoc>;
  expire(caller: Caller, id: string): Promise<ChargeDoc>;
  expireDue(livemode: boolean, limit?: number): Promise<number>;
  nextExpiry(livemode: boolean, after: Date): Promise<string | null>;
  authenticate: (charge: ChargeDoc, input: AuthenticationInput, at: Date) => Promise<boolean>;
  answerChallenge(caller: Caller, id: string, outcome: "complete" | "fail"): Promise<ChargeDoc>;
  challengeOf(id: string, token: string): Promise<ChargeDoc>;
  answerFromPage: (charge: ChargeDoc, passed: boolean) => Promise<ChargeDoc>;
  /** The payer's return from the acquirer's issuer page (three-d-secure.ts returnFromIssuer). */
  returnFromIssuer(id: string, token: string, redirectResult: string): Promise<ChargeDoc>;
  load: (livemode: boolean, id: string, param?: string) => Promise<ChargeDoc>;
  get: (caller: Caller, id: string) => Promise<ChargeDoc>;
  list: (
    caller: Caller,
    filter: Pick<QueryParams<"listCharges">, "merchant_id" | "status" | "payment_link_id">,
    page: Page,
  ) => Promise<PageResult<ChargeDoc>>;
  create: (caller: Caller, input: ChargeCreate, options?: ChargeCreateOptions) => Promise<ChargeDoc>;
  capture: (caller: Caller, id: string, amount?: number) => Promise<ChargeDoc>;
  void: (caller: Caller, id: string) => Promise<ChargeDoc>;
  refund: (caller: Caller, id: string, input: RefundCreate) => Promise<RefundDoc>;
  listRefunds: (caller: Caller, id: string, page: Page) => Promise<PageResult<RefundDoc>>;
  approveReview: (caller: Caller, id: string) => Promise<ChargeDoc>;
  rejectReview: (caller: Caller, id: string) => Promise<ChargeDoc>;
  expireReviewsDue: (livemode: boolean, limit?: number) => Promise<number>;
  nextReviewExpiry: (livemode: boolean, after: Date) => Promise<string | null>;
}
