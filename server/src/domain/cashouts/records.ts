import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { Status } from "../kernel/state-machine.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";
import type { SealedCard } from "../vault/crypto.ts";

export type CashoutStatus = "pending" | "in_transit" | "paid" | "failed" | "canceled";

export type CashoutFailureCode = "account_closed" | "no_account" | "declined" | "could_not_process";

export type DestinationType = "iban" | "us_bank_account" | "pix" | "clabe";

export type PixKeyType = "cpf" | "cnpj" | "email" | "phone" | "evp";

/** A cashout's destination as it may be shown (CashoutDestination in the contract): the account masked. */
export interface DestinationView {
  type: DestinationType;
  masked: string;
  last4: string;
  account_holder: string | null;
  country?: string;
  routing_number?: string;
  account_type?: "checking" | "savings";
  bank_code?: string;
  key_type?: PixKeyType;
}

/** Money a merchant sends out of its available balance (spec/resources/cashouts.tsp). */
export interface CashoutDoc extends BaseDoc {
  merchant_id: string;
  amount: number;
  currency: string;
  /** Written only through CASHOUT_MACHINE (state.ts). */
  status: Status<"cashout", CashoutStatus>;
  destination: DestinationView;
  /**
   * The full destination (account number, key), sealed like a card number under the vault keys with the
   * cashout id as associated data: only the payout rail opens it (domain/cashouts/cashouts.ts).
   */
  sealed_destination: SealedCard;
  failure_code: CashoutFailureCode | null;
  failure_message: string | null;
  description: string | null;
  metadata: Record<string, string>;
  /** The payout rail's reference, once the cashout was handed to it. */
  payout_ref: string | null;
  /**
   * When the destination's bank sent the paid cashout back (PAIDOUT_REVERSED: paid → failed); absent
   * otherwise. A late confirmation that it was paid then confirms what is recorded. Never shown.
   */
  returned_at?: string | null;
  /** When the payout job next acts on it (sends a pending one, asks about an in_transit one); null when final. */
  next_step_at: string | null;
  updated_at: string;
}

export const cashoutCollections = {
  cashouts: collection<CashoutDoc>([
    // listCashouts by merchant and by status: the page straight from the index, in order (issue 36).
    { fields: ["livemode", "merchant_id", "created_at", "id"] },
    { fields: ["livemode", "status", "created_at", "id"] },
    { fields: ["livemode", "status", "next_step_at"] },
  ]),
};

/** The store as the cashouts area sees it: its own collections and the kernel's (kernel/store.ts). */
export type CashoutStore = AreaStore<typeof cashoutCollections>;
export type CashoutTx = AreaTx<typeof cashoutCollections>;
export type CashoutDocs = AreaDocs<typeof cashoutCollections>;
