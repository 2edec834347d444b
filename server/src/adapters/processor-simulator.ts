import { createHash } from "node:crypto";
import {
  type AuthenticationLookup,
  type DisputeAfterCapture,
  type FailureCode,
  LOCAL_METHODS,
  type NextAction,
  type Processor,
  type ThreeDSecureOutcome,
  type ThreeDSecureResult,
} from "../domain/charges/processor.ts";
import { randomBase62 } from "../domain/kernel/ids.ts";
import { iso } from "../domain/kernel/time.ts";

// The shipped card processor (the Processor port, domain/charges/processor.ts): a deterministic
// simulator of an acquirer. Outcomes depend only on the card number and expiry, never on chance.

/**
 * The sandbox test cards (Stripe-compatible numbers; docs/charges.md 'Test cards (sandbox)'). Any other valid card
 * is approved. 4100000000000019 (always blocked) and 4000000000009235 (elevated risk, review) are the
 * fraud engine's (domain/fraud/sandbox.ts): a blocked charge never reaches the processor, and a held one
 * is approved here like any other card.
 */
export const TEST_CARD_OUTCOMES: Record<string, { failureCode: FailureCode; failureMessage: string }> = {
  "4000000000000002": { failureCode: "card_declined", failureMessage: "The card was declined." },
  "4000000000009995": { failureCode: "insufficient_funds", failureMessage: "The card has insufficient funds." },
  "4000000000000069": { failureCode: "expired_card", failureMessage: "The card has expired." },
  // Stripe's "3DS required, declined": the payer authenticates, then the issuer declines the charge.
  "4000008400001629": { failureCode: "card_declined", failureMessage: "The card was declined." },
};

/** How long after capture a dispute test card's dispute opens: the sandbox clock's advance reaches it. */
export const TEST_CARD_DISPUTE_AFTER_SECONDS = 3600;

/**
 * The dispute test cards (Stripe's numbers for the same behaviours; docs/disputes.md "Test cards"): the
 * charge is approved and captured like any other, and an hour later (on the sandbox clock) its
 * cardholder's bank opens a dispute. Keyed by the card's last four digits, which the authorization's
 * reference carries (`sim_dsp<last4>_…`), so the simulator stays stateless.
 */
export const TEST_CARD_DISPUTES: Record<string, { pan: string } & Omit<DisputeAfterCapture, "afterSeconds">> = {
  "0259": { pan: "4000000000000259", reason: "fraudulent", inquiry: false },
  "2685": { pan: "4000000000002685", reason: "product_not_received", inquiry: false },
  "1976": { pan: "4000000000001976", reason: "fraudulent", inquiry: true },
};

/**
 * How each 3-D Secure test card's issuer behaves (Stripe's numbers for the same behaviours;
 * docs/three-d-secure.md "Test cards"). Any other card is enrolled in no 3-D Secure programme: when
 * 3-D Secure is asked for, the issuer's attempt stands in (`attempted`); under `automatic` nothing
 * happens.
 * - `frictionless`: the issuer authenticates without the payer (a challenge only when one is asked for);
 * - `challenge`: the issuer requires a challenge, whatever was asked;
 * - `required_error`: the issuer requires 3-D Secure and cannot run it (the charge is declined);
 * - `supported_error`: 3-D Secure is not required, and fails with an error when asked for;
 * - `not_supported`: the card has no 3-D Secure; the charge goes on without it.
 */
export const THREE_D_SECURE_CARDS: Record<
  string,
  "frictionless" | "challenge" | "required_error" | "supported_error" | "not_supported"
> = {
  "4000000000003055": "frictionless",
  "4000000000003220": "challenge",
  "4000002760003184": "challenge",
  "4000008400001629": "challenge",
  "4000008400001280": "required_error",
  "4000000000003097": "supported_error",
  "378282246310005": "not_supported",
};

const VERSION = "2.2.0";

/** The ECI the issuer returns for a result (Mastercard has its own values; every other brand Visa's). */
function eci(brand: string | undefined, result: ThreeDSecureResult): string | null {
  const values =
    brand === "mastercard" ? { full: "02", attempt: "01", none: "00" } : { full: "05", attempt: "06", none: "07" };
  if (result === "authenticated") return values.full;
  if (result === "attempted") return values.attempt;
  if (result === "not_supported") return null;
  return values.none;
}

