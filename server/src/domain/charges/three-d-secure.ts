import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { Caller } from "../kernel/caller.ts";
import { sandboxOnly } from "../kernel/environment.ts";
import { DomainError } from "../kernel/errors.ts";
import { iso } from "../kernel/time.ts";
import { acquirerChallenges } from "./acquirer-challenge.ts";
import type { ChargeContext } from "./context.ts";
import { authorizationOf } from "./intents.ts";
import type { ChargeDoc, ThreeDSecureDoc } from "./records.ts";
import { CHARGE_MACHINE, refusal } from "./state.ts";
import {
  type AuthenticationInput,
  challengeCommits,
  keptOf,
  openReview,
  shown,
  waitForChallenge,
} from "./three-d-secure-steps.ts";

export { type AuthenticationInput, openReview } from "./three-d-secure-steps.ts";

// 3-D Secure on card charges (ChargeThreeDSecure, RequestThreeDSecure and sandboxAnswerThreeDSecure in
// spec/resources/three-d-secure.tsp; docs/three-d-secure.md). Before a card is authorized the issuer is
// asked whether the payer must authenticate (Processor.authenticateCard). A challenge leaves the charge
// `requires_action` with a `redirect_to_url` next_action (the issuer's page); the payer's answer
// authorizes it (and captures it, unless `capture: false`) or declines it (`authentication_failed`);
// no answer before `expires_at` expires it (the expiry job, local-payments.ts). No money moves until it
// is authorized and captured, as for any card.

/** A result that lets the charge go on to authorization; `failed` and `processing_error` decline it. */
const PASSES = new Set(["authenticated", "attempted", "not_supported", "exempted"]);

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

export function threeDSecure(ctx: ChargeContext) {
  const { clock } = ctx;
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
      returnUrl: ctx.challengeLinks.returnUrl(charge.id),
    });
    const auth = await processor.authorizeCard(
      authorizationOf(
        intent,
        { pan, expMonth: card.exp_month, expYear: card.exp_year },
        at,
        ctx.challengeLinks.returnUrl(charge.id),
      ),
    );
    if (!auth.approved) {
      // authenticateCard ran the challenge already: an acquirer that runs its own (Adyen) says not_needed.
      if ("challenge" in auth) throw new Error(`the acquirer asked charge ${charge.id} for a second challenge`);
      // Taken, not decided (an acquirer's Received/Pending): pending until its AUTHORISATION notification,
      // as after an acquirer-run challenge (three-d-secure-steps.ts undecided).
      if ("undecided" in auth) return undecided(caller, charge, done, intent, auth.undecided.reference);
      return decline(
        caller,
        charge,
        { ...done, failure_code: auth.failureCode, failure_message: auth.failureMessage },
        intent,
      );
    }
    return authorized(caller, charge, done, held, intent, auth);
  }

  const { authorized, decline, undecided, challengeOf } = challengeCommits(ctx);

  return {
    authenticate,
    // 3-D Secure run by the acquirer itself (Adyen): acquirer-challenge.ts.
    ...acquirerChallenges(ctx),

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
