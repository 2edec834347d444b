import creditCardType from "credit-card-type";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { luhnValid } from "../kernel/card-number.ts";
import { DomainError } from "../kernel/errors.ts";
import { BRAND_PREFIX_DIGITS, detectBrand, detectBrandUncached, normalizePan, validateCard } from "./card.ts";

const NOW = new Date("2026-11-21T10:15:30Z");

describe("normalizePan", () => {
  it("strips spaces and dashes and nothing else", () => {
    expect(normalizePan("4242 4242-4242  4242")).toBe("4242424242424242");
    expect(normalizePan("4242.4242")).toBe("4242.4242");
  });
});

describe("luhnValid", () => {
  it("accepts numbers whose check digit is right", () => {
    for (const pan of ["4242424242424242", "378282246310005", "36227206271667", "123456789015"]) {
      expect(luhnValid(pan)).toBe(true);
    }
  });

  it("refuses a changed check digit, swapped digits and non-digits", () => {
    expect(luhnValid("4242424242424241")).toBe(false);
    expect(luhnValid("378282246310050")).toBe(false);
    expect(luhnValid("4242 4242 4242 4242")).toBe(false);
    expect(luhnValid("")).toBe(false);
  });
});

describe("detectBrand", () => {
  const cases: [string, string][] = [
    ["4242424242424242", "visa"],
    ["5555555555554444", "mastercard"],
    ["2223003122003222", "mastercard"],
    ["378282246310005", "amex"],
    ["6011111111111117", "discover"],
    ["36227206271667", "diners"],
    ["3566002020360505", "jcb"],
    ["6200000000000005", "unionpay"],
    ["6759649826438453", "maestro"],
    ["5066991111111118", "elo"],
    ["6062826786276634", "hipercard"],
    ["2200000000000004", "mir"],
    // Brands the library knows but the contract's CardBrand does not list.
    ["6370950000000005", "unknown"], // hiper
    ["5060990000000008", "unknown"], // verve
    ["9792000000000003", "unknown"], // troy
    ["1234567890123452", "unknown"],
  ];
  it.each(cases)("%s is %s", (pan, brand) => {
    expect(detectBrand(pan).brand).toBe(brand);
  });

  it("answers from the first BRAND_PREFIX_DIGITS digits as the library does from the whole number", () => {
    // Every accepted number (12 digits and up) is long enough for the prefix cache.
    expect(BRAND_PREFIX_DIGITS).toBeGreaterThanOrEqual(6);
    expect(BRAND_PREFIX_DIGITS).toBeLessThanOrEqual(12);
    // Each brand pattern's edges (a range's ends and the numbers just outside them), filled out to
    // every accepted length with different tails: cached and uncached answers agree on all of them.
    const prefixes = new Set<string>();
    for (const type of Object.values(creditCardType.types)) {
      for (const pattern of creditCardType.getTypeInfo(type).patterns) {
        for (const edge of Array.isArray(pattern) ? pattern : [pattern]) {
          for (const n of [edge - 1, edge, edge + 1]) if (n > 0) prefixes.add(String(n));
        }
      }
    }
    let checked = 0;
    for (const prefix of prefixes) {
      for (let length = 12; length <= 19; length++) {
        for (const tail of ["0", "9", "4"]) {
          const pan = prefix.padEnd(length, tail).slice(0, length);
          expect(detectBrand(pan), pan).toEqual(detectBrandUncached(pan));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{12,19}$/), (pan) => {
        expect(detectBrand(pan)).toEqual(detectBrandUncached(pan));
      }),
      { numRuns: 2000 },
    );
  });

  it("gives the lengths the brand issues, and 12 to 19 when unknown", () => {
    expect(detectBrand("378282246310005").lengths).toEqual([15]);
    expect(detectBrand("4242424242424242").lengths).toEqual([16, 18, 19]);
    expect(detectBrand("1234567890123452").lengths).toEqual([12, 13, 14, 15, 16, 17, 18, 19]);
  });
});

