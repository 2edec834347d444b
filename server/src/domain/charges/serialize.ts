import type { Schemas } from "../kernel/operations.ts";
import { feeFor } from "../ledger/fees.ts";
import type { ChargeDoc, RefundDoc } from "./records.ts";

// Stored charges and refunds → the contract's Charge and Refund: the card's brand and last four digits,
// never its token's number, nor the acquirer's reference.

export const charge = (c: ChargeDoc): Schemas["Charge"] => ({
  id: c.id,
  object: "charge",
  merchant_id: c.merchant_id,
  amount: c.amount,
  currency: c.currency,
  status: c.status,
  amount_captured: c.amount_captured,
  amount_refunded: c.amount_refunded,
  // The fee follows from the rate the charge was made with and what was captured (ledger/fees.ts): the
  // same number the capture's posting took.
  fee: feeFor(c.fee_rate, c.amount_captured),
  net: c.amount_captured - feeFor(c.fee_rate, c.amount_captured),
  payment_method: c.payment_method,
  next_action: c.next_action,
  failure_code: c.failure_code,
  failure_message: c.failure_message,
  description: c.description,
  metadata: c.metadata,
  customer: c.customer,
  fraud_evaluation_id: c.fraud_evaluation_id ?? null,
  review: c.review
    ? {
        status: c.review.status,
        opened_at: c.review.opened_at,
        expires_at: c.review.expires_at,
        closed_at: c.review.closed_at,
      }
    : null,
  // Only what the contract shows of 3-D Secure (ChargeThreeDSecure): not the issuer's reference, nor
  // what completing it needs.
  ...(c.three_d_secure
    ? {
        three_d_secure: {
          result: c.three_d_secure.result,
          version: c.three_d_secure.version,
          liability_shift: c.three_d_secure.liability_shift,
          eci: c.three_d_secure.eci,
        },
      }
    : {}),
  ...(c.payment_link_id ? { payment_link_id: c.payment_link_id } : {}),
  livemode: c.livemode,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

export const refund = (r: RefundDoc): Schemas["Refund"] => ({
  id: r.id,
  object: "refund",
  charge_id: r.charge_id,
  amount: r.amount,
  currency: r.currency,
  status: r.status,
  reason: r.reason,
  metadata: r.metadata,
  livemode: r.livemode,
  created_at: r.created_at,
});
