import type { DisputedCharges } from "./disputes.ts";
import type { DisputeDoc, DisputeReason, DisputeStore, DisputeTx } from "./records.ts";
import { CLOSED, INQUIRY } from "./state.ts";

// Disputes as the acquirer reports them (its notifications: domain/acquirer-notifications; Adyen's
// NOTIFICATION_OF_CHARGEBACK, REQUEST_FOR_INFORMATION, CHARGEBACK, CHARGEBACK_REVERSED, SECOND_CHARGEBACK),
// applied through this area's own rules (disputes.ts open and resolve): an inquiry opens with no money
// moved; a chargeback withdraws the amount and the fee (opening one, or escalating the inquiry); a reversal
// wins it (the amount comes back); a second chargeback loses it. Each is applied once: `alongside` marks
// the notification applied first inside the change's transaction.
//
// Answers as charges/acquirer-outcomes.ts does: `applied`, `waiting` (out of order: a reversal before the
// chargeback it reverses; kept and tried again), `confirmed` (already recorded), `attention` (the acquirer
// contradicts what is recorded, e.g. a second chargeback after a win: our machine has no way back from
// `won`, so a person reconciles it).

export type DisputeStage = "notified" | "chargeback" | "second_chargeback" | "reversed";
export type DisputeApplication = "applied" | "waiting" | "confirmed" | "attention";

/** The card networks' reason codes (Visa's `10.4`, Mastercard's `4837`) as our DisputeReason. */
export function reasonOf(code: string | undefined): DisputeReason {
  if (!code) return "general";
  if (/^10\./.test(code) || ["4837", "4840", "4863", "4870", "4871"].includes(code)) return "fraudulent";
  if (code === "13.1" || code === "4855") return "product_not_received";
  if (code === "13.3" || code === "4853") return "product_unacceptable";
  if (code === "12.6.1" || code === "4834") return "duplicate";
  if (code === "13.2" || code === "4841") return "subscription_canceled";
  if (code === "13.6" || code === "4860") return "credit_not_processed";
  return "general";
}

interface Operations {
  store: DisputeStore;
  charges: Pick<DisputedCharges, "find">;
  open(
    caller: null,
    livemode: boolean,
    chargeId: string,
    input: { reason?: DisputeReason; inquiry?: boolean; acquirerRef?: string },
    alongside?: (tx: DisputeTx) => Promise<void>,
  ): Promise<DisputeDoc>;
  resolve(
    caller: null,
    livemode: boolean,
    id: string,
    outcome: "won" | "lost",
    alongside?: (tx: DisputeTx) => Promise<void>,
  ): Promise<DisputeDoc>;
}

/** Disputes as the acquirer reports them (acquirerDisputes). */
export interface AcquirerDisputes {
  apply(
    livemode: boolean,
    chargeId: string,
    stage: DisputeStage,
    report: { disputeReference: string; reasonCode?: string | undefined },
    alongside: (tx: DisputeTx) => Promise<void>,
  ): Promise<DisputeApplication>;
}

export function acquirerDisputes({ store, charges, open, resolve }: Operations): AcquirerDisputes {
  return {
    async apply(
      livemode: boolean,
      chargeId: string,
      stage: DisputeStage,
      report: { disputeReference: string; reasonCode?: string | undefined },
      alongside: (tx: DisputeTx) => Promise<void>,
    ): Promise<DisputeApplication> {
      const charge = await charges.find(livemode, chargeId);
      if (!charge) return "waiting";
      const dispute = charge.dispute_id ? await store.get("disputes", charge.dispute_id) : null;
      const input = { reason: reasonOf(report.reasonCode), acquirerRef: report.disputeReference };
      switch (stage) {
        case "notified":
          if (dispute) return "confirmed";
          await open(null, livemode, chargeId, { ...input, inquiry: true }, alongside);
          return "applied";
        case "chargeback":
          if (!dispute) {
            await open(null, livemode, chargeId, { ...input, inquiry: false }, alongside);
            return "applied";
          }
          if (dispute.status === "warning_closed") return "attention";
          if (!INQUIRY.includes(dispute.status)) return "confirmed";
          // The inquiry becomes a chargeback: what is left of the charge is withdrawn now.
          await resolve(null, livemode, dispute.id, "lost", alongside);
          return "applied";
        case "reversed":
        case "second_chargeback": {
          // Out of order: the chargeback this decides has not arrived (or not been applied) yet.
          if (!dispute || INQUIRY.includes(dispute.status)) return "waiting";
          const outcome = stage === "reversed" ? "won" : "lost";
          if (CLOSED.includes(dispute.status)) return dispute.status === outcome ? "confirmed" : "attention";
          await resolve(null, livemode, dispute.id, outcome, alongside);
          return "applied";
        }
      }
    },
  };
}
