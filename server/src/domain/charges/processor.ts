// The Processor port stands for the acquirer (docs/acquirer-port.md is its contract for whoever writes the
// next connector). The shipped adapter is a deterministic simulator (adapters/processor-simulator.ts),
// used in the sandbox (SANDBOX_ACQUIRER) and, where PRODUCTION_ACQUIRER says so, in production for demos.
//
// What a real acquirer needs of the port, and every adapter must honour:
// - Every call that changes something at the acquirer carries an idempotency key derived from our own
//   object and the operation (acquirerKey below), never one made fresh per attempt: sending the same
//   call again after a crash or a time-out must give the same answer and move no more money.
// - Outcomes may be asynchronous: a capture, void or refund may come back `pending`, confirmed later by
//   the acquirer's notification, rather than `confirmed` at once.
// - A call may end in doubt (a time-out, a dropped connection): the adapter throws. The charges area
//   records an intent before every such call (intents.ts), so a call in doubt is resolved later by
//   sending it again under the same key.

export type FailureCode =
  | "card_declined"
  | "insufficient_funds"
  | "expired_card"
  | "processing_error"
  | "authentication_failed";

/** The operations sent to the acquirer, each once per object of ours (acquirerKey). */
export type AcquirerOperation =
  | "authorize"
  /** Finishing an authorization the acquirer's 3-D Secure challenge held (Adyen's /payments/details). */
  | "authenticate"
  | "capture"
  | "void"
  | "refund"
  | "reverse"
  | "start_local";

/**
 * The idempotency key of `operation` on our object `objectId` (a charge's `tx_…`, a refund's `re_…`): the
 * same on every attempt and after every restart, so the acquirer applies the call at most once.
 */
export function acquirerKey(objectId: string, operation: AcquirerOperation): string {
  return `${objectId}:${operation}`;
}

/**
 * The object of ours an acquirer's report names for `operation`: the connector sends a modification's
 * idempotency key as the acquirer's reference (Adyen's `reference`, back as the notification's
 * `merchantReference`: `tx_…:capture`, `tx_…:void`, `re_…:refund`), so that key is acquirerKey's inverse;
 * a bare id (a payment's reference is the charge id; an acquirer that echoes ours) names itself.
 */
export function objectOfReference(reference: string, operation: AcquirerOperation): string {
  const suffix = `:${operation}`;
  return reference.endsWith(suffix) ? reference.slice(0, -suffix.length) : reference;
}

/**
 * A call whose outcome at the acquirer is unknown (a time-out, a dropped connection, its 5xx or 429): an
 * adapter throws it (adapters/adyen/acquirer.ts AcquirerInDoubt extends it). The call's intent stays open,
 * resolved by a retry under the same key or by the recovery job (intents.ts).
 */
export class AcquirerCallInDoubt extends Error {}

/** What every call that changes something at the acquirer carries. */
export interface AcquirerCall {
  /** acquirerKey(object, operation): the same on every attempt. */
  idempotencyKey: string;
}

export interface CardAuthorizationRequest extends AcquirerCall {
  chargeId: string;
  pan: string;
  expMonth: number;
  expYear: number;
  amount: number;
  currency: string;
  /** Capture in the same call when approved (an immediate capture), rather than authorize only. */
  capture: boolean;
  livemode: boolean;
  now: Date;
  /**
   * Our challenge step's return address for this charge (/3ds/{tx_id}/return?t=…): where an acquirer
   * that runs 3-D Secure itself (Adyen) sends the payer back from the issuer's page. The same on every
   * attempt, like the rest of the request. The charges area always gives it; the simulator ignores it.
   */
  returnUrl?: string | undefined;
}

/**
 * The acquirer ran 3-D Secure inside the authorization and the issuer asks the payer for a challenge
 * (Adyen: resultCode RedirectShopper with a `redirect` action). Nothing is authorized until the payer
 * comes back through `returnUrl` and completeAuthentication finishes it.
 */
export interface AcquirerChallenge {
  /** The issuer's page the payer is sent to (GET). */
  url: string;
  /** The acquirer's reference of the payment waiting for the challenge, when it gave one. */
  reference: string | null;
  /** The 3-D Secure protocol version asked for. */
  version: string;
}

