import type { Schemas } from "../kernel/operations.ts";
import type { DisputeDoc } from "./records.ts";
import { chargeRefundable } from "./state.ts";

/** A stored dispute → the contract's Dispute. */
export const dispute = (d: DisputeDoc): Schemas["Dispute"] => ({
  id: d.id,
  object: "dispute",
  charge_id: d.charge_id,
  merchant_id: d.merchant_id,
  amount: d.amount,
  currency: d.currency,
  reason: d.reason,
  status: d.status,
  evidence: { ...d.evidence },
  evidence_due_by: d.evidence_due_by,
  evidence_submitted_at: d.evidence_submitted_at,
  is_charge_refundable: chargeRefundable(d.status),
  fee: d.fee,
  balance_transactions: [...d.balance_transactions],
  metadata: d.metadata,
  livemode: d.livemode,
  created_at: d.created_at,
  updated_at: d.updated_at,
  closed_at: d.closed_at,
});
