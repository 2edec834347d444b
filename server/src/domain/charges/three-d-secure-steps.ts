import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { DomainError } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { iso } from "../kernel/time.ts";
import type { ChargeContext } from "./context.ts";
import type { ThreeDSecureOutcome, ThreeDSecureRequest } from "./processor.ts";
import type { AcquirerIntentDoc, ChargeDoc, ChargeReviewDoc, ThreeDSecureDoc } from "./records.ts";
import { CHARGE_MACHINE, eventFields, REVIEW_MACHINE } from "./state.ts";

// The steps of a 3-D Secure challenge shared by the simulator's challenge (three-d-secure.ts) and an
// acquirer-run one (acquirer-challenge.ts): what the waiting charge keeps, how it waits, and what the API
// shows of the issuer's result.

/** What a card's authentication needs besides the charge (createCharge's input, the evaluation). */
export interface AuthenticationInput {
  pan: string;
  request: ThreeDSecureRequest;
  capture: boolean;
  returnUrl: string | null;
  /** The evaluation decided `review`: once authorized, the charge is held (its window, seconds). */
  reviewWindowSeconds: number | null;
  /** The token was made for this charge alone: erase it once the challenge ends. */
  eraseToken: boolean;
}

/** An open fraud review for a charge authorized at `at` (ChargeReview); shared by creation and 3-D Secure. */
export function openReview(openedAt: string, at: Date, windowSeconds: number, capture: boolean) {
  const expiresAt = iso(new Date(at.getTime() + windowSeconds * 1000));
  const review: ChargeReviewDoc = {
    status: REVIEW_MACHINE.start("open"),
    opened_at: openedAt,
    expires_at: expiresAt,
    closed_at: null,
    capture,
  };
  return { review, review_expires_at: expiresAt };
}

/** What the API shows of the issuer's result (ChargeThreeDSecure), from the acquirer's outcome. */
export const shown = (outcome: ThreeDSecureOutcome) => ({
  result: outcome.result,
  version: outcome.version,
  liability_shift: outcome.liabilityShift,
  eci: outcome.eci,
});

/** What a challenged charge keeps for its completion (ThreeDSecureDoc's never-shown fields). */
export const keptOf = (input: AuthenticationInput) => ({
  capture: input.capture,
  return_url: input.returnUrl,
  review_window_seconds: input.reviewWindowSeconds,
  erase_token: input.eraseToken,
});

/**
 * Whether the authorization is sent to capture in the same call: as the charge asked, unless a review
 * holds it (the same rule as createCharge's, so a challenge's completion matches what was first sent).
 */
export const capturesWithAuthorization = (tds: ThreeDSecureDoc) => tds.review_window_seconds === null && tds.capture;

/** The charge waiting for the payer's challenge: requires_action, the issuer's page as its next_action. */
export function waitForChallenge(
  charge: ChargeDoc,
  expiresAt: string,
  next: { reference: string; url: string; returnUrl: string | null },
  tds: ThreeDSecureDoc,
): void {
  charge.status = CHARGE_MACHINE.start("requires_action");
  charge.next_action = {
    type: "redirect_to_url",
    reference: next.reference,
    url: next.url,
    ...(next.returnUrl ? { return_url: next.returnUrl } : {}),
    expires_at: expiresAt,
  };
  charge.expires_at = expiresAt;
  charge.three_d_secure = tds;
}

/** What a challenge's end commits (both kinds of challenge), and the challenge link's check. */
export function challengeCommits(ctx: ChargeContext) {
  const { store, clock } = ctx;

  /** The authorization a challenge held, approved: committed with its intent resolved (and captured, when sent so). */
  async function authorized(
    caller: Caller | null,
    charge: ChargeDoc,
    done: Pick<ChargeDoc, "three_d_secure" | "next_action" | "expires_at">,
    held: ReturnType<typeof openReview> | null,
    intent: AcquirerIntentDoc,
    auth: { reference: string; captured: boolean },
  ): Promise<ChargeDoc> {
    const capture = auth.captured;
    if (capture) await ctx.prepareCapture(charge);
    return commit(store, caller, async (tx) => {
      await ctx.intents.resolve(tx, intent, "committed");
      const updated = await ctx.transition(
        tx,
        charge,
        capture ? "captured" : "authorized",
        {
          ...done,
          processor_ref: auth.reference,
          ...(capture ? { amount_captured: charge.amount } : {}),
          ...(held ?? {}),
        },
        "authenticate",
      );
      await recordEvent(tx, clock, updated.livemode, "payment.authorized", {
        ...eventFields(updated),
        status: "authorized",
      });
      if (capture) await ctx.applyCapture(tx, updated, charge.amount);
      return updated;
    });
  }

  function decline(
    caller: Caller | null,
    charge: ChargeDoc,
    set: Pick<ChargeDoc, "three_d_secure" | "next_action" | "expires_at"> & {
      failure_code: NonNullable<ChargeDoc["failure_code"]>;
      failure_message: string;
    },
    intent?: AcquirerIntentDoc,
  ): Promise<ChargeDoc> {
    return commit(store, caller, async (tx) => {
      if (intent) await ctx.intents.resolve(tx, intent, "committed");
      const declined = await ctx.transition(tx, charge, "declined", set, "authenticate");
      await recordEvent(tx, clock, declined.livemode, "payment.failed", {
        ...eventFields(declined),
        failure_code: set.failure_code,
        failure_message: set.failure_message,
      });
      return declined;
    });
  }

  /**
   * The authorization a challenge held, taken by the acquirer and not decided yet (Adyen's Received or
   * Pending from /payments/details): the charge goes `pending` with the acquirer's reference, its intent
   * resolved, as a card taken undecided at creation (create.ts payByCard). No event and no money yet: the
   * acquirer's AUTHORISATION notification decides it once (acquirer-outcomes.ts authorization), and the
   * review the evaluation asked for opens then (review_on_authorization).
   */
  function undecided(
    caller: Caller | null,
    charge: ChargeDoc,
    done: Pick<ChargeDoc, "three_d_secure" | "next_action" | "expires_at">,
    intent: AcquirerIntentDoc,
    reference: string,
  ): Promise<ChargeDoc> {
    const tds = done.three_d_secure;
    const review =
      tds && tds.review_window_seconds !== null
        ? { window_seconds: tds.review_window_seconds, capture: tds.capture }
        : null;
    return commit(store, caller, async (tx) => {
      await ctx.intents.resolve(tx, intent, "committed");
      return ctx.transition(
        tx,
        charge,
        "pending",
        { ...done, processor_ref: reference, ...(review ? { review_on_authorization: review } : {}) },
        "authenticate",
      );
    });
  }

  /** The issuer's challenge link's charge: 404 unless the link's token is that charge's. */
  async function challengeOf(id: string, token: string): Promise<ChargeDoc> {
    const charge = await store.get("charges", id);
    if (!charge || !ctx.challengeLinks.valid(id, token)) {
      throw new DomainError("not_found", "This 3-D Secure challenge does not exist.");
    }
    return charge;
  }

  return { authorized, decline, undecided, challengeOf };
}
