import { DomainError } from "../kernel/errors.ts";
import { AcquirerCallInDoubt } from "./processor.ts";

// A call to the acquirer that ended without an answer (AcquirerCallInDoubt: a time-out, a dropped
// connection, the acquirer's 5xx or 429) is answered 503 `acquirer_in_doubt` with Retry-After
// (http/errors.ts; spec/common/acquirer.tsp AcquirerNotConfigured; docs/api.md "When the acquirer does not
// answer"), never a 500: nobody knows yet whether the money moved, and the answer says so and what a retry
// does. Every call answered here is sent under an intent written first (intents.ts), which stays open, so
// nothing is half-written: the charge is unchanged, and the intent is completed (or, for an authorization
// whose charge was never stored, reversed) by a retry or by the recovery job, never sent twice.
//
// A refund is not answered here: it commits before its call (refunds.ts), so a refund whose call is in
// doubt exists, is answered 201 and is sent again by the recovery job under the same key.

/**
 * The calls an operation answers 503 for when they end in doubt (createCharge's authorization of a card or
 * start of a local payment, captureCharge, voidCharge, the review's approve and reject).
 */
export type CallInDoubt = "authorization" | "local_payment" | "capture" | "void" | "approval" | "rejection";

const RECOVERY_BOUND = "IDEMPOTENCY_LOCK_SECONDS and one jobs interval (JOBS_INTERVAL_SECONDS)";

/**
 * What the client is told for each call: what it was, what stands now, what a retry with the same
 * Idempotency-Key does, and what happens without one.
 */
const DETAIL: Record<CallInDoubt, (chargeId: string, why: string) => string> = {
  authorization: (id, why) =>
    `The acquirer did not answer the authorization of charge ${id} (${why}). Its outcome is being settled: send the same request again with the same Idempotency-Key after the seconds in Retry-After, and it resumes this charge (never a second authorization) and answers what the acquirer decided. Without an Idempotency-Key nothing was stored, and whatever the acquirer authorized is reversed by the recovery job within ${RECOVERY_BOUND}.`,
  local_payment: (id, why) =>
    `The acquirer did not answer the start of charge ${id}'s payment (${why}). Its outcome is being settled: send the same request again with the same Idempotency-Key after the seconds in Retry-After, and it resumes this charge (never a second payment) and answers what the payer must do. Without an Idempotency-Key nothing was stored: a direct debit the acquirer started is cancelled by the recovery job within ${RECOVERY_BOUND}, and a payment only the payer completes (a code or voucher) cannot be paid, since what they need was never shown.`,
  capture: (id, why) => completion(id, why, "capture", "captured"),
  void: (id, why) => completion(id, why, "void", "voided"),
  approval: (id, why) => completion(id, why, "capture of the approved review", "captured"),
  rejection: (id, why) => completion(id, why, "void of the rejected review", "voided"),
};

/** A capture or void (a review's too): completed, never reversed, whoever resumes it. */
function completion(id: string, why: string, call: string, after: string): string {
  return `The acquirer did not answer the ${call} of charge ${id} (${why}). The charge is unchanged (authorized) until its outcome is settled: send the same request again with the same Idempotency-Key after the seconds in Retry-After, and it completes this ${call} as it was sent (never a second one) and answers the charge ${after}. Without an Idempotency-Key the recovery job completes it within ${RECOVERY_BOUND}; the charge then reads ${after}.`;
}

/**
 * Runs `send` (a use case, or the one call, that sends `call` for charge `chargeId` under its intent) and
 * answers a call left in doubt as `acquirer_in_doubt`; any other failure passes through unchanged.
 */
export async function answeredInDoubt<T>(call: CallInDoubt, chargeId: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (!(err instanceof AcquirerCallInDoubt)) throw err;
    throw new DomainError("acquirer_in_doubt", DETAIL[call](chargeId, err.message.slice(0, 200)), { cause: err });
  }
}
