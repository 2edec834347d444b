import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { recordEvent } from "../kernel/events.ts";
import { ensureBalance, postDisputeWithdrawal } from "../ledger/ledger.ts";
import type { DisputedCharges } from "./disputes.ts";
import type { DisputeDoc, DisputeReason, DisputeStatus, DisputeStore, DisputeTx } from "./records.ts";
import { CLOSED, type DisputeAction, eventFields, INQUIRY, refusal } from "./state.ts";

// Disputes as the acquirer reports them (its notifications: domain/acquirer-notifications; Adyen's
// NOTIFICATION_OF_CHARGEBACK, REQUEST_FOR_INFORMATION, CHARGEBACK, CHARGEBACK_REVERSED, SECOND_CHARGEBACK),
// applied through this area's own rules (disputes.ts open and resolve): an inquiry opens with no money
// moved; a chargeback withdraws the amount and the fee (opening one, or escalating the inquiry); a reversal
// wins it (the amount comes back); a second chargeback loses it. Each is applied once: `alongside` marks
// the notification applied first inside the change's transaction.
//
// Decided twice (issue 32): the issuer may answer a won chargeback with a second chargeback
// (pre-arbitration), and a lost one may be reversed after all. The dispute is reopened rather than a new
// one made (a charge is disputed once, Charge.dispute_id): `won` → `lost` withdraws the money again,
// `lost` → `won` gives it back (redecide, below). Adyen names every stage of one dispute by its
// pspReference, so each event code is applied at most once per dispute (the notification's dedupe key),
// and the outcome does not depend on the order they arrive in: CHARGEBACK, CHARGEBACK_REVERSED and
// SECOND_CHARGEBACK end `lost` in any order, because a reversal that arrives after the second chargeback
// (which records `second_chargeback`) is the earlier event delivered late, and only confirms.
//
// Pre-arbitration (Adyen's PREARBITRATION_WON / PREARBITRATION_LOST): the last word on a dispute the
// card networks decided twice. Issue 31's model has no status for it (a dispute ends won or lost), so it
// is recorded on the dispute (`prearbitration`, never shown) and decides the outcome: won → the dispute
// ends `won` (from `lost`: the amount comes back), lost → it ends `lost` (from `won`: withdrawn again as for
// a second chargeback). Once it is recorded, a CHARGEBACK_REVERSED or SECOND_CHARGEBACK delivered late only
// confirms, so the result does not depend on the order; the contrary pre-arbitration outcome is
// `attention`.
//
// Answers as charges/acquirer-outcomes.ts does: `applied`, `waiting` (out of order: a reversal before the
// chargeback it reverses; kept and tried again), `confirmed` (already recorded), `attention` (the acquirer
// contradicts what is recorded, e.g. a chargeback on an inquiry closed for the merchant, or a second
// chargeback with nothing left of the charge to take: a person reconciles it).

export type DisputeStage =
  | "notified"
  | "chargeback"
  | "second_chargeback"
  | "reversed"
  | "prearbitration_won"
  | "prearbitration_lost";
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
  clock: Clock;
  charges: Pick<DisputedCharges, "find" | "load" | "claim">;
  load(livemode: boolean, id: string): Promise<DisputeDoc>;
  move(
    tx: DisputeTx,
    dispute: DisputeDoc,
    to: DisputeStatus,
    set: Partial<Omit<DisputeDoc, "status">>,
    action: DisputeAction,
  ): Promise<DisputeDoc>;
  decideChargeback(tx: DisputeTx, dispute: DisputeDoc, to: "won" | "lost", action: DisputeAction): Promise<DisputeDoc>;
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

/**
 * A decided chargeback the card networks decide again, as the acquirer reports it (acquirer-outcomes.ts):
 * a won one lost to the issuer's second chargeback (pre-arbitration: what the charge has left, up to the
 * dispute's amount, is withdrawn again, without a second fee), or a lost one won after all (its
 * reversal: the amount comes back, the charge may be refunded again). The only ways out of `won` and
 * `lost` (DISPUTE_MACHINE). Returns null when a second chargeback finds nothing left to take (the
 * merchant refunded the charge after winning): a person reconciles that with the acquirer.
 */
