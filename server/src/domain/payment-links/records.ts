import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";

export type PaymentLinkMethod = "card" | "pix" | "boleto" | "oxxo" | "spei" | "sepa_debit";

export type AfterCompletion = { type: "message"; message: string } | { type: "redirect"; url: string };

/** A shareable link to the hosted payment page (spec/resources/payment-links.tsp). */
export interface PaymentLinkDoc extends BaseDoc {
  merchant_id: string;
  amount: number;
  currency: string;
  description: string;
  payment_methods: PaymentLinkMethod[];
  active: boolean;
  expires_at: string | null;
  max_uses: number | null;
  /** Completed payments (captured charges). */
  uses: number;
  /** Charges started and not yet completed (pending local payments, held authorizations). */
  pending_uses: number;
  /**
   * uses + pending_uses, kept as one field so that one conditional increment (`claimed < max_uses`)
   * guards the limit under concurrency (domain/payment-links/usage.ts).
   */
  claimed: number;
  after_completion: AfterCompletion | null;
  metadata: Record<string, string>;
  updated_at: string;
}

export const paymentLinkCollections = {
  payment_links: collection<PaymentLinkDoc>([
    // listPaymentLinks by merchant and by `active`: the page straight from the index, in order (issue 36).
    { fields: ["livemode", "merchant_id", "created_at", "id"] },
    { fields: ["livemode", "active", "created_at", "id"] },
  ]),
};

/** The store as the payment-links area sees it: its own collections and the kernel's (kernel/store.ts). */
export type PaymentLinkStore = AreaStore<typeof paymentLinkCollections>;
export type PaymentLinkTx = AreaTx<typeof paymentLinkCollections>;
export type PaymentLinkDocs = AreaDocs<typeof paymentLinkCollections>;
