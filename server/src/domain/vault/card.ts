import type { components } from "@payments/contract/types";
import creditCardType from "credit-card-type";
import { luhnValid, maskPan } from "../kernel/card-number.ts";
import { DomainError, invalid } from "../kernel/errors.ts";

// Card checks for POST /v1/tokens (operation createToken, spec/resources/tokens.tsp): Luhn and brand
// checks, brands from a maintained library. Every message that concerns the number shows it only through
// maskPan (the card number appears nowhere in clear, not in errors either: docs/vault.md 'The vault'); the CVC
// is never echoed at all.

export type CardBrand = components["schemas"]["CardBrand"];

/** The range TokenCreate.card documents; a brand may narrow it. */
const MIN_DIGITS = 12;
const MAX_DIGITS = 19;
const ANY_LENGTH: readonly number[] = Array.from({ length: MAX_DIGITS - MIN_DIGITS + 1 }, (_, i) => MIN_DIGITS + i);

/**
 * credit-card-type's type ids → the contract's CardBrand. Brands the library knows but the contract
 * does not list (hiper, troy, naranja, verve) fall through to "unknown", like numbers it does not know.
 */
const BRANDS: ReadonlyMap<string, CardBrand> = new Map([
  ["visa", "visa"],
  ["mastercard", "mastercard"],
  ["american-express", "amex"],
  ["discover", "discover"],
  ["diners-club", "diners"],
  ["jcb", "jcb"],
  ["unionpay", "unionpay"],
  ["maestro", "maestro"],
  ["elo", "elo"],
  ["hipercard", "hipercard"],
  ["mir", "mir"],
]);

export interface BrandMatch {
  brand: CardBrand;
  /** Number lengths the brand issues; any of 12 to 19 when the brand is unknown. */
  lengths: readonly number[];
}

/** The card fields of a token request (the contract's TokenCreate, without the holder). */
export type CardInput = Omit<components["schemas"]["TokenCreate"], "holder">;

export interface ValidCard {
  /** Digits only. */
  pan: string;
  brand: CardBrand;
  first4: string;
  last4: string;
}

/** TokenCreate.card accepts spaces and dashes between digit groups; the PAN is the digits alone. */
export function normalizePan(input: string): string {
  return input.replace(/[ -]/g, "");
}

/** The library's answer for a number, uncached. */
function lookUpBrand(pan: string): BrandMatch {
  // For a full-length number the library narrows to its single best match (the most specific prefix).
  const match = creditCardType(pan)[0];
  const brand = match ? BRANDS.get(match.type) : undefined;
  if (!match || !brand) return { brand: "unknown", lengths: ANY_LENGTH };
  return { brand, lengths: match.lengths };
}

/**
 * The most digits any of the library's brand patterns reads (8 in credit-card-type 10.3; computed, so
 * an upgrade that adds longer patterns moves it too). The library compares only that many leading
 * digits, and for a number at least that long every pattern is decided, so a number's brand is a
 * function of its first BRAND_PREFIX_DIGITS digits.
 */
export const BRAND_PREFIX_DIGITS = Math.max(
  ...Object.values(creditCardType.types).flatMap((type) =>
    creditCardType
      .getTypeInfo(type)
      .patterns.flatMap((pattern) => (Array.isArray(pattern) ? pattern : [pattern]).map((n) => String(n).length)),
  ),
);

/**
 * Answers by that prefix (a BIN, not a card number), so the library's scan of every brand (about 37 µs,
 * cloning each brand's record) runs once per BIN instead of once per tokenization. Bounded: emptied
 * when full, as a busy vault sees a few thousand BINs at most.
 */
const brandsByPrefix = new Map<string, BrandMatch>();
const BRAND_CACHE_MAX = 10_000;

/** The brand by the number's prefix, and the lengths that brand issues. */
export function detectBrand(pan: string): BrandMatch {
  if (pan.length < BRAND_PREFIX_DIGITS) return lookUpBrand(pan);
  const prefix = pan.slice(0, BRAND_PREFIX_DIGITS);
  let match = brandsByPrefix.get(prefix);
  if (match === undefined) {
    match = lookUpBrand(pan);
    if (brandsByPrefix.size >= BRAND_CACHE_MAX) brandsByPrefix.clear();
    brandsByPrefix.set(prefix, match);
  }
  return match;
}

/** detectBrand without the cache: what the library itself says (tests compare the two). */
export const detectBrandUncached = lookUpBrand;

function cardError(param: string, message: string): DomainError {
  return new DomainError("invalid_card", message, { param, errors: [{ param, message }] });
}

function listLengths(lengths: readonly number[]): string {
  return lengths.length === 1 ? String(lengths[0]) : `${lengths.slice(0, -1).join(", ")} or ${lengths.at(-1)}`;
}

/**
 * Checks a TokenCreate body's card fields and returns what the vault keeps about the card. Throws
 * `invalid_card` naming the field (card, exp_month, exp_year, cvc) for a card that cannot be tokenized,
 * and `invalid_request` for expiry fields outside the contract's ranges.
 */
export function validateCard(input: CardInput, now: Date): ValidCard {
  const pan = normalizePan(input.card);
  if (!/^[0-9]+$/.test(pan)) {
    throw cardError("card", "The card number may contain only digits, spaces and dashes.");
  }
  if (pan.length < MIN_DIGITS || pan.length > MAX_DIGITS) {
    // Not masked but omitted: a number of the wrong length may show too much even through maskPan.
    throw cardError("card", `The card number must have ${MIN_DIGITS} to ${MAX_DIGITS} digits; it has ${pan.length}.`);
  }
  if (!luhnValid(pan)) {
    throw cardError("card", `The card number ${maskPan(pan)} fails the Luhn check.`);
  }
  const { brand, lengths } = detectBrand(pan);
  if (!lengths.includes(pan.length)) {
    throw cardError(
      "card",
      `The card number ${maskPan(pan)} has ${pan.length} digits; ${brand} card numbers have ${listLengths(lengths)}.`,
    );
  }

  const { exp_month, exp_year } = input;
  if (!Number.isInteger(exp_month) || exp_month < 1 || exp_month > 12) {
    throw invalid("exp_month", "must be an integer from 1 to 12.");
  }
  if (!Number.isInteger(exp_year) || exp_year < 2000 || exp_year > 2100) {
    throw invalid("exp_year", "must be a four-digit year from 2000 to 2100.");
  }
  // A card is valid through the last day of its expiry month. Months are compared in UTC so the
  // answer does not depend on the server's time zone.
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  const expiry = `${String(exp_month).padStart(2, "0")}/${exp_year}`;
  if (exp_year < year) throw cardError("exp_year", `The card expired at the end of ${expiry}.`);
  if (exp_year === year && exp_month < month) throw cardError("exp_month", `The card expired at the end of ${expiry}.`);

  if (input.cvc !== undefined) {
    // TokenCreate.cvc: 4 digits on amex, 3 on every other brand.
    const digits = brand === "amex" ? 4 : 3;
    if (input.cvc.length !== digits || !/^[0-9]+$/.test(input.cvc)) {
      throw cardError("cvc", `The security code must be ${digits} digits for a card of brand ${brand}.`);
    }
  }

  return { pan, brand, first4: pan.slice(0, 4), last4: pan.slice(-4) };
}
