import { isRecord } from "../../guards.ts";

// The platform's fees (issue 30; docs/money.md "Fees"): a schedule gives each payment method a percentage,
// in basis points, and a fixed amount per currency. A charge takes the rate of its method and currency
// when it is created (FeeRate, kept on the charge), so a schedule changed later applies only to new
// charges; the fee is taken when the charge is captured, from what was captured, and is not returned by
// refunds (as Stripe does): the merchant is credited the captured amount less the fee.

export const PAYMENT_METHOD_TYPES = ["card", "pix", "boleto", "oxxo", "spei", "sepa_debit"] as const;
export type PaymentMethodType = (typeof PAYMENT_METHOD_TYPES)[number];

/** One payment method's fee: a percentage in basis points (290 = 2.9 %) plus a fixed amount per currency. */
export interface MethodFee {
  percent_bps: number;
  /** Minor units per ISO 4217 code; a currency not listed has no fixed part. */
  fixed: Record<string, number>;
}

/** The schedule: a method not listed costs nothing. The default schedule is empty (no fees). */
export type FeeSchedule = Partial<Record<PaymentMethodType, MethodFee>>;

/** The rate one charge pays, fixed at its creation. */
export interface FeeRate {
  percent_bps: number;
  /** Minor units of the charge's currency. */
  fixed: number;
}

export const NO_FEE: FeeRate = { percent_bps: 0, fixed: 0 };

/** The rate of `method` in `currency` under `schedule`. */
export function rateFor(schedule: FeeSchedule, method: PaymentMethodType, currency: string): FeeRate {
  const fee = schedule[method];
  if (!fee) return NO_FEE;
  return { percent_bps: fee.percent_bps, fixed: fee.fixed[currency] ?? 0 };
}

/**
 * The fee on `amount` minor units at `rate`: the percentage rounded half up to a whole minor unit, plus
 * the fixed part, never more than `amount` (a fee cannot make a capture cost the merchant money). Integer
 * arithmetic only; an amount and rate the configuration allows stay far below 2^53.
 */
export function feeFor(rate: FeeRate | null | undefined, amount: number): number {
  if (!rate || amount <= 0) return 0;
  const percentage = Math.floor((amount * rate.percent_bps + 5000) / 10_000);
  return Math.min(amount, percentage + rate.fixed);
}

const isPaymentMethod = (name: string): name is PaymentMethodType =>
  PAYMENT_METHOD_TYPES.some((method) => method === name);

/**
 * `value` read as a fee schedule, in the stored shape (`fixed` always present), or why it is not one: the
 * configuration's check of FEE_SCHEDULE and setMerchantFeeSchedule's of its body (400 naming it).
 */
export function readFeeSchedule(value: unknown): FeeSchedule | string {
  if (!isRecord(value)) {
    return 'must be a JSON object of payment methods, e.g. {"card":{"percent_bps":290,"fixed":{"USD":30}}}';
  }
  const schedule: FeeSchedule = {};
  for (const [method, fee] of Object.entries(value)) {
    if (!isPaymentMethod(method)) {
      return `${JSON.stringify(method)} is not a payment method; the methods are ${PAYMENT_METHOD_TYPES.join(", ")}`;
    }
    if (!isRecord(fee)) return `${method}: must be an object`;
    const { percent_bps: bps, fixed = {}, ...rest } = fee;
    const unknown = Object.keys(rest);
    if (unknown.length > 0)
      return `${method}: unknown field(s) ${unknown.join(", ")}; the fields are percent_bps and fixed`;
    if (typeof bps !== "number" || !Number.isSafeInteger(bps) || bps < 0 || bps > 10_000) {
      return `${method}.percent_bps must be a whole number of basis points from 0 to 10000 (290 is 2.9 %)`;
    }
    if (!isRecord(fixed)) return `${method}.fixed must be an object`;
    const amounts: Record<string, number> = {};
    for (const [currency, amount] of Object.entries(fixed)) {
      if (!/^[A-Z]{3}$/.test(currency)) return `${method}.fixed: ${JSON.stringify(currency)} is not an ISO 4217 code`;
      if (typeof amount !== "number" || !Number.isSafeInteger(amount) || amount < 0) {
        return `${method}.fixed.${currency} must be a whole number of minor units, 0 or more`;
      }
      amounts[currency] = amount;
    }
    schedule[method] = { percent_bps: bps, fixed: amounts };
  }
  return schedule;
}
