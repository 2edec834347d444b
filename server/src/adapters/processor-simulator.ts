import { createHash } from "node:crypto";
import {
  type DisputeAfterCapture,
  type FailureCode,
  LOCAL_METHODS,
  type NextAction,
  type Processor,
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
