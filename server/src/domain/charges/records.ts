import type { BaseDoc } from "../../store/port.ts";
import type { Schemas } from "../kernel/operations.ts";
import { collection } from "../kernel/records.ts";
import type { Status } from "../kernel/state-machine.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";
import type { FeeRate } from "../ledger/fees.ts";
import type { SealedSecret } from "../vault/crypto.ts";
import type { AcquirerOperation, FailureCode, LocalMethod, NextAction, ThreeDSecureResult } from "./processor.ts";

// Charges and refunds as stored (spec/resources/charges.tsp); serialize.ts names what the API shows.

export type ChargeStatus =
  | "pending"
  | "requires_action"
  | "authorized"
  | "captured"
  | "partially_refunded"
  | "refunded"
  | "declined"
  | "blocked"
  | "voided"
  | "expired";

export type ReviewStatus = "open" | "approved" | "rejected" | "expired";

/** A charge held by fraud evaluation (spec: ChargeReview). */
export interface ChargeReviewDoc {
  /** Written only through REVIEW_MACHINE (state.ts). */
  status: Status<"review", ReviewStatus>;
  opened_at: string;
  expires_at: string;
  closed_at: string | null;
  /** Whether approval captures (the charge's `capture`); never shown. */
  capture: boolean;
}

/** 3-D Secure on a card charge (spec: ChargeThreeDSecure), with what its completion needs. */
export interface ThreeDSecureDoc {
  /** null while the payer has not answered the challenge. */
  result: ThreeDSecureResult | null;
  version: string;
  liability_shift: boolean;
  eci: string | null;
  /** The issuer's reference of a challenge (null when there was none); never shown. */
  reference: string | null;
  /** Whether the charge is captured once authorized (the charge's `capture`); never shown. */
  capture: boolean;
  /** Where the challenge page sends the payer back (ChargeCreate.return_url), or null. */
  return_url: string | null;
  /** When the fraud evaluation decided `review`: how long the review stays open once authorized. Never shown. */
  review_window_seconds: number | null;
  /** The card's token was made for this charge alone (a hosted page's): erased once the challenge ends. */
  erase_token?: boolean;
  /**
   * The challenge is the acquirer's (Adyen's issuer page, asked for inside the authorization): the payer's
   * return to /3ds/{tx_id}/return completes it (Processor.completeAuthentication), never the sandbox
   * helper or our own issuer page. Absent for the simulator's challenges. Never shown.
   */
  acquirer_challenge?: boolean;
}

export interface ChargeDoc extends BaseDoc {
  merchant_id: string;
  amount: number;
  currency: string;
  /** Written only through CHARGE_MACHINE (state.ts). */
  status: Status<"charge", ChargeStatus>;
  amount_captured: number;
  amount_refunded: number;
  payment_method: {
    type: "card" | "pix" | "boleto" | "oxxo" | "spei" | "sepa_debit";
    token?: string;
    brand?: Schemas["CardBrand"];
    last4?: string;
    fingerprint?: string;
  };
  next_action: NextAction | null;
  /** next_action.expires_at, top-level so the expiry job can query it. */
  expires_at: string | null;
  /** An authorization's failure, fraud's block, or a capture the acquirer reported failed (acquirer-outcomes.ts). */
  failure_code: FailureCode | "fraud_blocked" | "capture_failed" | null;
  failure_message: string | null;
  description: string | null;
  metadata: Record<string, string>;
  customer: { email?: string; ip?: string; country?: string } | null;
  /** The acquirer's reference for the authorization (never shown). */
  processor_ref: string | null;
  /** The evaluation made before authorizing; absent on charges stored before fraud evaluation existed. */
  fraud_evaluation_id?: string | null;
  review?: ChargeReviewDoc | null;
  /** review.expires_at while the review is open (null otherwise), top-level so the expiry job can query it. */
  review_expires_at?: string | null;
  /**
   * A card charge the acquirer took undecided (`pending`: Adyen's Received/Pending, at creation or after
   * 3-D Secure) whose evaluation decided `review`: the review its authorization opens (ChargeReview: its
   * window, and whether approval captures, the charge's `capture`), when the acquirer's AUTHORISATION
   * authorizes it (acquirer-outcomes.ts). Absent otherwise; never shown.
   */
  review_on_authorization?: { window_seconds: number; capture: boolean } | null;
  /** Set when 3-D Secure ran for a card charge (three-d-secure.ts). */
  three_d_secure?: ThreeDSecureDoc | null;
  /** Set when the charge was made through a payment link's hosted page (domain/payment-links). */
  payment_link_id?: string | null;
  /**
   * The platform's fee rate for this charge, fixed when it was made (ledger/fees.ts): the fee is taken
   * from what is captured. Absent on charges made before fees existed, which pay none.
   */
  fee_rate?: FeeRate | null;
  /** The charge's dispute (domain/disputes), once one is opened; a charge is disputed at most once. */
  dispute_id?: string | null;
  /**
   * Set while a chargeback holds the charge (open or lost; cleared when won): refunds are refused, since
   * the cardholder's bank already took the money back (Dispute.is_charge_refundable).
   */
  chargeback_id?: string | null;
  updated_at: string;
}

/**
 * A refund succeeds or is not made; a real acquirer may report one it accepted failed afterwards
 * (acquirer-outcomes.ts: Adyen's REFUND_FAILED). The simulator never fails one.
 */
