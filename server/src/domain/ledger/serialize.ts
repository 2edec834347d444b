import { entriesOf } from "../../guards.ts";
import type { Schemas } from "../kernel/operations.ts";
import type { FeeSchedule } from "./fees.ts";
import type { BalanceDoc, BalanceTransactionDoc, FeeOverrideDoc } from "./records.ts";

/**
 * A merchant's balances → the contract's Balance, currencies in alphabetical order. A chargeback may take
 * the stored `available` below zero (the overdraft rule, docs/money.md); /v1 shows `available` as never
 * negative, so the shortfall is shown as `owed` (present only then) and `available` as 0.
 */
export const balance = (merchantId: string, livemode: boolean, rows: BalanceDoc[]): Schemas["Balance"] => ({
  object: "balance",
  merchant_id: merchantId,
  livemode,
  balances: rows
    .map((b) => ({
      currency: b.currency,
      available: Math.max(0, b.available),
      pending: b.pending,
      ...(b.available < 0 ? { owed: -b.available } : {}),
    }))
    .sort((a, b) => a.currency.localeCompare(b.currency)),
});

/** A stored balance transaction → the contract's BalanceTransaction. */
export const balanceTransaction = (t: BalanceTransactionDoc): Schemas["BalanceTransaction"] => ({
  id: t.id,
  object: "balance_transaction",
  merchant_id: t.merchant_id,
  type: t.type,
  amount: t.amount,
  fee: t.fee,
  net: t.net,
  currency: t.currency,
  status: t.status,
  available_on: t.available_on,
  source: t.source_id,
  cashout_id: t.cashout_id,
  livemode: t.livemode,
  created_at: t.created_at,
});

/** A stored schedule → the contract's FeeSchedule (the methods in a fixed order). */
const feeSchedule = (schedule: FeeSchedule): Schemas["FeeSchedule"] => {
  const out: Schemas["FeeSchedule"] = {};
  for (const [method, fee] of entriesOf(schedule)) {
    if (fee) out[method] = { percent_bps: fee.percent_bps, fixed: { ...fee.fixed } };
  }
  return out;
};

/** A merchant's override (or none) and the platform's schedule → the contract's MerchantFeeSchedule. */
export const merchantFeeSchedule = ({
  merchant,
  override,
  platform,
}: {
  merchant: { id: string; livemode: boolean };
  override: FeeOverrideDoc | null;
  platform: FeeSchedule;
}): Schemas["MerchantFeeSchedule"] => ({
  object: "merchant_fee_schedule",
  merchant_id: merchant.id,
  override: override?.schedule ? feeSchedule(override.schedule) : null,
  effective: feeSchedule(override?.schedule ?? platform),
  livemode: merchant.livemode,
  updated_at: override?.updated_at ?? null,
});
