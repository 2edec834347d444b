import { entriesOf } from "../../guards.ts";
import { LOCAL_METHODS } from "../charges/processor.ts";
import type { Plain } from "../kernel/state-machine.ts";
import { iso } from "../kernel/time.ts";
import type { MerchantDoc } from "../merchants/records.ts";
import type { PaymentLinkDoc, PaymentLinkMethod } from "./records.ts";

// Whether a link takes payments, and which methods it may offer (PaymentLink in
// spec/resources/payment-links.tsp).

/** Whether a link takes payments now, and if not, why (the hosted page shows each case its own way). */
export type LinkState = "open" | "inactive" | "expired" | "used_up";

export function linkState(link: PaymentLinkDoc, merchant: Plain<MerchantDoc> | null, now: Date): LinkState {
  if (!link.active || merchant?.status !== "active") return "inactive";
  if (link.expires_at !== null && link.expires_at <= iso(now)) return "expired";
  if (link.max_uses !== null && link.claimed >= link.max_uses) return "used_up";
  return "open";
}

/** Why a link that is not open refuses a payment (409 payment_link_unavailable), in the payer's words. */
export function unavailableDetail(state: Exclude<LinkState, "open">, link: PaymentLinkDoc): string {
  switch (state) {
    case "inactive":
      return "This payment link is not taking payments.";
    case "expired":
      return `This payment link expired at ${link.expires_at}.`;
    case "used_up":
      return `This payment link has taken all the payments it allows (max_uses ${link.max_uses}).`;
  }
}

/** The methods a link may offer in `currency`: a card, and the local methods paid in that currency. */
export function methodsFor(currency: string): PaymentLinkMethod[] {
  const local = entriesOf(LOCAL_METHODS).filter(([, m]) => m.currency === currency);
  return ["card", ...local.map(([method]) => method)];
}
