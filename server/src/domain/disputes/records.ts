import type { components } from "@payments/contract/types";
import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { Status } from "../kernel/state-machine.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";

// Disputes as stored (spec/resources/disputes.tsp); serialize.ts names what the API shows.

export type DisputeStatus = components["schemas"]["DisputeStatus"];
export type DisputeReason = components["schemas"]["DisputeReason"];
export type DisputeEvidence = components["schemas"]["DisputeEvidence"];

/** A cardholder's dispute of a captured charge. Id `dp_…`. */
export interface DisputeDoc extends BaseDoc {
  charge_id: string;
  merchant_id: string;
  amount: number;
  currency: string;
  reason: DisputeReason;
  /** Written only through DISPUTE_MACHINE (state.ts). */
  status: Status<"dispute", DisputeStatus>;
  evidence: DisputeEvidence;
  /** While it needs a response (the deadline job's query); null once submitted or closed. */
  evidence_due_by: string | null;
  evidence_submitted_at: string | null;
  /** The dispute fee taken (0 until a chargeback's funds are withdrawn). */
  fee: number;
  /** The postings (`txn_…`) its money moved by, oldest first. */
  balance_transactions: string[];
  /** The card's fingerprint (the charge's), for the fraud engine's signal; null for other methods. */
  card_fingerprint: string | null;
  metadata: Record<string, string>;
  updated_at: string;
  closed_at: string | null;
  /**
   * The acquirer's reference of the dispute (Adyen's dispute pspReference), when the acquirer reported it
   * (domain/acquirer-notifications): what its defense or acceptance is sent under. Never shown.
   */
  acquirer_ref?: string | null;
  /**
   * The acquirer reported the issuer's second chargeback (Adyen's SECOND_CHARGEBACK, acquirer-outcomes.ts):
   * the dispute ends lost, and a reversal of the first chargeback that arrives after it is the earlier
   * event delivered late, not a new decision. Never shown.
   */
  second_chargeback?: boolean;
  /**
   * The pre-arbitration's outcome the acquirer reported (Adyen's PREARBITRATION_WON / _LOST,
   * acquirer-outcomes.ts): the dispute's last word, after which earlier stages delivered late only
   * confirm. Never shown.
   */
  prearbitration?: "won" | "lost";
}

/**
 * A dispute a sandbox test card will open on its charge (docs/disputes.md "Test cards"), once the
 * environment's clock reaches `open_at`: the dispute job opens it and marks it done. Id: the charge's.
 */
export interface ScheduledDisputeDoc extends BaseDoc {
  open_at: string;
  reason: DisputeReason;
  inquiry: boolean;
  done: boolean;
}

export const disputeCollections = {
  disputes: collection<DisputeDoc>([
    // listDisputes by merchant and by status: the page straight from the index, in order (issue 36); by
    // charge too: without created_at, id SQLite (no statistics) walks the listing index instead.
    { fields: ["livemode", "charge_id", "created_at", "id"] },
    { fields: ["livemode", "merchant_id", "created_at", "id"] },
    { fields: ["livemode", "status", "created_at", "id"] },
    { fields: ["livemode", "status", "evidence_due_by"] },
    { fields: ["livemode", "card_fingerprint"], sparse: true },
  ]),
  scheduled_disputes: collection<ScheduledDisputeDoc>([{ fields: ["livemode", "done", "open_at"] }]),
};

/** The store as the disputes area sees it: its own collections and the kernel's (kernel/store.ts). */
export type DisputeStore = AreaStore<typeof disputeCollections>;
export type DisputeTx = AreaTx<typeof disputeCollections>;
export type DisputeDocs = AreaDocs<typeof disputeCollections>;
