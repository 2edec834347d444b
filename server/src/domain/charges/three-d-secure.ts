import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { sandboxOnly } from "../kernel/environment.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { iso } from "../kernel/time.ts";
import type { ChargeContext } from "./context.ts";
import {
  type AcquirerChallenge,
  type AuthenticationCompleted,
  acquirerKey,
  type ThreeDSecureOutcome,
  type ThreeDSecureRequest,
} from "./processor.ts";
import type { AcquirerIntentDoc, ChargeDoc, ChargeReviewDoc, ThreeDSecureDoc } from "./records.ts";
import { CHARGE_MACHINE, eventFields, REVIEW_MACHINE, refusal } from "./state.ts";

// 3-D Secure on card charges (ChargeThreeDSecure, RequestThreeDSecure and sandboxAnswerThreeDSecure in
// spec/resources/three-d-secure.tsp; docs/three-d-secure.md). Before a card is authorized the issuer is
// asked whether the payer must authenticate (Processor.authenticateCard). A challenge leaves the charge
// `requires_action` with a `redirect_to_url` next_action (the issuer's page); the payer's answer
// authorizes it (and captures it, unless `capture: false`) or declines it (`authentication_failed`);
// no answer before `expires_at` expires it (the expiry job, local-payments.ts). No money moves until it
// is authorized and captured, as for any card.

/** A result that lets the charge go on to authorization; `failed` and `processing_error` decline it. */
const PASSES = new Set(["authenticated", "attempted", "not_supported", "exempted"]);

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

const shown = (outcome: ThreeDSecureOutcome) => ({
  result: outcome.result,
  version: outcome.version,
  liability_shift: outcome.liabilityShift,
  eci: outcome.eci,
});

const FAILED_MESSAGE: Record<string, string> = {
  failed: "The payer failed the issuer's 3-D Secure challenge.",
  processing_error: "The issuer could not authenticate the payer (3-D Secure error).",
};

/**
 * The sandbox issuer's challenge page link (/3ds/{tx_id}?t=…): the token is an HMAC of the charge id
 * under a key derived from the vault's fingerprint key, so only the URL the charge's next_action gave
 * opens the page (and answers it). Stateless: every instance with the same vault keys accepts it.
 */
export function createChallengeLinks(fingerprintKey: Buffer, baseUrl: () => string): ChallengeLinks {
  const key = Buffer.from(hkdfSync("sha256", fingerprintKey, Buffer.alloc(0), "payments/3ds-challenge/v1", 32));
  const token = (chargeId: string) => createHmac("sha256", key).update(chargeId, "utf8").digest("base64url");
  return {
    url: (chargeId: string) => `${baseUrl()}/3ds/${chargeId}?t=${token(chargeId)}`,
    returnUrl: (chargeId: string) => `${baseUrl()}/3ds/${chargeId}/return?t=${token(chargeId)}`,
    /** Whether `given` is the token of `chargeId`'s challenge link. */
    valid(chargeId: string, given: string): boolean {
      const expected = Buffer.from(token(chargeId), "utf8");
      const actual = Buffer.from(given, "utf8");
      return expected.length === actual.length && timingSafeEqual(expected, actual);
    },
  };
}

/** The sandbox issuer's 3-D Secure challenge page links. */
export interface ChallengeLinks {
  url: (chargeId: string) => string;
  /**
   * Where an acquirer that runs the challenge itself (Adyen) sends the payer back from the issuer's page
   * (CardAuthorizationRequest.returnUrl): same token, so only the address we gave opens it.
   */
  returnUrl: (chargeId: string) => string;
  /** Whether `given` is the token of `chargeId`'s challenge link. */
  valid(chargeId: string, given: string): boolean;
}

/** What a challenged charge keeps for its completion (ThreeDSecureDoc's never-shown fields). */
const keptOf = (input: AuthenticationInput) => ({
  capture: input.capture,
  return_url: input.returnUrl,
  review_window_seconds: input.reviewWindowSeconds,
  erase_token: input.eraseToken,
});