export type AuthorizationResult =
  | { approved: true; reference: string /** Whether the amount was captured in the same call. */; captured: boolean }
  | {
      approved: false;
      failureCode: FailureCode;
      failureMessage: string;
      /**
       * The acquirer refused the request itself (a 4xx), not the card: nothing was authorized by this
       * call. On a repeat under the same key (a resumed or recovered intent) that says nothing of what
       * the first call did (Adyen refuses a key reused with a different request): still in doubt.
       */
      requestRefused?: true;
    }
  /** Not decided: the payer must answer the issuer's challenge first (an acquirer-run 3-D Secure). */
  | { approved: false; challenge: AcquirerChallenge }
  /**
   * Taken, not decided yet (Adyen's `Received` / `Pending`): the acquirer's authorization notification
   * decides it (acquirer-outcomes.ts authorization). `reference` is the payment's at the acquirer.
   */
  | { approved: false; undecided: { reference: string } };

/** The payer's return from an acquirer-run challenge (Processor.completeAuthentication). */
export interface AuthenticationReturn extends AcquirerCall {
  chargeId: string;
  /** What the payer brought back from the issuer's page (Adyen's `redirectResult`), sent as is. */
  redirectResult: string;
  /** Whether the authorization was sent to capture in the same call (its intent's `capture`). */
  capture: boolean;
}

/** The authorization an acquirer-run challenge held, and what the issuer said of the payer. */
export interface AuthenticationCompleted {
  /**
   * Approved or declined, or taken and not decided yet (Adyen's `Received` / `Pending` from
   * /payments/details: its AUTHORISATION notification decides it, acquirer-challenge.ts); never another
   * challenge.
   */
  authorization: Exclude<AuthorizationResult, { challenge: AcquirerChallenge }>;
  threeDSecure: ThreeDSecureOutcome;
}

/** A capture, void or refund the acquirer took: done now, or confirmed later by its notification. */
export type Confirmation = { status: "confirmed" } | { status: "pending" };

/**
 * A refund's answer: a Confirmation, or `failed` when the acquirer took it and then could not pay it back
 * (what a real acquirer reports later by notification, acquirer-outcomes.ts; the sandbox's refund-failure
 * test card answers it at once). The refund stays made, then fails, as it does after a notification.
 */
/**
 * A refund taken (Confirmation), or failed. `requestRefused`: the acquirer refused the request itself
 * (Adyen's 4xx), so nothing was refunded by this call; on a repeat under the same key the first call's
 * fate is unknown (refunds.ts keeps that one in doubt).
 */
export type RefundConfirmation = Confirmation | { status: "failed"; reason: string; requestRefused?: true };

export interface CaptureRequest extends AcquirerCall {
  /** The authorization's reference (the charge's processor_ref). */
  reference: string;
  /** ≤ the authorized amount. */
  amount: number;
  /** The charge's currency: an acquirer checks it against the authorization's (Adyen requires it). */
  currency: string;
}

export interface ReleaseRequest extends AcquirerCall {
  reference: string;
}

export interface RefundRequest extends AcquirerCall {
  reference: string;
  amount: number;
  currency: string;
}

export type LocalMethod = "pix" | "boleto" | "oxxo" | "spei" | "sepa_debit";

export interface NextAction {
  type: "display_qr_code" | "display_voucher" | "bank_transfer" | "await_debit" | "redirect_to_url";
  reference: string;
  qr_payload?: string;
  /** redirect_to_url: the issuer's challenge page, and where it sends the payer back. */
  url?: string;
  return_url?: string;
  expires_at: string;
}

/** ThreeDSecureResult in spec/resources/three-d-secure.tsp. */
export type ThreeDSecureResult =
  | "authenticated"
  | "attempted"
  | "failed"
  | "not_supported"
  | "exempted"
  | "processing_error";

/** What the issuer answered about an authentication (ChargeThreeDSecure without its pending state). */
export interface ThreeDSecureOutcome {
  result: ThreeDSecureResult;
  version: string;
  liabilityShift: boolean;
  eci: string | null;
}

/**
 * How strongly the platform asks for 3-D Secure: `automatic` only when the issuer requires it,
 * `any` whenever the card supports it, `challenge` with a challenge wherever the card supports one
 * (RequestThreeDSecure in the contract; a fraud `request_3ds` decision asks for `challenge`).
 */
export type ThreeDSecureRequest = "automatic" | "any" | "challenge";

export interface CardAuthenticationRequest {
  chargeId: string;
  pan: string;
  brand: string | undefined;
  amount: number;
  currency: string;
  livemode: boolean;
  request: ThreeDSecureRequest;
}

