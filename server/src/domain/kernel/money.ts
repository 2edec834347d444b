import currencyCodes from "currency-codes";
import { invalid } from "./errors.ts";

// Money is an integer count of minor units plus an ISO 4217 code. Exponents come from the maintained
// `currency-codes` data (JPY 0, USD 2, KWD 3); which currencies the platform accepts and the largest amount
// are configuration.

/** Codes ISO 4217 defines that are not money one can charge in (funds, metals, testing, "no currency"). */
const NOT_CHARGEABLE = new Set([
  "XXX",
  "XTS",
  "XAU",
  "XAG",
  "XPD",
  "XPT",
  "XDR",
  "XBA",
  "XBB",
  "XBC",
  "XBD",
  "XSU",
  "XUA",
]);

export function currencyExponent(code: string): number | undefined {
  const entry = currencyCodes.code(code);
  if (!entry || NOT_CHARGEABLE.has(code)) return undefined;
  return entry.digits;
}

export interface MoneyRules {
  /** Upper-case ISO 4217 codes the platform accepts. */
  supportedCurrencies: ReadonlySet<string>;
  /** The largest amount of one charge, in major units (e.g. 999999 means USD 999,999.00 and JPY 999,999). */
  maxAmountMajor: number;
}

/** Checks the list of supported currencies at start-up: every one must be a real ISO 4217 currency. */
export function parseCurrencyList(list: string): string[] {
  const codes = list
    .split(",")
    .map((c) => c.trim().toUpperCase())
    .filter(Boolean);
  const unknown = codes.filter((c) => currencyExponent(c) === undefined);
  if (unknown.length > 0) throw new Error(`not ISO 4217 currencies: ${unknown.join(", ")}`);
  return codes;
}

/** The largest amount of one charge in `currency`, in minor units. */
export function maxMinorUnits(currency: string, rules: MoneyRules): number {
  return rules.maxAmountMajor * 10 ** (currencyExponent(currency) ?? 0);
}

/**
 * Throws a 400 naming `param` unless `amount` is a positive safe integer: the contract's MinorUnits
 * (spec/common/money.tsp). The HTTP validator checks it too, but the domain is also called by the CLI
 * and by jobs, so it holds the rule itself.
 */
export function assertMinorUnits(amount: number, param = "amount"): void {
  if (!Number.isSafeInteger(amount) || amount < 1) {
    throw invalid(param, "must be a positive integer number of minor units");
  }
}

/** Throws a 400 naming `amount` or `currency` unless the pair is chargeable here. */
export function assertMoney(amount: number, currency: string, rules: MoneyRules, amountParam = "amount"): void {
  if (currencyExponent(currency) === undefined) throw invalid("currency", `${currency} is not an ISO 4217 currency`);
  if (!rules.supportedCurrencies.has(currency)) {
    throw invalid(
      "currency",
      `${currency} is not supported here (supported: ${[...rules.supportedCurrencies].join(", ")})`,
    );
  }
  assertMinorUnits(amount, amountParam);
  const max = maxMinorUnits(currency, rules);
  if (amount > max) throw invalid(amountParam, `must be at most ${max} (minor units of ${currency})`);
}
