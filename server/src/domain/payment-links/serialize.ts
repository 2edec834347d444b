import type { Schemas } from "../kernel/operations.ts";
import type { LinkPayment } from "./pay.ts";
import type { PaymentLinkDoc } from "./records.ts";

// Stored links → the contract's PaymentLink, and a payment through one → PaymentLinkPayment (what the
// hosted page's payer sees).

export const paymentLink = (l: PaymentLinkDoc, url: string): Schemas["PaymentLink"] => ({
  id: l.id,
  object: "payment_link",
  merchant_id: l.merchant_id,
  amount: l.amount,
  currency: l.currency,
  description: l.description,
  payment_methods: l.payment_methods,
  active: l.active,
  expires_at: l.expires_at,
  max_uses: l.max_uses,
  uses: l.uses,
  pending_uses: l.pending_uses,
  after_completion: l.after_completion,
  url,
  metadata: l.metadata,
  livemode: l.livemode,
  created_at: l.created_at,
  updated_at: l.updated_at,
});

/** What a payer may see when a fraud rule blocked the payment: never which rule, or that one did. */
const BLOCKED_FOR_PAYER = "The payment could not be completed. Try another card or payment method.";

/** The public pay operation's answer (PaymentLinkPayment): no metadata, token, fingerprint or customer. */
export const paymentLinkPayment = ({ link, charge: c }: LinkPayment): Schemas["PaymentLinkPayment"] => {
  const paid = c.status === "captured" || c.status === "pending" || c.status === "authorized";
  return {
    object: "payment_link_payment",
    payment_link_id: link.id,
    charge_id: c.id,
    status: c.status,
    amount: c.amount,
    currency: c.currency,
    payment_method: {
      type: c.payment_method.type,
      ...(c.payment_method.brand ? { brand: c.payment_method.brand } : {}),
      ...(c.payment_method.last4 ? { last4: c.payment_method.last4 } : {}),
    },
    next_action: c.next_action,
    failure_code: c.failure_code,
    failure_message: c.status === "blocked" ? BLOCKED_FOR_PAYER : c.failure_message,
    after_completion: paid ? link.after_completion : null,
    livemode: c.livemode,
    created_at: c.created_at,
  };
};