/**
 * Whether the authorization is sent to capture in the same call: as the charge asked, unless a review
 * holds it (the same rule as createCharge's, so a challenge's completion matches what was first sent).
 */
const capturesWithAuthorization = (tds: ThreeDSecureDoc) => tds.review_window_seconds === null && tds.capture;

/** The charge waiting for the payer's challenge: requires_action, the issuer's page as its next_action. */
function waitForChallenge(
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

export function threeDSecure(ctx: ChargeContext) {
  const { store, clock } = ctx;
  const expiryFrom = (at: Date) => iso(new Date(at.getTime() + ctx.threeDSecureExpirySeconds * 1000));

  /**
   * Asks the issuer, before a new card charge is authorized. Returns true when the charge goes on to
   * authorization (no 3-D Secure, or a result that passes); otherwise the charge is left in its
   * outcome: `requires_action` (a challenge) or `declined` (`authentication_failed`).
   */
  async function authenticate(charge: ChargeDoc, input: AuthenticationInput, at: Date): Promise<boolean> {
    const lookup = await ctx.processorFor(charge.livemode).authenticateCard({
      chargeId: charge.id,
      pan: input.pan,
      brand: charge.payment_method.brand,
      amount: charge.amount,
      currency: charge.currency,
      livemode: charge.livemode,
      request: input.request,
    });
    if (lookup.kind === "not_needed") return true;
    const kept = keptOf(input);
    if (lookup.kind === "challenge") {
      waitForChallenge(
        charge,
        expiryFrom(at),
        { reference: lookup.reference, url: ctx.challengeLinks.url(charge.id), returnUrl: input.returnUrl },
        {
          result: null,
          version: lookup.version,
          liability_shift: false,
          eci: null,
          reference: lookup.reference,
          ...kept,
        },
      );
      return false;
    }
    charge.three_d_secure = { ...shown(lookup.outcome), reference: null, ...kept };
    if (PASSES.has(lookup.outcome.result)) return true;
    charge.status = CHARGE_MACHINE.start("declined");
    charge.failure_code = "authentication_failed";
    charge.failure_message = FAILED_MESSAGE[lookup.outcome.result] ?? "3-D Secure failed.";
    return false;
  }

  /**
   * The payer's answer to the challenge (the issuer's page, or the sandbox helper): the issuer's
   * result, then, if it passes, the authorization (and capture) the charge was waiting for, in one
   * transaction conditional on the charge still being `requires_action` (of two answers, or an answer
   * and the expiry, one wins; the other gets a 409).
   */
  async function answer(caller: Caller | null, charge: ChargeDoc, passed: boolean): Promise<ChargeDoc> {
    const answered = await settle(caller, charge, passed);
    await ctx.eraseSingleUseToken(answered);
    return answered;
  }

  /**
   * The acquirer asked for the challenge inside the authorization (Adyen's RedirectShopper: create.ts
   * payByCard): the charge waits `requires_action` as for the simulator's challenge, its next_action the
   * issuer's page, until the payer's return to our challenge step (returnFromIssuer) or its expiry.
   */
  function challengedByAcquirer(charge: ChargeDoc, input: AuthenticationInput, challenge: AcquirerChallenge, at: Date) {
    const reference = challenge.reference ?? charge.id;
    waitForChallenge(
      charge,
      expiryFrom(at),
      { reference, url: challenge.url, returnUrl: input.returnUrl },
      {
        result: null,
        version: challenge.version,
        liability_shift: false,
        eci: null,
        reference,
        ...keptOf(input),
        acquirer_challenge: true,
      },
    );
  }

  async function settle(caller: Caller | null, charge: ChargeDoc, passed: boolean): Promise<ChargeDoc> {
    const pending = charge.three_d_secure;
    if (charge.status !== "requires_action" || !pending?.reference) throw refusal(charge, "authenticate");
    if (pending.acquirer_challenge) {
      throw new DomainError(
        "invalid_state_transition",
        "This charge's 3-D Secure challenge is the acquirer's: the payer answers it on the issuer's page (next_action.url), and their return completes the charge.",
      );
    }
    const processor = ctx.processorFor(charge.livemode);
    const outcome = await processor.completeChallenge({
      reference: pending.reference,
      brand: charge.payment_method.brand,
      passed,
    });
    const tds: ThreeDSecureDoc = { ...pending, ...shown(outcome) };
    const done = { three_d_secure: tds, next_action: null, expires_at: null };
    if (!PASSES.has(outcome.result)) {
      return decline(caller, charge, {
        ...done,
        failure_code: "authentication_failed",
        failure_message: FAILED_MESSAGE[outcome.result] ?? "3-D Secure failed.",
      });
    }
    const at = clock.now(charge.livemode);
    const { token: card, pan } = await ctx.tokens.pan(charge.livemode, charge.payment_method.token ?? "", "id");
    const held =
      pending.review_window_seconds === null
        ? null
        : openReview(iso(at), at, pending.review_window_seconds, pending.capture);
    // The authorization the charge waited for, as an intent first (intents.ts): written before the call,
    // sent under its key, resolved in the transaction below. A crash in between leaves it open, and the
    // recovery job reverses it at the acquirer (finish `authenticate`): the charge stays requires_action
    // and expires, so no money moves that the ledger does not know.
    const intent = await ctx.intents.open({
      livemode: charge.livemode,
      chargeId: charge.id,
      objectId: charge.id,
      operation: "authorize",
      finish: "authenticate",
      amount: charge.amount,
      currency: charge.currency,
      reference: null,
      token: card.id,
      capture: held === null && pending.capture,
    });
    const auth = await processor.authorizeCard({
      idempotencyKey: intent.id,
      chargeId: charge.id,
      pan,
      expMonth: card.exp_month,
      expYear: card.exp_year,
      amount: charge.amount,
      currency: charge.currency,
      capture: intent.capture === true,
      livemode: charge.livemode,
      now: at,
      returnUrl: ctx.challengeLinks.returnUrl(charge.id),
    });
    if (!auth.approved) {
      // authenticateCard ran the challenge already: an acquirer that runs its own (Adyen) says not_needed.
      if ("challenge" in auth) throw new Error(`the acquirer asked charge ${charge.id} for a second challenge`);
      return decline(
        caller,
        charge,
        { ...done, failure_code: auth.failureCode, failure_message: auth.failureMessage },
        intent,
      );
    }
    return authorized(caller, charge, done, held, intent, auth);
  }

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
   * The payer is back from the acquirer's issuer page (GET or POST /3ds/{tx_id}/return?t=…, with Adyen's
   * `redirectResult`): the held authorization is finished at the acquirer (/payments/details) under an
   * intent written first (operation `authenticate`, keyed `tx_…:authenticate`, the redirectResult kept in
   * it), and its outcome committed as the simulator's challenge commits: authorized, or captured when the
   * charge asked, or declined. A crash between the call and the commit leaves the intent open: the
   * recovery job sends the same call again (finishAuthenticationReturn). A charge no longer waiting
   * (answered already, a reload, expired) is returned as it stands and nothing is sent.
   */
  async function returnFromIssuer(id: string, token: string, redirectResult: string): Promise<ChargeDoc> {
    const charge = await challengeOf(id, token);
    const pending = charge.three_d_secure;
    if (charge.status !== "requires_action" || !pending?.acquirer_challenge) return charge;
    if (redirectResult === "") {
      throw invalid("redirectResult", "The issuer's page sent the payer back without its result (redirectResult).");
    }
    // A second return while the first is under way resumes its intent: the call is sent again exactly as
    // it was first (the first redirectResult, kept in the intent), so Adyen answers it once.
    const intent = await ctx.intents.open({
      livemode: charge.livemode,
      chargeId: charge.id,
      objectId: charge.id,
      operation: "authenticate",
      finish: "authentication_return",
      amount: charge.amount,
      currency: charge.currency,
      reference: pending.reference,
      token: charge.payment_method.token ?? null,
      capture: capturesWithAuthorization(pending),
      redirectResult,
    });
    const answered = await commitAuthentication(charge, pending, intent, await completeAuthentication(intent));
    await ctx.eraseSingleUseToken(answered);
    return answered;
  }

  /** Sends (or sends again, under the same key) the intent's completion of an acquirer-run challenge. */
  function completeAuthentication(intent: AcquirerIntentDoc): Promise<AuthenticationCompleted> {
    const processor = ctx.processorFor(intent.livemode);
    if (!processor.completeAuthentication || intent.redirect_result === undefined) {
      throw new Error(`intent ${intent.id}: this environment's acquirer cannot complete a 3-D Secure challenge`);
    }
    return processor.completeAuthentication({
      idempotencyKey: intent.id,
      chargeId: intent.charge_id,
      redirectResult: intent.redirect_result,
      capture: intent.capture === true,
    });
  }

  /** The acquirer's decision after its challenge, committed with the intent resolved; three_d_secure filled. */
  function commitAuthentication(
    charge: ChargeDoc,
    pending: ThreeDSecureDoc,
    intent: AcquirerIntentDoc,
    completed: AuthenticationCompleted,
  ): Promise<ChargeDoc> {
    const done = {
      three_d_secure: { ...pending, ...shown(completed.threeDSecure) },
      next_action: null,
      expires_at: null,
    };
    const auth = completed.authorization;
    if (!auth.approved) {
      return decline(
        null,
        charge,
        { ...done, failure_code: auth.failureCode, failure_message: auth.failureMessage },
        intent,
      );
    }
    const at = clock.now(charge.livemode);
    const held =
      pending.review_window_seconds === null
        ? null
        : openReview(iso(at), at, pending.review_window_seconds, pending.capture);
    return authorized(null, charge, done, held, intent, auth);
  }

  /**
   * The recovery job's completion of a payer's return left in doubt (intents.ts): the same call again
   * under its key gives Adyen's first answer. A charge still waiting commits it as the request would have;
   * one that moved on meanwhile (expired while the call was in doubt) never records the authorization, so
   * it is reversed at the acquirer.
   */
  async function finishAuthenticationReturn(intent: AcquirerIntentDoc): Promise<void> {
    const charge = await ctx.load(intent.livemode, intent.charge_id);
    const completed = await completeAuthentication(intent);
    const pending = charge.three_d_secure;
    if (charge.status === "requires_action" && pending?.acquirer_challenge) {
      await ctx.eraseSingleUseToken(await commitAuthentication(charge, pending, intent, completed));
      return;
    }
    const auth = completed.authorization;
    if (auth.approved) {
      await ctx
        .processorFor(intent.livemode)
        .reverse({ idempotencyKey: acquirerKey(charge.id, "reverse"), reference: auth.reference });
    }
    await ctx.intents.resolveAlone(intent, auth.approved ? "reversed" : "committed");
  }

  /** The issuer's challenge link's charge: 404 unless the link's token is that charge's. */
  async function challengeOf(id: string, token: string): Promise<ChargeDoc> {
    const charge = await store.get("charges", id);
    if (!charge || !ctx.challengeLinks.valid(id, token)) {
      throw new DomainError("not_found", "This 3-D Secure challenge does not exist.");
    }
    return charge;
  }

  return {
    authenticate,
    challengedByAcquirer,
    returnFromIssuer,
    finishAuthenticationReturn,

    /** sandboxAnswerThreeDSecure: the payer completes or fails the challenge (sandbox only). */
    async answerChallenge(caller: Caller, id: string, outcome: "complete" | "fail"): Promise<ChargeDoc> {
      sandboxOnly(caller.livemode, "charge", id);
      return answer(caller, await ctx.load(caller.livemode, id), outcome === "complete");
    },

    /**
     * The issuer's challenge page (http/three-d-secure-page.ts): the charge its link names, 404 unless
     * the link's token is that charge's. No key: the link is the payer's authority.
     */
    challengeOf,

    /** The page's Complete / Fail buttons (after challengeOf has checked the link). */
    answerFromPage: (charge: ChargeDoc, passed: boolean) => answer(null, charge, passed),
  };
}
