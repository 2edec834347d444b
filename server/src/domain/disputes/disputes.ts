import type { components } from "@payments/contract/types";
import type { Page, PageResult } from "../../store/port.ts";
import type { Processor } from "../charges/processor.ts";
import type { ChargeDoc } from "../charges/records.ts";
import { recordFraudDispute } from "../fraud/facts.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment, sandboxOnly } from "../kernel/environment.ts";
import { DomainError, notFound } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import type { QueryParams } from "../kernel/operations.ts";
import { transition, tryTransition } from "../kernel/state-machine.ts";
import { iso } from "../kernel/time.ts";
import { ensureBalance, postDisputeReversal, postDisputeWithdrawal } from "../ledger/ledger.ts";
import { type AcquirerDisputes, acquirerDisputes } from "./acquirer-outcomes.ts";
import type { DisputeDoc, DisputeReason, DisputeStatus, DisputeStore, DisputeTx } from "./records.ts";
import { CLOSED, DISPUTE_MACHINE, type DisputeAction, eventFields, NEEDS_RESPONSE, refusal } from "./state.ts";

// Disputes (spec/resources/disputes.tsp: getDispute, listDisputes, updateDispute, closeDispute and the
// sandbox's sandboxOpenDispute, sandboxResolveDispute; issue 31).
//
// Money rules, each in one transaction with the dispute's state change, the charge's claim and the events
// (and, for a POST, the Idempotency-Key's outcome: kernel/commit.ts):
// - a chargeback's opening (or an inquiry's escalation) withdraws the amount and the dispute fee from the
//   merchant's `available`, even below zero (ledger.ts postDisputeWithdrawal); an inquiry moves nothing;
// - winning a chargeback gives the amount back (postDisputeReversal); the fee is kept; losing keeps both;
// - the charge is claimed by a conditional update (it has no dispute yet, is captured, and its refunded
//   total is still what the opening read; the charges area writes it: charges/disputed.ts), and a refund's
//   own conditional update requires no chargeback on the charge (charges/refunds.ts): a refund and a
//   chargeback's opening racing never both succeed, so the cardholder is never paid back twice.

/** updateDispute's body (the contract's DisputeUpdate). */
export type DisputeUpdate = components["schemas"]["DisputeUpdate"];
/** sandboxOpenDispute's body (the contract's SandboxDisputeOpen). */
export type SandboxDisputeOpen = components["schemas"]["SandboxDisputeOpen"];
/** sandboxResolveDispute's outcome (the contract's SandboxDisputeResolve). */
export type DisputeOutcome = components["schemas"]["SandboxDisputeResolve"]["outcome"];

export interface DisputesDeps {
  store: DisputeStore;
  clock: Clock;
  /** The dispute fee per currency, in minor units (DISPUTE_FEES); a currency not listed pays none. */
  fees: Record<string, number>;
  /** How long a merchant has to answer (DISPUTE_EVIDENCE_SECONDS). */
  evidenceSeconds: number;
  /** The acquirer: which sandbox charges its bank will dispute after capture (the dispute test cards). */
  processor: Pick<Processor, "disputeAfterCapture">;
  /**
   * Each environment's acquirer, for the disputes it reported (`acquirer_ref`): their defense and
   * acceptance are sent to it before they are recorded here (acquirerResponse below).
   */
  acquirers?: {
    live: Pick<Processor, "defendDispute" | "acceptDispute"> | null;
    sandbox: Pick<Processor, "defendDispute" | "acceptDispute">;
  };
  /** The disputed charges, through the charges area (it owns the records): DisputedCharges. */
  charges: DisputedCharges;
}

/**
 * What disputes need of the charges area (this area declares the port; charges implements it:
 * charges/charges.ts `disputed`, charges/disputed.ts). The claim and its release run inside the
 * dispute's transaction, so the dispute, the charge's claim and the money move together or not at all.
 */
export interface DisputedCharges {
  /** The charge `id` of the environment, or 404 naming `param`. */
  load(livemode: boolean, id: string, param?: string): Promise<ChargeDoc>;
  /** The charge `id` of the environment, or null (an acquirer's report may name one not committed yet). */
  find(livemode: boolean, id: string): Promise<ChargeDoc | null>;
  /** Why the charge cannot be disputed now, in words; null when it can. */
  notDisputable(charge: ChargeDoc): DomainError | null;
  /** Claims the charge for the dispute (conditional on what `read` saw; throws when it changed). */
  claim(tx: DisputeTx, read: ChargeDoc, disputeId: string, chargeback: boolean, first: boolean): Promise<void>;
  /** A won chargeback frees the charge for refunds again. */
  releaseChargeback(tx: DisputeTx, chargeId: string, disputeId: string): Promise<void>;
}

