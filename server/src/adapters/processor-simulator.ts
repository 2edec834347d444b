import { createHash } from "node:crypto";
import { type FailureCode, LOCAL_METHODS, type NextAction, type Processor } from "../domain/charges/processor.ts";
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
      return { approved: true, reference: `sim_auth_${randomBase62(16)}` };
    },
    async capture() {},
    async void() {},
    async refund() {},
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