export async function redecide(
  ops: Operations,
  livemode: boolean,
  id: string,
  outcome: "won" | "lost",
  alongside: (tx: DisputeTx) => Promise<void>,
): Promise<DisputeDoc | null> {
  const { store, clock, charges, load, move, decideChargeback } = ops;
  const dispute = await load(livemode, id);
  const from = outcome === "lost" ? "won" : "lost";
  if (dispute.status !== from) throw refusal(dispute, "resolve");
  if (outcome === "won") {
    return commit(store, null, async (tx) => {
      await alongside(tx);
      return decideChargeback(tx, dispute, "won", "resolve");
    });
  }
  const charge = await charges.load(livemode, dispute.charge_id);
  const amount = Math.min(dispute.amount, charge.amount_captured - charge.amount_refunded);
  if (amount <= 0) return null;
  await ensureBalance(store, livemode, dispute.merchant_id, dispute.currency, clock);
  return commit(store, null, async (tx) => {
    await alongside(tx);
    // The chargeback holds the charge again: no refund may pay the cardholder a second time.
    await charges.claim(tx, charge, dispute.id, true, false);
    const txns = await postDisputeWithdrawal(tx, clock, {
      livemode,
      merchantId: dispute.merchant_id,
      currency: dispute.currency,
      disputeId: dispute.id,
      amount,
      fee: 0,
    });
    const lost = await move(
      tx,
      dispute,
      "lost",
      { amount, second_chargeback: true, balance_transactions: [...dispute.balance_transactions, ...txns] },
      "resolve",
    );
    await recordEvent(tx, clock, lost.livemode, "dispute.funds_withdrawn", { ...eventFields(lost), fee: 0 });
    await recordEvent(tx, clock, lost.livemode, "dispute.closed", eventFields(lost));
    return lost;
  });
}

/** PREARBITRATION_WON / _LOST (see the top of this file): the dispute ends `outcome`, recorded once. */
async function prearbitration(
  ops: Operations,
  livemode: boolean,
  dispute: DisputeDoc | null,
  outcome: "won" | "lost",
  alongside: (tx: DisputeTx) => Promise<void>,
): Promise<DisputeApplication> {
  // Out of order: the chargeback it follows has not arrived (or not been applied) yet.
  if (!dispute || INQUIRY.includes(dispute.status)) return "waiting";
  if (dispute.prearbitration) return dispute.prearbitration === outcome ? "confirmed" : "attention";
  const mark = async (tx: DisputeTx) => {
    await alongside(tx);
    await tx.update("disputes", dispute.id, { set: { prearbitration: outcome } });
  };
  if (!CLOSED.includes(dispute.status)) {
    await ops.resolve(null, livemode, dispute.id, outcome, mark);
    return "applied";
  }
  if (dispute.status === outcome) {
    await commit(ops.store, null, mark);
    return "applied";
  }
  if (dispute.status !== "won" && dispute.status !== "lost") return "attention";
  return (await redecide(ops, livemode, dispute.id, outcome, mark)) ? "applied" : "attention";
}

export function acquirerDisputes(ops: Operations): AcquirerDisputes {
  const { store, charges, open, resolve } = ops;
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
        case "prearbitration_won":
        case "prearbitration_lost":
          return prearbitration(ops, livemode, dispute, stage === "prearbitration_won" ? "won" : "lost", alongside);
        case "reversed":
        case "second_chargeback": {
          // Out of order: the chargeback this decides has not arrived (or not been applied) yet.
          if (!dispute || INQUIRY.includes(dispute.status)) return "waiting";
          // The pre-arbitration's outcome, recorded already, is the last word: this is an earlier stage, late.
          if (dispute.prearbitration) return "confirmed";
          const second = stage === "second_chargeback";
          // A second chargeback is recorded with the change it makes, so that a late reversal only confirms.
          const mark = second
            ? async (tx: DisputeTx) => {
                await alongside(tx);
                await tx.update("disputes", dispute.id, { set: { second_chargeback: true } });
              }
            : alongside;
          if (!CLOSED.includes(dispute.status)) {
            await resolve(null, livemode, dispute.id, second ? "lost" : "won", mark);
            return "applied";
          }
          if (dispute.status === "lost") {
            if (!second) {
              // The reversal the second chargeback answered, delivered after it: already accounted for.
              if (dispute.second_chargeback) return "confirmed";
              await redecide(ops, livemode, dispute.id, "won", alongside);
              return "applied";
            }
            if (dispute.second_chargeback) return "confirmed";
            // Lost already (accepted, or its deadline passed): nothing moves; a late reversal must not win it.
            await commit(store, null, mark);
            return "applied";
          }
          if (dispute.status === "won") {
            if (!second) return "confirmed";
            return (await redecide(ops, livemode, dispute.id, "lost", mark)) ? "applied" : "attention";
          }
          return "attention";
        }
      }
    },
  };
}