export type RefundStatus = "succeeded" | "failed";

export interface RefundDoc extends BaseDoc {
  charge_id: string;
  merchant_id: string;
  amount: number;
  currency: string;
  /** Written only through REFUND_MACHINE (state.ts). */
  status: Status<"refund", RefundStatus>;
  reason: "requested_by_customer" | "duplicate" | "fraudulent" | null;
  metadata: Record<string, string>;
}

/**
 * Which use case commits an intent's outcome (intents.ts): the one that sent it, or the recovery job on
 * its behalf.
 */
export type IntentFinish =
  | "create"
  | "authenticate"
  | "capture"
  | "void"
  | "approve_review"
  | "reject_review"
  | "expire_review"
  | "refund"
  /** The payer's return from an acquirer-run 3-D Secure challenge (three-d-secure.ts returnFromIssuer). */
  | "authentication_return";

/**
 * A call to the acquirer, recorded before it is sent (intents.ts). Its id is the call's idempotency key
 * (processor.ts acquirerKey), so it is one per object and operation, and a crash leaves it `open`: in
 * doubt until the recovery job, or a retry of the same request, resolves it. Never shown by the API.
 */
export interface AcquirerIntentDoc extends BaseDoc {
  operation: AcquirerOperation;
  finish: IntentFinish;
  charge_id: string;
  /** For refunds: the refund the call is for. */
  refund_id: string | null;
  amount: number;
  currency: string;
  /** The authorization's reference (null for an authorization, until it is known). */
  reference: string | null;
  /** `recovering`: the recovery job took it over, and the request that opened it may no longer commit. */
  state: "open" | "recovering" | "resolved";
  /**
   * How it was resolved: its outcome committed; or, for a call whose charge was never stored, reversed at
   * the acquirer (an authorization, a direct debit) or `abandoned` (a local payment only its payer could
   * complete, with what they needed never shown: nothing to undo, create.ts abandonUnrecorded).
   */
  resolution: "committed" | "reversed" | "abandoned" | "conflict" | null;
  /** The client's Idempotency-Key, as stored (creation only; absent without one, so the index skips it). */
  request_key?: string;
  /** Until then, the request that opened it (or the recovery job that took it over) is presumed alive. */
  locked_until: string;
  resolved_at: string | null;
  /** For an authorization: the vault token and the capture flag sent, so the call can be sent again. */
  token: string | null;
  capture: boolean | null;
  /** How many times the call was sent (the first attempt, retries, recovery). */
  attempts: number;
  /**
   * For an acquirer-run 3-D Secure completion (operation `authenticate`): what the payer brought back from
   * the issuer's page (Adyen's `redirectResult`), all Adyen needs to finish the payment, so the recovery
   * job can send the same call again. No card data.
   */
  redirect_result?: string;
  /**
   * For an authorization: the return address sent with it (the challenge step's, from BASE_URL), so every
   * repeat is the same request. An acquirer refuses a key reused with a different request (Adyen: 422),
   * and BASE_URL may differ on the instance that repeats it (the Adyen crash suite's finding, issue 32).
   */
  return_url?: string;
  /** For a local payment's start (operation `start_local`): its method, so the recovery job knows what it started. */
  local_method?: LocalMethod;
  /**
   * For a SEPA Direct Debit's start: the payer's IBAN and account holder, sealed under the vault's master
   * key (never in clear in storage), so the recovery job can send the same call again and cancel the
   * debit a crash left unrecorded. Removed once the intent is resolved.
   */
  payer_account?: SealedSecret | null;
}

export const chargeCollections = {
  // Most charges have no expiry (a card's), no review and no payment link: those three indexes are
  // sparse, and a card charge's write skips them (port.ts, IndexSpec).
  // listCharges by merchant or by status reads its page straight from the index, in the listing order
  // (created_at, id): without them the store walks the environment's listing index and filters (issue 36).
  charges: collection<ChargeDoc>([
    { fields: ["livemode", "merchant_id", "created_at", "id"] },
    { fields: ["livemode", "status", "created_at", "id"] },
    { fields: ["livemode", "status", "expires_at"], sparse: true },
    { fields: ["livemode", "review_expires_at"], sparse: true },
    { fields: ["livemode", "payment_link_id", "created_at", "id"], sparse: true },
  ]),
  // listRefunds: a charge's refunds in the listing order straight from the index; without created_at, id
  // SQLite (no statistics) walks the whole environment's listing index instead (issue 36).
  refunds: collection<RefundDoc>([{ fields: ["charge_id", "created_at", "id"] }]),
  // Read by id, request key and the recovery job's queue only: unlisted (no listing index, issue 36);
  // the queue's locked_until an integer in its column and index (store/port.ts, CollectionSpec.timestamps).
  acquirer_intents: collection<AcquirerIntentDoc>(
    [{ fields: ["livemode", "state", "locked_until"] }, { fields: ["request_key"], sparse: true }],
    { unlisted: true, timestamps: ["locked_until"] },
  ),
};

/** The store as the charges area sees it: its own collections and the kernel's (kernel/store.ts). */
export type ChargeStore = AreaStore<typeof chargeCollections>;
export type ChargeTx = AreaTx<typeof chargeCollections>;
export type ChargeDocs = AreaDocs<typeof chargeCollections>;
