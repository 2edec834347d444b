import { z } from "zod";
import { type MoneyRules, parseCurrencyList } from "../domain/kernel/money.ts";
import { type FeeSchedule, readFeeSchedule } from "../domain/ledger/fees.ts";
import { isRecord, messageOf } from "../guards.ts";
import { group, int, setting } from "./kit.ts";

// Money: the currencies and amounts accepted, the platform's fees, and when captured money is available
// (docs/money.md).

export const moneySettings = group("money", {
  SUPPORTED_CURRENCIES: setting(
    z
      .string()
      .default("USD,EUR,GBP,BRL,MXN,JPY,KWD,CAD,AUD,CHF")
      .superRefine((list, ctx) => {
        try {
          parseCurrencyList(list);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: messageOf(err) });
        }
      }),
    "ISO 4217 codes the platform accepts, comma-separated.",
  ),
  MAX_AMOUNT: setting(
    int(1, 1_000_000_000).default(999_999),
    "The largest amount of one charge, in major units of its currency (so JPY 999999, USD 999999.00).",
  ),
  SETTLEMENT_DELAY_SECONDS: setting(
    int(0, 30 * 86400).default(2 * 86400),
    "How long production captures stay `pending` before they are `available`.",
  ),
  SANDBOX_SETTLEMENT_DELAY_SECONDS: setting(
    int(0, 30 * 86400).default(0),
    'The same for the sandbox: 0 (the default) makes captured money available at once; a delay keeps it `pending` until the sandbox clock reaches it (docs/sandbox-clock.md "Settlement in the sandbox").',
  ),
  FEE_SCHEDULE: setting(
    z
      .string()
      .default("{}")
      .superRefine((text, ctx) => {
        const schedule = feeSchedule(text);
        if (typeof schedule === "string") ctx.addIssue({ code: "custom", message: schedule });
      }),
    'The platform\'s fees, per payment method: a JSON object such as {"card":{"percent_bps":290,"fixed":{"USD":30}}} (2.9 % + USD 0.30 per card capture). Default `{}`: no fees. A charge keeps the rate in force when it was made (docs/money.md "Fees").',
  ),
  DISPUTE_FEES: setting(
    z
      .string()
      .default("{}")
      .superRefine((text, ctx) => {
        const fees = disputeFees(text);
        if (typeof fees === "string") ctx.addIssue({ code: "custom", message: fees });
      }),
    'The dispute fee, per currency in minor units, as a JSON object such as {"USD":1500,"EUR":1500}: taken from the merchant\'s balance with a chargeback\'s amount, and kept whatever the outcome (docs/disputes.md "Money"). A currency not listed pays none; default `{}`: no dispute fee.',
  ),
});

/** FEE_SCHEDULE read (ledger/fees.ts readFeeSchedule), or why it is not a fee schedule. */
export function feeSchedule(text: string): FeeSchedule | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'must be JSON, e.g. {"card":{"percent_bps":290,"fixed":{"USD":30}}}';
  }
  return readFeeSchedule(parsed);
}

/** DISPUTE_FEES read: three-letter currency codes to whole minor units, or why it is not that. */
export function disputeFees(text: string): Record<string, number> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'must be JSON, e.g. {"USD":1500,"EUR":1500}';
  }
  if (!isRecord(parsed)) return 'must be a JSON object of currency codes to minor units, e.g. {"USD":1500}';
  const fees: Record<string, number> = {};
  for (const [currency, fee] of Object.entries(parsed)) {
    if (!/^[A-Z]{3}$/.test(currency)) return `"${currency}" is not a three-letter currency code in capitals`;
    if (typeof fee !== "number" || !Number.isSafeInteger(fee) || fee < 0) {
      return `the ${currency} fee must be a whole number of minor units, 0 or more (got ${JSON.stringify(fee)})`;
    }
    fees[currency] = fee;
  }
  return fees;
}

/** The money rules (domain/kernel/money.ts): the accepted currencies and the largest amount. */
export function moneyRules(config: { SUPPORTED_CURRENCIES: string; MAX_AMOUNT: number }): MoneyRules {
  return {
    supportedCurrencies: new Set(parseCurrencyList(config.SUPPORTED_CURRENCIES)),
    maxAmountMajor: config.MAX_AMOUNT,
  };
}
