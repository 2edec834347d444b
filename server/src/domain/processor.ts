import { createHash } from "node:crypto";
import { randomBase62 } from "./ids.ts";
import { iso } from "./time.ts";

// The Processor port stands for the acquirer. The shipped adapter is a deterministic simulator, used in the
// sandbox and — until a real acquirer adapter exists — in production too.

export type FailureCode = "card_declined" | "insufficient_funds" | "expired_card" | "processing_error";

export interface CardAuthorizationRequest {
  chargeId: string;
  pan: string;
  expMonth: number;
  expYear: number;
  amount: number;
  currency: string;
  livemode: boolean;
  now: Date;
}

export type AuthorizationResult =
  | { approved: true; reference: string }
  | { approved: false; failureCode: FailureCode; failureMessage: string };

export type LocalMethod = "pix" | "boleto" | "oxxo" | "spei" | "sepa_debit";

export interface NextAction {
  type: "display_qr_code" | "display_voucher" | "bank_transfer" | "await_debit";
  reference: string;
  qr_payload?: string;
  expires_at: string;
}

export interface LocalPaymentRequest {
  chargeId: string;
  method: LocalMethod;
  amount: number;
  currency: string;
  now: Date;
  /** For sepa_debit: the payer's IBAN (the simulator only reads its country). */
  iban?: string | undefined;
}

export interface Processor {
  authorizeCard(request: CardAuthorizationRequest): Promise<AuthorizationResult>;
  /** Capture `amount` (≤ the authorized amount) of an authorization. */
  capture(reference: string, amount: number): Promise<void>;
  /** Release an authorization. */
  void(reference: string): Promise<void>;
  refund(reference: string, amount: number): Promise<void>;
  /** Starts a payment the payer completes elsewhere; returns what the payer must do, and by when. */
  startLocalPayment(request: LocalPaymentRequest): Promise<NextAction>;
}

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

/** How long each local method's payer has, and what they are shown. */
export const LOCAL_METHODS: Record<
  LocalMethod,
  { currency: string; nextAction: NextAction["type"]; ttlSeconds: number; referencePrefix: string }
> = {
  pix: { currency: "BRL", nextAction: "display_qr_code", ttlSeconds: 3600, referencePrefix: "PIX" },
  boleto: { currency: "BRL", nextAction: "display_voucher", ttlSeconds: 3 * 86400, referencePrefix: "BOL" },
  oxxo: { currency: "MXN", nextAction: "display_voucher", ttlSeconds: 3 * 86400, referencePrefix: "OXXO" },
  spei: { currency: "MXN", nextAction: "bank_transfer", ttlSeconds: 86400, referencePrefix: "SPEI" },
  sepa_debit: { currency: "EUR", nextAction: "await_debit", ttlSeconds: 5 * 86400, referencePrefix: "SEPA" },
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
