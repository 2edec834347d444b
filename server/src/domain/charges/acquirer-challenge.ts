import { invalid } from "../kernel/errors.ts";
import { iso } from "../kernel/time.ts";
import type { ChargeContext } from "./context.ts";
import { type AcquirerChallenge, type AuthenticationCompleted, acquirerKey } from "./processor.ts";
import type { AcquirerIntentDoc, ChargeDoc, ThreeDSecureDoc } from "./records.ts";
import {
  type AuthenticationInput,
  capturesWithAuthorization,
  challengeCommits,
  keptOf,
  openReview,
  shown,
  waitForChallenge,
} from "./three-d-secure-steps.ts";

// 3-D Secure run by the acquirer itself (Adyen: docs/going-live-with-adyen.md "3-D Secure"). The
// authorization answers a challenge (AuthorizationResult `challenge`): the charge waits requires_action,
// as for the simulator's challenge (three-d-secure.ts), with the issuer's page as its next_action. The
// acquirer sends the payer back to our challenge step's return (http/three-d-secure-page.ts, /3ds/{tx_id}/
// return?t=…), and the held authorization is finished at the acquirer (Processor.completeAuthentication:
// Adyen's /payments/details) under an intent written first, keyed `tx_…:authenticate`, with the payer's
// redirectResult kept in it; the outcome commits as the simulator's challenge commits. A completion the
// acquirer takes undecided (Adyen's Received/Pending) leaves the charge `pending`, decided by its
// AUTHORISATION notification (acquirer-outcomes.ts), in either order with this commit and the recovery.

export function acquirerChallenges(ctx: ChargeContext) {
  const { clock } = ctx;
  const { challengeOf, authorized, decline, undecided } = challengeCommits(ctx);
  const expiryFrom = (at: Date) => iso(new Date(at.getTime() + ctx.threeDSecureExpirySeconds * 1000));

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

  /**
   * The payer is back from the acquirer's issuer page (GET or POST /3ds/{tx_id}/return?t=…, with Adyen's
   * `redirectResult`): the held authorization is finished at the acquirer (/payments/details) under an
   * intent written first (operation `authenticate`, keyed `tx_…:authenticate`, the redirectResult kept in
   * it), and its outcome committed as the simulator's challenge commits: authorized, or captured when the
   * charge asked, or declined, or `pending` when the acquirer took it undecided (Received/Pending: its
   * AUTHORISATION notification decides it). A crash between the call and the commit leaves the intent open: the
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
    // Taken, not decided (Adyen's Received/Pending): pending until its AUTHORISATION notification.
    if (!auth.approved && "undecided" in auth) return undecided(null, charge, done, intent, auth.undecided.reference);
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
   * it is reversed at the acquirer (also one taken undecided: the reversal cancels it whatever Adyen decides).
   */
  async function finishAuthenticationReturn(intent: AcquirerIntentDoc): Promise<void> {
    const charge = await ctx.load(intent.livemode, intent.charge_id);
    const completed = await completeAuthentication(intent);
    const pending = charge.three_d_secure;
    if (charge.status === "requires_action" && pending?.acquirer_challenge) {
      await ctx.eraseSingleUseToken(await commitAuthentication(charge, pending, intent, completed));
      return;
    }
    // What stands at the acquirer: an authorization, or one taken undecided (the acquirer cancels it
    // whatever it decides, as create.ts reverseUnrecorded does).
    const auth = completed.authorization;
    const standing = auth.approved ? auth.reference : "undecided" in auth ? auth.undecided.reference : null;
    if (standing !== null) {
      await ctx
        .processorFor(intent.livemode)
        .reverse({ idempotencyKey: acquirerKey(charge.id, "reverse"), reference: standing });
    }
    await ctx.intents.resolveAlone(intent, standing !== null ? "reversed" : "committed");
  }

  return { challengedByAcquirer, returnFromIssuer, finishAuthenticationReturn };
}
