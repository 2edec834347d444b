import { DuplicateKeyError, type Where } from "../../store/port.ts";
import type { AppStore, AppTx } from "../collections.ts";
import type { Now } from "../kernel/caller.ts";
import { DomainError } from "../kernel/errors.ts";
import { newId } from "../kernel/ids.ts";
import { createdAt, iso } from "../kernel/time.ts";
import type { BalanceDoc, LedgerEntryDoc } from "./records.ts";

// Every money movement is an immutable ledger entry, written in the same transaction as the balance change
// and the state change that caused it. Balance updates are conditional, so no bucket ever goes below zero,
// whatever runs concurrently.

export const balanceId = (merchantId: string, currency: string) => `${merchantId}:${currency}`;

/**
 * Creates the merchant's balance in `currency` if it does not exist yet. Done outside the money
 * transaction: a duplicate-key failure inside a MongoDB transaction would abort it, while here the
 * loser of a race simply finds the winner's document.
 */
export async function ensureBalance(
  store: AppStore,
  livemode: boolean,
  merchantId: string,
  currency: string,
  now: Now,
) {
  const id = balanceId(merchantId, currency);
  if (await store.get("balances", id)) return;
  const at = createdAt(now());
  try {
    await store.insert("balances", {
      id,
      livemode,
      created_at: at,
      updated_at: at,
      merchant_id: merchantId,
      currency,
      available: 0,
      pending: 0,
    });
  } catch (err) {
    if (!(err instanceof DuplicateKeyError)) throw err;
  }
}

export interface Movement {
  livemode: boolean;
  merchantId: string;
  currency: string;
  bucket: "available" | "pending";
  /** Signed minor units: credits positive, debits negative. */
  amount: number;
  type: LedgerEntryDoc["type"];
  sourceId: string;
  availableOn?: string | null;
}

/**
 * Posts one movement inside `tx`: the entry and the balance change together. A debit larger than the
 * bucket throws `insufficient_balance`, which rolls the whole transaction back.
 */
export async function post(tx: AppTx, now: Now, movement: Movement): Promise<LedgerEntryDoc> {
  // Use cases validate amounts first; this is the last line before money moves: whole minor units only.
  if (!Number.isSafeInteger(movement.amount) || movement.amount === 0) {
    throw new Error(`ledger movement of ${movement.amount}: must be a non-zero integer of minor units`);
  }
  const at = createdAt(now());
  const id = balanceId(movement.merchantId, movement.currency);
  // A debit is conditional on the bucket covering it: the check and the decrement are one atomic update.
  const expect: Where<BalanceDoc> = movement.amount < 0 ? { [movement.bucket]: { $gte: -movement.amount } } : {};
  const updated = await tx.update(
    "balances",
    id,
    { inc: { [movement.bucket]: movement.amount }, set: { updated_at: at } },
    expect,
  );
  if (!updated) {
    if (!(await tx.get("balances", id))) throw new Error(`balance ${id} missing: ensureBalance must run first`);
    throw new DomainError(
      "insufficient_balance",
      `The merchant's ${movement.bucket} ${movement.currency} balance does not cover ${-movement.amount}.`,
      { param: "amount" },
    );
  }
  const entry: LedgerEntryDoc = {
    id: newId("le"),
    livemode: movement.livemode,
    created_at: at,
    merchant_id: movement.merchantId,
    currency: movement.currency,
    bucket: movement.bucket,
    amount: movement.amount,
    type: movement.type,
    source_id: movement.sourceId,
    available_on: movement.availableOn ?? null,
    settled: movement.bucket === "pending" && movement.amount > 0 ? false : null,
    drawn: movement.bucket === "pending" && movement.amount > 0 ? 0 : null,
  };
  await tx.insert("ledger_entries", entry);
  return entry;
}

/**
 * Takes up to `amount` for a refund of `chargeId` from that charge's capture credit still waiting in
 * `pending` (production, before settlement), inside `tx`: the credit's `drawn` rises and `pending`
 * falls by the same amount, conditionally, so a concurrent settlement or refund cannot take the same
 * money twice. Returns how much it took (0 when the credit has settled or there is none); the caller
 * debits the rest from `available`. Every bucket stays non-negative.
 */
export async function drawFromPendingCredit(
  tx: AppTx,
  now: Now,
  refund: {
    livemode: boolean;
    merchantId: string;
    currency: string;
    chargeId: string;
    refundId: string;
    amount: number;
  },
): Promise<number> {
  const credit = await tx.findOne("ledger_entries", {
    source_id: refund.chargeId,
    type: "capture",
    bucket: "pending",
    settled: false,
  });
  if (!credit) return 0;
  const drawn = credit.drawn ?? 0;
  const take = Math.min(refund.amount, credit.amount - drawn);
  if (take <= 0) return 0;
  const updated = await tx.update(
    "ledger_entries",
    credit.id,
    { set: { drawn: drawn + take } },
    { settled: false, drawn: credit.drawn },
  );
  if (!updated) return 0; // settled or drawn on meanwhile: the refund comes from `available`
  await post(tx, now, {
    livemode: refund.livemode,
    merchantId: refund.merchantId,
    currency: refund.currency,
    bucket: "pending",
    amount: -take,
    type: "refund",
    sourceId: refund.refundId,
  });
  return take;
}

/** Moves every pending credit whose time has come to `available` (the settlement job). Returns how many. */
export async function settleDue(store: AppStore, now: Now, limit = 500): Promise<number> {
  const due = await store.findAll(
    "ledger_entries",
    { bucket: "pending", settled: false, available_on: { $lte: iso(now()) } },
    limit,
  );
  let settled = 0;
  for (const credit of due) {
    const done = await store.transaction(async (tx) => {
      // Conditional: two instances running the job settle each credit once.
      const claimed = await tx.update("ledger_entries", credit.id, { set: { settled: true } }, { settled: false });
      if (!claimed) return false;
      // What refunds drew from the credit before settlement already left `pending`; the rest moves.
      const rest = claimed.amount - (claimed.drawn ?? 0);
      if (rest === 0) return true;
      const base = { livemode: credit.livemode, merchantId: credit.merchant_id, currency: credit.currency };
      await post(tx, now, { ...base, bucket: "pending", amount: -rest, type: "settlement", sourceId: credit.id });
      await post(tx, now, { ...base, bucket: "available", amount: rest, type: "settlement", sourceId: credit.id });
      return true;
    });
    if (done) settled++;
  }
  return settled;
}