describe("validateCard", () => {
  const good = { card: "4242 4242 4242 4242", exp_month: 12, exp_year: 2030, cvc: "123" };

  it("returns the digits, brand, first four and last four", () => {
    expect(validateCard(good, NOW)).toEqual({ pan: "4242424242424242", brand: "visa", first4: "4242", last4: "4242" });
    expect(validateCard({ card: "3782-822463-10005", exp_month: 1, exp_year: 2027, cvc: "1234" }, NOW)).toEqual({
      pan: "378282246310005",
      brand: "amex",
      first4: "3782",
      last4: "0005",
    });
  });

  it("accepts an unknown brand of any length from 12 to 19, and no cvc", () => {
    expect(validateCard({ card: "123456789015", exp_month: 12, exp_year: 2030 }, NOW).brand).toBe("unknown");
    expect(validateCard({ card: "1234567890123456785", exp_month: 12, exp_year: 2030 }, NOW).brand).toBe("unknown");
  });

  it("accepts a card through the last day of its expiry month, in UTC", () => {
    const lastMoment = new Date("2026-11-30T23:59:59.999Z");
    expect(validateCard({ ...good, exp_month: 11, exp_year: 2026 }, lastMoment).last4).toBe("4242");
  });

  // Each refusal: the card input, the field named, the code, and a fragment of the message.
  const refusals: [string, Record<string, unknown>, string, string, string][] = [
    ["a letter in the number", { card: "4242 4242 4242 424x" }, "card", "invalid_card", "only digits"],
    ["too few digits", { card: "42424242424" }, "card", "invalid_card", "12 to 19 digits; it has 11"],
    ["too many digits", { card: "123456789012345678906" }, "card", "invalid_card", "12 to 19 digits; it has 21"],
    ["a Luhn failure", { card: "4242424242424241" }, "card", "invalid_card", "4242********4241 fails the Luhn check"],
    ["a length the brand does not issue", { card: "424242424242424" }, "card", "invalid_card", "16, 18 or 19"],
    ["a 16-digit amex", { card: "3782822463100003", cvc: "1234" }, "card", "invalid_card", "amex card numbers have 15"],
    ["a past year", { exp_month: 12, exp_year: 2025 }, "exp_year", "invalid_card", "expired at the end of 12/2025"],
    ["a past month this year", { exp_month: 10, exp_year: 2026 }, "exp_month", "invalid_card", "end of 10/2026"],
    ["month 13", { exp_month: 13 }, "exp_month", "invalid_request", "1 to 12"],
    ["month 0", { exp_month: 0 }, "exp_month", "invalid_request", "1 to 12"],
    ["a two-digit year", { exp_year: 30 }, "exp_year", "invalid_request", "2000 to 2100"],
    ["a 4-digit cvc on visa", { cvc: "9876" }, "cvc", "invalid_card", "3 digits"],
    ["a 3-digit cvc on amex", { card: "378282246310005", cvc: "987" }, "cvc", "invalid_card", "4 digits"],
    ["a cvc with a letter", { cvc: "98a" }, "cvc", "invalid_card", "3 digits"],
  ];

  it.each(refusals)("refuses %s, naming the field, without the card number", (_, change, param, code, fragment) => {
    const input = { ...good, ...change } as typeof good;
    let thrown: unknown;
    try {
      validateCard(input, NOW);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    const err = thrown as DomainError;
    expect(err.code).toBe(code);
    expect(err.param).toBe(param);
    expect(err.message).toContain(fragment);

    // The card number is never in an error (docs/vault.md 'The vault'). No run of five or more digits at all (masked
    // numbers show groups of four; years have four), neither the raw input, nor the CVC.
    const shown = [err.message, ...(err.errors ?? []).map((e) => e.message)];
    for (const text of shown) {
      expect(text).not.toContain(input.card);
      expect(text).not.toContain(normalizePan(input.card));
      expect(text).not.toMatch(/[0-9]{5,}/);
      expect(text).not.toContain(input.cvc);
    }
  });
});
