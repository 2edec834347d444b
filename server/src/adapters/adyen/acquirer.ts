import type { PayoutRequest } from "../../domain/cashouts/payout-rail.ts";
import {
  AcquirerCallInDoubt,
  type CardAuthorizationRequest,
  type FailureCode,
  type LocalPaymentRequest,
  type NextAction,
} from "../../domain/charges/processor.ts";

// The acquirer port as a real acquirer needs it (issue 32), for the Adyen connector (./connector.ts) and
// whoever writes the next one. It is the Processor port (domain/charges/processor.ts) and the payout
// rail's `send` (domain/cashouts/payout-rail.ts) grown by what an acquirer outside this process imposes:
//
// - Every mutating call carries an idempotency key the caller derives from our object and the operation
//   (`ch_…:authorize`, `re_…:refund`), the same on every attempt: a call repeated after a crash or a
//   time-out then moves money at most once (Adyen keeps a key at least 7 days).
// - A call can end in doubt (`AcquirerInDoubt`: time-out, connection lost, 5xx): the money may or may not
//   have moved. The caller keeps its intent and repeats the same call with the same key until it gets an
//   answer. Adyen has no "look a payment up" operation in Checkout v71, so repeating is the way to ask.
// - Outcomes can be asynchronous: a capture, cancel or refund is only *received* when the call returns;
//   Adyen confirms or refuses it later by notification (./notifications.ts), as it confirms the
//   authorization of a local method or of a 3-D Secure payment finished by redirect.
// - An authorization can require 3-D Secure: the payer is sent to `action.url`, comes back to our
//   `returnUrl` with a `redirectResult`, and `completeAuthentication` finishes it.

/** The idempotency key of one operation on one of our objects; never random, never per attempt. */
export interface Idempotent {
  idempotencyKey: string;
}

export interface CardAuthorization extends Omit<CardAuthorizationRequest, "capture">, Idempotent {
  /** `immediate`: captured with the authorization (Adyen `captureDelayHours: 0`); `manual`: held. */
  capture: "immediate" | "manual";
  cvc?: string | undefined;
  holderName?: string | undefined;
  /** Where the payer comes back after a 3-D Secure redirect (our challenge step's return address). */
  returnUrl: string;
  /** The payer's IP address, which 3-D Secure and Adyen's risk checks use when known. */
  shopperIp?: string | undefined;
}

/** A 3-D Secure challenge the payer completes on the issuer's page (issue 31's `next_action`). */
export interface RedirectAction {
  type: "redirect_to_url";
  url: string;
  method: "GET" | "POST";
  /** Form fields to POST when `method` is POST. */
  data?: Record<string, string> | undefined;
}

/**
 * What the issuer's 3-D Secure server said of the payer, as Adyen reports it after a challenge
 * (`threeDS2Result` of /payments/details): `transStatus` Y authenticated, A attempted, N/R failed, U
 * could not be performed; absent when Adyen did not report it.
 */
export interface AuthenticationSummary {
  transStatus?: string | undefined;
  eci?: string | undefined;
  version?: string | undefined;
}

export type Authorization =
  | { status: "authorized"; reference: string; authentication?: AuthenticationSummary }
  | {
      status: "declined";
      reference?: string | undefined;
      failureCode: FailureCode;
      failureMessage: string;
      authentication?: AuthenticationSummary;
    }
  /** 3-D Secure: send the payer to `action`; `reference` is Adyen's when it gave one already. */
  | { status: "requires_action"; reference?: string | undefined; action: RedirectAction }
  /**
   * Received, not decided: the AUTHORISATION notification tells. After a 3-D Secure challenge
   * (/payments/details) Adyen may report the issuer's result with it.
   */
  | { status: "pending"; reference: string; authentication?: AuthenticationSummary };

export interface AuthenticationCompletion extends Idempotent {
  /** The `redirectResult` the payer brought back to `returnUrl`. */
  redirectResult: string;
}

export interface Modification extends Idempotent {
  /** Adyen's pspReference of the authorization (Authorization `reference`). */
  reference: string;
  /** Our object the modification is for (charge or refund id): Adyen echoes it in the notification. */
  merchantReference: string;
}

export interface MoneyModification extends Modification {
  amount: number;
  currency: string;
}

/** A modification Adyen has received; its outcome comes by notification (CAPTURE, REFUND, CANCELLATION). */
export interface ModificationReceived {
  status: "received";
  /** Adyen's pspReference of the modification itself. */
  reference: string;
}

/** What a local method's payer needs, as the simulator gives them (for sepa_debit also the holder's name). */
export interface LocalPayment extends LocalPaymentRequest, Idempotent {
  returnUrl: string;
  /** Boleto requires the payer's name, CPF/CNPJ and billing address at Adyen; SEPA the account holder. */
  payer?: PayerDetails | undefined;
}

