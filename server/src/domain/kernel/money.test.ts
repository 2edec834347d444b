import { describe, expect, it } from "vitest";
import { DomainError } from "./errors.ts";
import {
  assertMinorUnits,
  assertMoney,
  currencyExponent,
  type MoneyRules,
  maxMinorUnits,
  parseCurrencyList,
} from "./money.ts";

// Money is integer minor units of an ISO 4217 currency the platform supports, at most MAX_AMOUNT major
// units (spec/common/money.tsp: MinorUnits, CurrencyCode). The domain holds these rules itself: the
// CLI and the jobs call it without the HTTP validator in front.

const rules: MoneyRules = { supportedCurrencies: new Set(["USD", "JPY", "KWD", "XAU"]), maxAmountMajor: 999_999 };

function refusal(fn: () => void): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error("expected a DomainError, nothing was thrown");
}

/** ISO 4217 codes that are not money one can charge in: "no currency", testing, precious metals, funds, SDR. */
const NOT_MONEY = ["XXX", "XTS", "XAU", "XAG", "XPD", "XPT", "XDR", "XBA", "XBB", "XBC", "XBD", "XSU", "XUA"];

describe("currencyExponent", () => {
  it.each([
    ["USD", 2],
    ["EUR", 2],
    ["JPY", 0],
    ["KWD", 3],
    ["BRL", 2],
  ])("%s has %i decimals", (code, digits) => {
    expect(currencyExponent(code)).toBe(digits);
  });

  it.each(NOT_MONEY)("%s is an ISO 4217 code but not chargeable money", (code) => {
    expect(currencyExponent(code)).toBeUndefined();
  });

  it("knows nothing of codes ISO 4217 does not define", () => {
    expect(currencyExponent("ABC")).toBeUndefined();
    expect(currencyExponent("")).toBeUndefined();
  });
});

describe("parseCurrencyList (SUPPORTED_CURRENCIES)", () => {
  it("trims, upper-cases and drops empty entries", () => {
    expect(parseCurrencyList(" usd, Eur ,,JPY,")).toEqual(["USD", "EUR", "JPY"]);
  });

  it("refuses a list with a code that is not chargeable money", () => {
    expect(() => parseCurrencyList("USD,XAU")).toThrow(Error);
    expect(() => parseCurrencyList("USD,ABC")).toThrow(Error);
  });
});

describe("maxMinorUnits", () => {
  it("scales MAX_AMOUNT (major units) by the currency's exponent", () => {
    expect(maxMinorUnits("USD", rules)).toBe(99_999_900);
    expect(maxMinorUnits("JPY", rules)).toBe(999_999);
    expect(maxMinorUnits("KWD", rules)).toBe(999_999_000);
  });
});

describe("assertMinorUnits", () => {
  it.each([1, 2, 500, Number.MAX_SAFE_INTEGER])("accepts %d", (amount) => {
    expect(() => assertMinorUnits(amount)).not.toThrow();
  });

  it.each([0, -1, -500, 1.5, 0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1])(
    "refuses %d with a 400 naming the field",
    (amount) => {
      const err = refusal(() => assertMinorUnits(amount));
      expect(err.code).toBe("invalid_request");
      expect(err.param).toBe("amount");
      const named = refusal(() => assertMinorUnits(amount, "refund.amount"));
      expect(named.param).toBe("refund.amount");
    },
  );
});

describe("assertMoney", () => {
  it("accepts 1 and the maximum, in every exponent", () => {
    for (const currency of ["USD", "JPY", "KWD"]) {
      expect(() => assertMoney(1, currency, rules)).not.toThrow();
      expect(() => assertMoney(maxMinorUnits(currency, rules), currency, rules)).not.toThrow();
    }
  });

  it("refuses one minor unit over the maximum, naming the amount field", () => {
    const err = refusal(() => assertMoney(99_999_901, "USD", rules));
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe("amount");
    expect(refusal(() => assertMoney(1_000_000, "JPY", rules)).param).toBe("amount");
    expect(refusal(() => assertMoney(999_999_001, "KWD", rules, "total")).param).toBe("total");
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses the amount %d", (amount) => {
    const err = refusal(() => assertMoney(amount, "USD", rules, "total"));
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe("total");
  });

  it("refuses a code that is not money, even when configured as supported", () => {
    const err = refusal(() => assertMoney(100, "XAU", rules));
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe("currency");
  });

  it("refuses a code ISO 4217 does not define, and lower case", () => {
    expect(refusal(() => assertMoney(100, "ABC", rules)).param).toBe("currency");
    expect(refusal(() => assertMoney(100, "usd", rules)).param).toBe("currency");
  });

  it("refuses a real currency the platform does not support", () => {
    const err = refusal(() => assertMoney(100, "EUR", rules));
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe("currency");
  });

  it("checks the currency before the amount", () => {
    expect(refusal(() => assertMoney(0, "EUR", rules)).param).toBe("currency");
  });
});
