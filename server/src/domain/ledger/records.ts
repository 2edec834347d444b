import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";

/**
 * One immutable money movement. `amount` is signed: credits positive, debits negative.
 * A merchant's balance in a bucket always equals the sum of its entries there.
 */
export interface LedgerEntryDoc extends BaseDoc {
  merchant_id: string;
  currency: string;
  bucket: "available" | "pending";
  amount: number;
  type: "capture" | "refund" | "settlement" | "cashout" | "cashout_reversal";
  /** The charge, refund, settled entry or cashout that caused it. */
  source_id: string;
  /** For pending capture credits: when they become available, and whether that has happened. */
  available_on: string | null;
  settled: boolean | null;
  /**
   * For pending capture credits: how much refunds took from this credit before it settled (0 to
   * `amount`); settlement moves only the rest to `available`. With `settled`, the only fields of an
   * entry that ever change.
   */
  drawn: number | null;
}

/** A merchant's balance in one currency; id `<merchant id>:<currency>`. Never negative. */
export interface BalanceDoc extends BaseDoc {
  merchant_id: string;
  currency: string;
  available: number;
  pending: number;
  updated_at: string;
}

export const ledgerCollections = {
  ledger_entries: collection<LedgerEntryDoc>([
    { fields: ["merchant_id", "currency"] },
    { fields: ["bucket", "settled", "available_on"] },
    { fields: ["source_id"] },
  ]),
  balances: collection<BalanceDoc>([{ fields: ["merchant_id"] }]),
};
