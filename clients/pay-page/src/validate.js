// @ts-check
// What the hosted payment page checks before it sends anything (pay.js): the card number (digits, length,
// Luhn), the expiry (a real month, not past), the security code (3 digits, 4 for American Express), the
// holder, the optional e-mail and, for SEPA debits, the IBAN's check digits. The server checks all of it
// again (the vault, spec/resources/payment-links.tsp); these checks spare the payer a round trip and say
// what to fix next to the field. Every function is pure, so it is unit-tested without a browser.

/**
 * The digits of a card number as typed: spaces and dashes between groups are allowed.
 * @param {string} value
 */
export function digitsOf(value) {
  return String(value).replace(/[\s-]/g, "");
}

/**
 * The Luhn (mod 10) check; false for anything but a non-empty string of digits.
 * @param {string} digits
 */
export function luhnValid(digits) {
  if (!/^[0-9]+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * The brand as far as the page needs it (the security code's length and the number's grouping): the
 * server's vault makes the authoritative call.
 * @param {string} digits
 * @returns {"amex" | "visa" | "mastercard" | "other"}
 */
export function cardBrand(digits) {
  if (/^3[47]/.test(digits)) return "amex";
  if (/^4/.test(digits)) return "visa";
  if (/^(5[1-5]|2(2[2-9]|[3-6][0-9]|7[01]|720))/.test(digits)) return "mastercard";
  return "other";
}

/**
 * `4242424242424242` → `4242 4242 4242 4242`; American Express as 4-6-5. Non-digits are dropped.
 * @param {string} value
 */
export function formatCardNumber(value) {
  const digits = String(value)
    .replace(/[^0-9]/g, "")
    .slice(0, 19);
  const groups = cardBrand(digits) === "amex" ? [4, 6, 5] : [4, 4, 4, 4, 3];
  /** @type {string[]} */
  const parts = [];
  let at = 0;
  for (const size of groups) {
    if (at >= digits.length) break;
    parts.push(digits.slice(at, at + size));
    at += size;
  }
  return parts.join(" ");
}

/**
 * The expiry as it is typed, shaped as `MM / YY`: `1231` → `12 / 31`, `4` → `04 / ` (no month starts
 * with 4), `1/` → `01 / `, a four-digit year kept (`12 / 2031`). `previous` is the field's value before
 * this change: while deleting, no separator is added back, so the payer can delete through it.
 * @param {string} value
 * @param {string} [previous]
 */
export function formatExpiry(value, previous = "") {
  const text = String(value);
  const deleting = text.length < String(previous).length;
  let digits = text.replace(/[^0-9]/g, "");
  // A month of one digit: a slash typed after it, or a first digit no two-digit month starts with.
  if (/^\s*[0-9]\s*\//.test(text) || /^[2-9]/.test(digits)) digits = `0${digits}`;
  digits = digits.slice(0, 6);
  if (digits.length < 2) return digits;
  const month = digits.slice(0, 2);
  const year = digits.slice(2);
  if (year !== "") return `${month} / ${year}`;
  return deleting && !/\/\s+$/.test(text) ? month : `${month} / `;
}

/**
 * An error message for the card number, or null when it may be sent.
 * @param {string} value
 */
export function checkNumber(value) {
  const digits = digitsOf(value);
  if (digits === "") return "Enter your card number.";
  if (!/^[0-9]+$/.test(digits)) return "A card number has digits only.";
  if (digits.length < 12) return "This card number is too short.";
  if (digits.length > 19) return "This card number is too long.";
  if (!luhnValid(digits)) return "This card number is not valid. Check it for a typo.";
  return null;
}

/**
 * Reads an expiry typed as `MM/YY`, `MM / YY`, `MMYY` or `MM/YYYY`, valid through the last day of its
 * month (UTC, as the server counts it).
 * @param {string} value
 * @param {Date} now
 * @returns {{ error: string } | { month: number, year: number }}
 */
export function checkExpiry(value, now) {
  const text = String(value).trim();
  if (text === "") return { error: "Enter the expiry date (MM / YY)." };
  const match = /^([0-9]{1,2})\s*\/?\s*([0-9]{2}|[0-9]{4})$/.exec(text);
  if (!match) return { error: "Enter the expiry date as MM / YY." };
  const month = Number(match[1]);
  const yearText = match[2] ?? "";
  const year = yearText.length === 2 ? 2000 + Number(yearText) : Number(yearText);
  if (month < 1 || month > 12) return { error: "The month must be from 01 to 12." };
  const thisYear = now.getUTCFullYear();
  const thisMonth = now.getUTCMonth() + 1;
  if (year < thisYear || (year === thisYear && month < thisMonth)) return { error: "This card has expired." };
  if (year > 2100) return { error: "Check the expiry year." };
  return { month, year };
}

/**
 * An error message for the security code, or null.
 * @param {string} value
 * @param {string} brand
 */
export function checkCvc(value, brand) {
  const size = brand === "amex" ? 4 : 3;
  if (!new RegExp(`^[0-9]{${size}}$`).test(String(value).trim())) {
    return `Enter the ${size}-digit security code${brand === "amex" ? " (on the front of the card)" : " (on the back of the card)"}.`;
  }
  return null;
}

/**
 * An error message for the name on the card, or null.
 * @param {string} value
 */
export function checkHolder(value) {
  const name = String(value).trim();
  if (name === "") return "Enter the name on the card.";
  if (name.length > 200) return "The name is too long.";
  return null;
}

/**
 * An error message for the optional e-mail address, or null (blank is fine).
 * @param {string} value
 */
export function checkEmail(value) {
  const email = String(value).trim();
  if (email === "") return null;
  if (email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    return "Enter a valid e-mail address, or leave it blank.";
  return null;
}

/**
 * An error message for an IBAN (shape and ISO 7064 mod-97 check digits), or null.
 * @param {string} value
 */
export function checkIban(value) {
  const iban = String(value).replace(/\s/g, "").toUpperCase();
  if (iban === "") return "Enter your IBAN.";
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/.test(iban)) return "An IBAN starts with a country code and two digits.";
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const chunk = code >= 65 ? String(code - 55) : ch;
    for (const d of chunk) remainder = (remainder * 10 + Number(d)) % 97;
  }
  return remainder === 1 ? null : "This IBAN is not valid. Check it for a typo.";
}