/**
 * The issuer's answer to an authentication request: not needed (`automatic` on a card whose issuer
 * does not require it), done without the payer (frictionless, attempted, not supported, or an error),
 * or a challenge the payer must answer at the issuer's page.
 */
export type AuthenticationLookup =
  | { kind: "not_needed" }
  | { kind: "done"; outcome: ThreeDSecureOutcome }
  | { kind: "challenge"; reference: string; version: string };

/** The payer's answer to an issuer's challenge (Processor.completeChallenge). */
export interface ChallengeAnswer {
  /** The challenge's reference (AuthenticationLookup `challenge`). */
  reference: string;
  brand: string | undefined;
  /** Whether the payer completed the challenge. */
  passed: boolean;
}

export interface LocalPaymentRequest extends AcquirerCall {
  chargeId: string;
  method: LocalMethod;
  amount: number;
  currency: string;
  now: Date;
  /** For sepa_debit: the payer's IBAN (the simulator only reads its country). */
  iban?: string | undefined;
  /** For sepa_debit: the account holder's name (an acquirer such as Adyen requires it with the IBAN). */
  accountHolder?: string | undefined;
  /**
   * The address an acquirer that asks for one (Adyen) is given to send the payer back to: kept on the
   * start's intent and sent on every attempt, like CardAuthorizationRequest.returnUrl, so a repeat on an
   * instance with another BASE_URL is still the same request under the same key.
   */
  returnUrl?: string | undefined;
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
  /** Authorizes a card payment, and captures it in the same call when `capture` says so. */
  authorizeCard(request: CardAuthorizationRequest): Promise<AuthorizationResult>;
  /** Captures `amount` (≤ the authorized amount) of an authorization. */
  capture(request: CaptureRequest): Promise<Confirmation>;
  /** Releases an authorization. */
  void(request: ReleaseRequest): Promise<Confirmation>;
  refund(request: RefundRequest): Promise<RefundConfirmation>;
  /**
   * Undoes a payment whatever became of it (Adyen's "reversal"): releases an authorization, or refunds a
   * capture in full. Used by recovery for an authorization our ledger never recorded (intents.ts).
   */
  reverse(request: ReleaseRequest): Promise<Confirmation>;
  /** 3-D Secure: asks the card's issuer whether (and how) the payer must authenticate. */
  authenticateCard(request: CardAuthenticationRequest): Promise<AuthenticationLookup>;
  /** 3-D Secure: the payer's answer to the issuer's challenge (`passed`: they completed it). */
  completeChallenge(request: ChallengeAnswer): Promise<ThreeDSecureOutcome>;
  /**
   * 3-D Secure run by the acquirer inside authorizeCard (a `challenge` answer): the payer came back from
   * the issuer's page, and the held authorization is decided (Adyen's /payments/details). Keyed
   * (acquirerKey(tx, "authenticate")): sent again after a crash or a time-out, it answers as the first
   * time. Only acquirers that can answer `challenge` implement it; the simulator challenges beforehand
   * (authenticateCard) and leaves it out.
   */
  completeAuthentication?(request: AuthenticationReturn): Promise<AuthenticationCompleted>;
  /** Starts a payment the payer completes elsewhere; returns what the payer must do, and by when. */
  startLocalPayment(request: LocalPaymentRequest): Promise<NextAction>;
  /**
   * The dispute the cardholder's bank will open on the authorization `reference` after capture, or null.
   * Only the simulator knows in advance (its dispute test cards, docs/disputes.md "Test cards"); a real
   * acquirer reports disputes as they happen (issue 32) and leaves this out.
   */
  disputeAfterCapture?(reference: string): DisputeAfterCapture | null;
  /**
   * A dispute the acquirer reported (its reference: the dispute's `acquirer_ref`, domain/disputes) is
   * defended with the evidence the merchant submitted (updateDispute with `submit`): the adapter picks the
   * acquirer's applicable defense reason and sends the evidence it needs (Adyen's Disputes API:
   * retrieveApplicableDefenseReasons, supplyDefenseDocument, defendDispute). Keyed: sent again after a
   * crash or a time-out, it applies once. A refusal throws an error named `AcquirerRefused`. The
   * simulator leaves it out: its disputes are the sandbox's own.
   */
  defendDispute?(request: AcquirerCall & { disputeReference: string }): Promise<void>;
  /** The merchant accepts a dispute the acquirer reported (closeDispute; Adyen's acceptDispute). Keyed likewise. */
  acceptDispute?(request: AcquirerCall & { disputeReference: string }): Promise<void>;
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