const EMPTY_EVIDENCE: DisputeDoc["evidence"] = {
  customer_name: null,
  customer_email_address: null,
  product_description: null,
  shipping_carrier: null,
  shipping_tracking_number: null,
  refund_policy: null,
  cancellation_policy: null,
  uncategorized_text: null,
};

/** Another instance's pass opened this scheduled dispute first. */
class ClaimLost extends Error {}

export function createDisputes(deps: DisputesDeps): Disputes {
  const { store, clock, charges } = deps;
  const feeFor = (currency: string) => deps.fees[currency] ?? 0;
  const dueBy = (livemode: boolean) => iso(new Date(clock.now(livemode).getTime() + deps.evidenceSeconds * 1000));

  async function load(livemode: boolean, id: string): Promise<DisputeDoc> {
    return inEnvironment(await store.get("disputes", id), livemode, "dispute", id);
  }

  /**
   * Sends the merchant's answer to a dispute the acquirer reported (Adyen's: it has `acquirer_ref`) to the
   * acquirer, before the answer is recorded: defended (evidence submitted) or accepted. Keyed on the dispute
   * and the answer, so a retry after a crash or a time-out sends the same call, which the acquirer applies
   * once. Disputes the sandbox made itself, and acquirers without a disputes API, send nothing.
   */
  async function acquirerResponse(dispute: DisputeDoc, answer: "defend" | "accept"): Promise<void> {
    const reference = dispute.acquirer_ref;
    if (!reference) return;
    const acquirer = dispute.livemode ? deps.acquirers?.live : deps.acquirers?.sandbox;
    const send = answer === "defend" ? acquirer?.defendDispute : acquirer?.acceptDispute;
    if (!acquirer || !send) return;
    try {
      await send.call(acquirer, { idempotencyKey: `${dispute.id}:${answer}`, disputeReference: reference });
    } catch (err) {
      if (err instanceof Error && err.name === "AcquirerRefused") {
        throw new DomainError(
          "invalid_state_transition",
          `The acquirer refused to ${answer} the dispute: ${err.message}. Nothing was recorded.`,
          { cause: err },
        );
      }
      throw new DomainError(
        "conflict",
        `The dispute's ${answer === "defend" ? "defense" : "acceptance"} could not be confirmed by the acquirer; send the same request again (it is applied once). Nothing was recorded.`,
        { cause: err },
      );
    }
  }

  /** Moves a dispute through DISPUTE_MACHINE, conditionally on the status it was read in (a concurrent change: 409). */
  function move(
    tx: DisputeTx,
    dispute: DisputeDoc,
    to: DisputeStatus,
    set: Partial<Omit<DisputeDoc, "status">>,
    action: DisputeAction,
  ): Promise<DisputeDoc> {
    const at = iso(clock.now(dispute.livemode));
    const closing = CLOSED.includes(to) ? { closed_at: at, evidence_due_by: null } : {};
    return transition(tx, "disputes", "dispute", DISPUTE_MACHINE, dispute, to, {
      set: { ...set, ...closing },
      at,
      refuse: (current) => refusal(current, action),
    });
  }

  /** The chargeback's money leaves the merchant's balance; returns the dispute as it is then. */
  async function withdraw(tx: DisputeTx, dispute: DisputeDoc): Promise<{ txns: string[]; fee: number }> {
    const fee = feeFor(dispute.currency);
    const txns = await postDisputeWithdrawal(tx, clock, {
      livemode: dispute.livemode,
      merchantId: dispute.merchant_id,
      currency: dispute.currency,
      disputeId: dispute.id,
      amount: dispute.amount,
      fee,
    });
    return { txns, fee };
  }

  /**
   * Opens a dispute on a captured charge, as the cardholder's bank does: a chargeback (`needs_response`,
   * its amount and fee withdrawn at once) or an inquiry (`warning_needs_response`, nothing moved). Used by
   * the sandbox helper (a caller) and the test cards' job (none); `alongside` runs inside the opening's
   * transaction first (the job's claim of its schedule, so the two commit together or not at all).
   */
  async function open(
    caller: Caller | null,
    livemode: boolean,
    chargeId: string,
    input: { reason?: DisputeReason; inquiry?: boolean; acquirerRef?: string },
    alongside?: (tx: DisputeTx) => Promise<void>,
  ): Promise<DisputeDoc> {
    const charge = await charges.load(livemode, chargeId);
    const refused = charges.notDisputable(charge);
    if (refused) throw refused;
    const inquiry = input.inquiry ?? false;
    const at = clock.createdAt(livemode);
    const id = newId("dp");
    const start: DisputeDoc = {
      id,
      livemode,
      created_at: at,
      updated_at: at,
      charge_id: charge.id,
      merchant_id: charge.merchant_id,
      amount: charge.amount_captured - charge.amount_refunded,
      currency: charge.currency,
      reason: input.reason ?? "fraudulent",
      status: DISPUTE_MACHINE.start(inquiry ? "warning_needs_response" : "needs_response"),
      evidence: EMPTY_EVIDENCE,
      evidence_due_by: dueBy(livemode),
      evidence_submitted_at: null,
      fee: 0,
      balance_transactions: [],
      card_fingerprint: charge.payment_method.fingerprint ?? null,
      metadata: {},
      closed_at: null,
      ...(input.acquirerRef ? { acquirer_ref: input.acquirerRef } : {}),
    };
    if (!inquiry) await ensureBalance(store, livemode, charge.merchant_id, charge.currency, clock);
    return commit(store, caller, async (tx) => {
      await alongside?.(tx);
      await charges.claim(tx, charge, id, !inquiry, true);
      const dispute = { ...start };
      if (!inquiry) {
        const { txns, fee } = await withdraw(tx, dispute);
        dispute.balance_transactions = txns;
        dispute.fee = fee;
      }
      await tx.insert("disputes", dispute);
      // The fraud engine's disputed_card and disputed_merchant signals: the card's and the merchant's next
      // charges carry the risk (fraud/rules.ts).
      if (dispute.reason === "fraudulent") {
        await recordFraudDispute(tx, clock, {
          livemode,
          fingerprint: dispute.card_fingerprint,
          merchantId: dispute.merchant_id,
          disputeId: id,
        });
      }
      await recordEvent(tx, clock, livemode, "dispute.created", eventFields(dispute));
      if (!inquiry) {
        await recordEvent(tx, clock, livemode, "dispute.funds_withdrawn", {
          ...eventFields(dispute),
          fee: dispute.fee,
        });
      }
      return dispute;
    });
  }

  /** A chargeback's end: the dispute closes as `to`; winning returns the amount and frees the charge for refunds. */
  async function decideChargeback(
    tx: DisputeTx,
    dispute: DisputeDoc,
    to: "won" | "lost",
    action: DisputeAction,
  ): Promise<DisputeDoc> {
    if (to === "lost") {
      const lost = await move(tx, dispute, "lost", {}, action);
      await recordEvent(tx, clock, lost.livemode, "dispute.closed", eventFields(lost));
      return lost;
    }
    const txn = await postDisputeReversal(tx, clock, {
      livemode: dispute.livemode,
      merchantId: dispute.merchant_id,
      currency: dispute.currency,
      disputeId: dispute.id,
      amount: dispute.amount,
    });
    const won = await move(
      tx,
      dispute,
      "won",
      { balance_transactions: [...dispute.balance_transactions, txn] },
      action,
    );
    // The cardholder's bank gave the money back to the merchant: the charge may be refunded again.
    await charges.releaseChargeback(tx, dispute.charge_id, dispute.id);
    await recordEvent(tx, clock, won.livemode, "dispute.funds_reinstated", eventFields(won));
    await recordEvent(tx, clock, won.livemode, "dispute.closed", eventFields(won));
    return won;
  }

  /** An inquiry the bank escalates into a chargeback: what is left of the charge is withdrawn now. */
  async function escalate(
    caller: Caller | null,
    dispute: DisputeDoc,
    alongside?: (tx: DisputeTx) => Promise<void>,
  ): Promise<DisputeDoc> {
    const charge = await charges.load(dispute.livemode, dispute.charge_id);
    const left = charge.amount_captured - charge.amount_refunded;
    if (left <= 0) {
      // The merchant refunded it all during the inquiry: nothing is left to take back.
      return commit(store, caller, async (tx) => {
        await alongside?.(tx);
        const closed = await move(tx, dispute, "warning_closed", {}, "resolve");
        await recordEvent(tx, clock, closed.livemode, "dispute.closed", eventFields(closed));
        return closed;
      });
    }
    await ensureBalance(store, dispute.livemode, dispute.merchant_id, dispute.currency, clock);
    return commit(store, caller, async (tx) => {
      await alongside?.(tx);
      await charges.claim(tx, charge, dispute.id, true, false);
      const { txns, fee } = await withdraw(tx, { ...dispute, amount: left });
      const escalated = await move(
        tx,
        dispute,
        "needs_response",
        {
          amount: left,
          fee,
          balance_transactions: [...dispute.balance_transactions, ...txns],
          evidence_due_by: dueBy(dispute.livemode),
          evidence_submitted_at: null,
        },
        "resolve",
      );
      await recordEvent(tx, clock, escalated.livemode, "dispute.updated", eventFields(escalated));
      await recordEvent(tx, clock, escalated.livemode, "dispute.funds_withdrawn", { ...eventFields(escalated), fee });
      return escalated;
    });
  }

  /**
   * The card network's decision on a dispute, with or without evidence: a chargeback is won (its amount
   * comes back) or lost; an inquiry decided for the merchant closes, against it escalates into a
   * chargeback. The sandbox helper's, and (issue 32) an acquirer's notification's.
   */
  async function resolve(
    caller: Caller | null,
    livemode: boolean,
    id: string,
    outcome: DisputeOutcome,
    alongside?: (tx: DisputeTx) => Promise<void>,
  ): Promise<DisputeDoc> {
    const dispute = await load(livemode, id);
    if (CLOSED.includes(dispute.status)) throw refusal(dispute, "resolve");
    if (dispute.status === "needs_response" || dispute.status === "under_review") {
      return commit(store, caller, async (tx) => {
        await alongside?.(tx);
        return decideChargeback(tx, dispute, outcome, "resolve");
      });
    }
    if (outcome === "lost") return escalate(caller, dispute, alongside);
    return commit(store, caller, async (tx) => {
      await alongside?.(tx);
      const closed = await move(tx, dispute, "warning_closed", {}, "resolve");
      await recordEvent(tx, clock, closed.livemode, "dispute.closed", eventFields(closed));
      return closed;
    });
  }

  /** One environment's scheduled disputes not yet opened (the test cards' job and the sandbox clock). */
  const scheduled = (livemode: boolean) => ({ livemode, done: false }) as const;

  return {
    load,
    open,
    resolve,
    /** Disputes as the acquirer reports them (its notifications: domain/acquirer-notifications). */
    acquirerOutcomes: acquirerDisputes({ store, clock, charges, open, resolve, load, move, decideChargeback }),

    /**
     * Runs inside every capture's transaction (charges' onCapture, wired in domain/index.ts): a sandbox
     * charge captured with a dispute test card gets its dispute scheduled, to be opened by
     * openScheduledDue when the sandbox clock reaches it.
     */
    async scheduleTestCardDispute(tx: DisputeTx, charge: ChargeDoc): Promise<void> {
      if (charge.livemode || !charge.processor_ref) return;
      const planned = deps.processor.disputeAfterCapture?.(charge.processor_ref) ?? null;
      if (!planned) return;
      const at = clock.createdAt(false);
      await tx.insert("scheduled_disputes", {
        id: charge.id,
        livemode: false,
        created_at: at,
        open_at: iso(new Date(clock.now(false).getTime() + planned.afterSeconds * 1000)),
        reason: planned.reason,
        inquiry: planned.inquiry,
        done: false,
      });
    },

    /** Opens every scheduled dispute of one environment whose time has come; returns how many opened. */
    async openScheduledDue(livemode: boolean, limit = 500): Promise<number> {
      const due = await store.findAll(
        "scheduled_disputes",
        { ...scheduled(livemode), open_at: { $lte: iso(clock.now(livemode)) } },
        limit,
      );
      let opened = 0;
      for (const plan of due) {
        // The schedule is claimed in the opening's own transaction, conditionally: two instances running
        // the job open it once, and a crash leaves it either opened and done or neither.
        const claim = async (tx: DisputeTx) => {
          if (!(await tx.update("scheduled_disputes", plan.id, { set: { done: true } }, { done: false }))) {
            throw new ClaimLost();
          }
        };
        try {
          await open(null, livemode, plan.id, { reason: plan.reason, inquiry: plan.inquiry }, claim);
          opened++;
        } catch (err) {
          if (err instanceof ClaimLost) continue;
          if (!(err instanceof DomainError)) throw err; // a later pass tries again
          // The charge can no longer be disputed (refunded in full meanwhile, or already disputed): none.
          await store.update("scheduled_disputes", plan.id, { set: { done: true } }, { done: false });
        }
      }
      return opened;
    },

    /** When the environment's next scheduled dispute opens after `after`, or null. */
    async nextScheduled(livemode: boolean, after: Date): Promise<string | null> {
      const [next] = await store.findAll(
        "scheduled_disputes",
        { ...scheduled(livemode), open_at: { $gt: iso(after) } },
        1,
        { by: "open_at", direction: "asc" },
      );
      return next?.open_at ?? null;
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    list: (
      caller: Caller,
      filter: Pick<QueryParams<"listDisputes">, "charge_id" | "merchant_id" | "status">,
      page: Page,
    ): Promise<PageResult<DisputeDoc>> =>
      store.list(
        "disputes",
        {
          livemode: caller.livemode,
          ...(filter.charge_id ? { charge_id: filter.charge_id } : {}),
          ...(filter.merchant_id ? { merchant_id: filter.merchant_id } : {}),
          ...(filter.status ? { status: filter.status } : {}),
        },
        page,
      ),

    /** updateDispute: evidence kept as a draft, or submitted (`submit: true`): the dispute goes under review. */
    async update(caller: Caller, id: string, input: DisputeUpdate): Promise<DisputeDoc> {
      const dispute = await load(caller.livemode, id);
      if (!NEEDS_RESPONSE.includes(dispute.status)) throw refusal(dispute, "update");
      const evidence = { ...dispute.evidence, ...input.evidence };
      const metadata = { ...dispute.metadata, ...input.metadata };
      const at = iso(clock.now(dispute.livemode));
      if (input.submit) await acquirerResponse(dispute, "defend");
      return commit(store, caller, async (tx) => {
        let updated: DisputeDoc | null;
        if (input.submit) {
          const to = dispute.status === "needs_response" ? "under_review" : "warning_under_review";
          updated = await move(tx, dispute, to, { evidence, metadata, evidence_submitted_at: at }, "update");
        } else {
          // A draft: the status stays, conditionally (a dispute closed meanwhile takes no evidence).
          updated = await tx.update(
            "disputes",
            dispute.id,
            { set: { evidence, metadata, updated_at: at } },
            { status: dispute.status },
          );
          if (!updated) {
            const current = await tx.get("disputes", dispute.id);
            throw current ? refusal(current, "update") : notFound("dispute", dispute.id);
          }
        }
        await recordEvent(tx, clock, updated.livemode, "dispute.updated", eventFields(updated));
        return updated;
      });
    },

    /** closeDispute: the merchant accepts; a chargeback is lost (its money stays withdrawn), an inquiry closed. */
    async close(caller: Caller, id: string): Promise<DisputeDoc> {
      const dispute = await load(caller.livemode, id);
      if (!NEEDS_RESPONSE.includes(dispute.status)) throw refusal(dispute, "close");
      await acquirerResponse(dispute, "accept");
      return commit(store, caller, async (tx) => {
        if (dispute.status === "needs_response") return decideChargeback(tx, dispute, "lost", "close");
        const closed = await move(tx, dispute, "warning_closed", {}, "close");
        await recordEvent(tx, clock, closed.livemode, "dispute.closed", eventFields(closed));
        return closed;
      });
    },

    /** sandboxOpenDispute. */
    async sandboxOpen(caller: Caller, chargeId: string, input: SandboxDisputeOpen): Promise<DisputeDoc> {
      sandboxOnly(caller.livemode, "charge", chargeId);
      return open(caller, caller.livemode, chargeId, input);
    },

    /** sandboxResolveDispute: the network's decision, whether or not evidence was submitted. */
    async sandboxResolve(caller: Caller, id: string, outcome: DisputeOutcome): Promise<DisputeDoc> {
      sandboxOnly(caller.livemode, "dispute", id);
      return resolve(caller, caller.livemode, id, outcome);
    },

    /**
     * The deadline job: every dispute of one environment still waiting for evidence past its
     * `evidence_due_by` (on that environment's clock) closes: a chargeback as lost, an inquiry as
     * warning_closed. Returns how many.
     */
    async expireDue(livemode: boolean, limit = 500): Promise<number> {
      const due = await store.findAll(
        "disputes",
        { livemode, status: { $in: [...NEEDS_RESPONSE] }, evidence_due_by: { $lte: iso(clock.now(livemode)) } },
        limit,
      );
      let closed = 0;
      for (const dispute of due) {
        const to = dispute.status === "needs_response" ? "lost" : "warning_closed";
        const done = await store.transaction(async (tx) => {
          // Conditional: a submission or another instance's pass got there first, and this one does nothing.
          const moved = await tryTransition(tx, "disputes", DISPUTE_MACHINE, dispute, to, {
            set: { closed_at: iso(clock.now(livemode)), evidence_due_by: null },
            at: iso(clock.now(livemode)),
            refuse: (current) => refusal(current, "close"),
          });
          if (!moved) return false;
          await recordEvent(tx, clock, livemode, "dispute.closed", eventFields(moved));
          return true;
        });
        if (done) closed++;
      }
      return closed;
    },

    /** When the environment's next evidence deadline passes after `after` (the sandbox clock steps to it), or null. */
    async nextDeadline(livemode: boolean, after: Date): Promise<string | null> {
      const [next] = await store.findAll(
        "disputes",
        { livemode, status: { $in: [...NEEDS_RESPONSE] }, evidence_due_by: { $gt: iso(after) } },
        1,
        { by: "evidence_due_by", direction: "asc" },
      );
      return next?.evidence_due_by ?? null;
    },
  };
}

/** The disputes area's service (spec/resources/disputes.tsp). */
export interface Disputes {
  load: (livemode: boolean, id: string) => Promise<DisputeDoc>;
  open: (
    caller: Caller | null,
    livemode: boolean,
    chargeId: string,
    input: {
      reason?: DisputeReason;
      inquiry?: boolean;
      acquirerRef?: string;
    },
    alongside?: (tx: DisputeTx) => Promise<void>,
  ) => Promise<DisputeDoc>;
  resolve: (
    caller: Caller | null,
    livemode: boolean,
    id: string,
    outcome: DisputeOutcome,
    alongside?: (tx: DisputeTx) => Promise<void>,
  ) => Promise<DisputeDoc>;
  /** What the acquirer reports of disputes (its notifications: domain/acquirer-notifications). */
  acquirerOutcomes: AcquirerDisputes;
  /**
   * Runs inside every capture's transaction (charges' onCapture, wired in domain/index.ts): a sandbox
   * charge captured with a dispute test card gets its dispute scheduled, to be opened by
   * openScheduledDue when the sandbox clock reaches it.
   */
  scheduleTestCardDispute(tx: DisputeTx, charge: ChargeDoc): Promise<void>;
  /** Opens every scheduled dispute of one environment whose time has come; returns how many opened. */
  openScheduledDue(livemode: boolean, limit?: number): Promise<number>;
  /** When the environment's next scheduled dispute opens after `after`, or null. */
  nextScheduled(livemode: boolean, after: Date): Promise<string | null>;
  get: (caller: Caller, id: string) => Promise<DisputeDoc>;
  list: (
    caller: Caller,
    filter: Pick<QueryParams<"listDisputes">, "charge_id" | "merchant_id" | "status">,
    page: Page,
  ) => Promise<PageResult<DisputeDoc>>;
  /** updateDispute: evidence kept as a draft, or submitted (`submit: true`): the dispute goes under review. */
  update(caller: Caller, id: string, input: DisputeUpdate): Promise<DisputeDoc>;
  /** closeDispute: the merchant accepts; a chargeback is lost (its money stays withdrawn), an inquiry closed. */
  close(caller: Caller, id: string): Promise<DisputeDoc>;
  /** sandboxOpenDispute. */
  sandboxOpen(caller: Caller, chargeId: string, input: SandboxDisputeOpen): Promise<DisputeDoc>;
  /** sandboxResolveDispute: the network's decision, whether or not evidence was submitted. */
  sandboxResolve(caller: Caller, id: string, outcome: DisputeOutcome): Promise<DisputeDoc>;
  /**
   * The deadline job: every dispute of one environment still waiting for evidence past its
   * `evidence_due_by` (on that environment's clock) closes: a chargeback as lost, an inquiry as
   * warning_closed. Returns how many.
   */
  expireDue(livemode: boolean, limit?: number): Promise<number>;
  /** When the environment's next evidence deadline passes after `after` (the sandbox clock steps to it), or null. */
  nextDeadline(livemode: boolean, after: Date): Promise<string | null>;
}
