// The Processor port stands for the acquirer. The shipped adapter is a deterministic simulator
// (adapters/processor-simulator.ts), used in the sandbox and — until a real acquirer adapter exists — in
// production too.

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

/** A dispute the acquirer will open on a captured charge some time after its capture (issue 31). */
export interface DisputeAfterCapture {
  reason: "fraudulent" | "product_not_received";
  /** An inquiry (`warning_needs_response`) rather than a chargeback. */
  inquiry: boolean;
  /** How long after the capture, on the environment's clock. */
  afterSeconds: number;
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
  /**
   * The dispute the cardholder's bank will open on the authorization `reference` after capture, or null.
   * Only the simulator knows in advance (its dispute test cards, docs/disputes.md "Test cards"); a real
   * acquirer reports disputes as they happen (issue 32) and leaves this out.
   */
  disputeAfterCapture?(reference: string): DisputeAfterCapture | null;
}

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