function outcome(brand: string | undefined, result: ThreeDSecureResult): ThreeDSecureOutcome {
  return {
    result,
    version: VERSION,
    liabilityShift: result === "authenticated" || result === "attempted",
    eci: eci(brand, result),
  };
}

function cardExpired(expMonth: number, expYear: number, now: Date): boolean {
  // A card is valid through the last day of its expiry month (UTC).
  return expYear < now.getUTCFullYear() || (expYear === now.getUTCFullYear() && expMonth < now.getUTCMonth() + 1);
}

/** A deterministic simulator: outcomes depend only on the card number and expiry, never on chance. */
export function createSimulatorProcessor(): Processor {
  return {
    async authorizeCard(request) {
      const outcome = TEST_CARD_OUTCOMES[request.pan];
      if (outcome) return { approved: false, ...outcome };
      if (cardExpired(request.expMonth, request.expYear, request.now)) {
        return { approved: false, failureCode: "expired_card", failureMessage: "The card has expired." };
      }
      const last4 = request.pan.slice(-4);
      const disputes = TEST_CARD_DISPUTES[last4]?.pan === request.pan;
      return { approved: true, reference: `${disputes ? `sim_dsp${last4}` : "sim_auth"}_${randomBase62(16)}` };
    },
    async authenticateCard(request): Promise<AuthenticationLookup> {
      const kind = THREE_D_SECURE_CARDS[request.pan];
      const challenge = (): AuthenticationLookup => ({
        kind: "challenge",
        reference: `3DS-${createHash("sha256").update(request.chargeId).digest("hex").slice(0, 16).toUpperCase()}`,
        version: VERSION,
      });
      switch (kind) {
        case "challenge":
          return challenge();
        case "required_error":
          return { kind: "done", outcome: outcome(request.brand, "processing_error") };
        case "frictionless":
          return request.request === "challenge"
            ? challenge()
            : { kind: "done", outcome: outcome(request.brand, "authenticated") };
        case "supported_error":
          return request.request === "automatic"
            ? { kind: "not_needed" }
            : { kind: "done", outcome: outcome(request.brand, "processing_error") };
        case "not_supported":
          return request.request === "automatic"
            ? { kind: "not_needed" }
            : { kind: "done", outcome: outcome(request.brand, "not_supported") };
        default:
          return request.request === "automatic"
            ? { kind: "not_needed" }
            : { kind: "done", outcome: outcome(request.brand, "attempted") };
      }
    },
    async completeChallenge(_reference, brand, passed) {
      return outcome(brand, passed ? "authenticated" : "failed");
    },
    async capture() {},
    async void() {},
    async refund() {},
    disputeAfterCapture(reference) {
      const match = /^sim_dsp(\d{4})_/.exec(reference);
      const card = match ? TEST_CARD_DISPUTES[match[1] as string] : undefined;
      if (!card) return null;
      return { reason: card.reason, inquiry: card.inquiry, afterSeconds: TEST_CARD_DISPUTE_AFTER_SECONDS };
    },
    async startLocalPayment(request) {
      const rule = LOCAL_METHODS[request.method];
      const digest = createHash("sha256").update(request.chargeId).digest("hex").slice(0, 16).toUpperCase();
      const action: NextAction = {
        type: rule.nextAction,
        reference: `${rule.referencePrefix}-${digest}`,
        expires_at: iso(new Date(request.now.getTime() + rule.ttlSeconds * 1000)),
      };
      if (request.method === "pix") {
        // A static BR Code-like payload (EMV merchant-presented QR); the simulator does not compute a real CRC.
        const amount = (request.amount / 100).toFixed(2);
        action.qr_payload = `00020126580014br.gov.bcb.pix0136${request.chargeId}52040000530398654${String(amount.length).padStart(2, "0")}${amount}5802BR6304${digest.slice(0, 4)}`;
      }
      return action;
    },
  };
}