export interface PayerDetails {
  firstName?: string;
  lastName?: string;
  /** CPF or CNPJ, digits only (boleto). */
  taxId?: string;
  email?: string;
  address?: {
    street: string;
    houseNumberOrName: string;
    postalCode: string;
    city: string;
    stateOrProvince: string;
    country: string;
  };
}

export interface LocalPaymentStarted {
  /** Adyen's pspReference: the AUTHORISATION notification names the payment by it. */
  reference: string;
  nextAction: NextAction;
}

export interface PayoutSubmission extends PayoutRequest, Idempotent {
  /** The account holder Adyen's payout API requires (the merchant being paid out). */
  holder: {
    email: string;
    shopperReference: string;
    entityType: "Company" | "NaturalPerson";
    nationality: string;
    dateOfBirth: string;
  };
}

/** A defense reason Adyen accepts for a dispute, with the documents it needs. */
export interface DefenseReason {
  code: string;
  /** Whether the documents supplied so far satisfy it. */
  satisfied: boolean;
  documents: Array<{ type: string; requirement: string; available: boolean }>;
}

export interface DefenseDocument {
  /** Adyen's document type code (from `defenseReasons`). */
  type: string;
  /** `application/pdf`, `image/jpeg` … */
  contentType: string;
  content: Buffer;
}

export interface Acquirer {
  authorizeCard(request: CardAuthorization): Promise<Authorization>;
  /** Finishes a 3-D Secure authorization after the payer's redirect back (`/payments/details`). */
  completeAuthentication(request: AuthenticationCompletion): Promise<Authorization>;
  /** Captures `amount` (≤ what is authorized and not yet captured); several partial captures are allowed. */
  capture(request: MoneyModification): Promise<ModificationReceived>;
  /** Releases an authorization that was not captured (the port's `void`). */
  cancel(request: Modification): Promise<ModificationReceived>;
  refund(request: MoneyModification): Promise<ModificationReceived>;
  /**
   * Undoes a payment whatever became of it: cancels it if not captured, refunds it in full if it was
   * (Adyen's reversal, confirmed by CANCEL_OR_REFUND). For an authorization our ledger never recorded.
   */
  reverse(request: Modification): Promise<ModificationReceived>;
  startLocalPayment(request: LocalPayment): Promise<LocalPaymentStarted>;
  /**
   * Submits a cashout (Adyen: storeDetailAndSubmitThirdParty); throws AcquirerUnsupported for a
   * destination the acquirer cannot pay. Nothing is paid until it is confirmed.
   */
  payout(request: PayoutSubmission): Promise<{ reference: string }>;
  /** Confirms a submitted payout (Adyen: confirmThirdParty); its outcome comes by notification. */
  confirmPayout(request: Idempotent & { reference: string }): Promise<void>;
  /** Declines a submitted payout, which is then never paid (Adyen: declineThirdParty). */
  declinePayout(request: Idempotent & { reference: string }): Promise<void>;
  /** The defense reasons a dispute (Adyen's dispute pspReference) can be defended with (Disputes API). */
  defenseReasons(disputeReference: string): Promise<DefenseReason[]>;
  supplyDefenseDocuments(disputeReference: string, documents: DefenseDocument[]): Promise<void>;
  /** Defends a dispute with one of its reasons; the outcome comes by notification (CHARGEBACK_REVERSED or not). */
  defendDispute(request: Idempotent & { disputeReference: string; reasonCode: string }): Promise<void>;
  /** Accepts a dispute: the merchant loses it without defending. */
  acceptDispute(request: Idempotent & { disputeReference: string }): Promise<void>;
  /** Closes kept-alive connections. */
  close(): void;
}

/** The outcome of the call is unknown (time-out, connection lost, 5xx, 429): repeat it with the same key. */
export class AcquirerInDoubt extends AcquirerCallInDoubt {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AcquirerInDoubt";
  }
}

/**
 * The acquirer refused the request itself (4xx: invalid field, wrong credentials, unknown reference):
 * nothing moved, and repeating it will not help. `errorCode` is Adyen's, for the operator.
 */
export class AcquirerRefused extends Error {
  readonly status: number;
  readonly errorCode: string | undefined;
  constructor(status: number, errorCode: string | undefined, message: string) {
    super(message);
    this.name = "AcquirerRefused";
    this.status = status;
    this.errorCode = errorCode;
  }
}

/** The acquirer does not offer this method or destination: refused in production, never simulated. */
export class AcquirerUnsupported extends Error {
  readonly what: string;
  constructor(what: string, message: string) {
    super(message);
    this.name = "AcquirerUnsupported";
    this.what = what;
  }
}
