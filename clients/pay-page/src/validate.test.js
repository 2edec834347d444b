// @ts-check
import { describe, expect, it } from "vitest";
import {
  cardBrand,
  checkCvc,
  checkEmail,
  checkExpiry,
  checkHolder,
  checkIban,
  checkNumber,
  digitsOf,
  formatCardNumber,
  formatExpiry,
  luhnValid,
} from "./validate.js";

const NOW = new Date("2026-11-21T10:00:00Z");

describe("card number", () => {
  it("passes the test cards and fails a number one digit off", () => {
    for (const n of ["4242424242424242", "5555555555554444", "378282246310005", "4000000000000002"]) {
      expect(luhnValid(n), n).toBe(true);
      expect(checkNumber(n)).toBeNull();
    }
    expect(luhnValid("4242424242424241")).toBe(false);
    expect(checkNumber("4242 4242 4242 4241")).toMatch(/not valid/);
  });

  it("accepts spaces and dashes between groups, and nothing else", () => {
    expect(digitsOf("4242 4242-4242 4242")).toBe("4242424242424242");
    expect(checkNumber("4242 4242 4242 4242")).toBeNull();
    expect(checkNumber("4242.4242.4242.4242")).toMatch(/digits only/);
    expect(luhnValid("")).toBe(false);
    expect(luhnValid("42a2")).toBe(false);
  });

  it("asks for a number, and refuses lengths outside 12 to 19 digits", () => {
    expect(checkNumber("")).toMatch(/Enter/);
    expect(checkNumber("42424242424")).toMatch(/too short/); // 11 digits
    expect(checkNumber("424242424242")).toBeNull(); // 12 digits, Luhn-valid
    expect(checkNumber("424242424241")).toMatch(/not valid/); // 12 digits, one off
    expect(checkNumber("42424242424242424242")).toMatch(/too long/); // 20
  });

  it("groups digits as they are typed, American Express as 4-6-5", () => {
    expect(formatCardNumber("4242424242424242")).toBe("4242 4242 4242 4242");
    expect(formatCardNumber("42424")).toBe("4242 4");
    expect(formatCardNumber("378282246310005")).toBe("3782 822463 10005");
    expect(formatCardNumber("4242-42x42")).toBe("4242 4242");
    expect(formatCardNumber("1".repeat(25))).toHaveLength(19 + 4);
  });

  it("knows the brands that change the security code's length", () => {
    expect(cardBrand("378282246310005")).toBe("amex");
    expect(cardBrand("341111111111111")).toBe("amex");
    expect(cardBrand("4242424242424242")).toBe("visa");
    expect(cardBrand("5555555555554444")).toBe("mastercard");
    expect(cardBrand("2223003122003222")).toBe("mastercard");
    expect(cardBrand("6011111111111117")).toBe("other");
  });
});

describe("expiry", () => {
  it("reads MM/YY, MM / YY, MMYY and MM/YYYY", () => {
    for (const text of ["12/31", "12 / 31", "1231", "12/2031"]) {
      expect(checkExpiry(text, NOW), text).toEqual({ month: 12, year: 2031 });
    }
    expect(checkExpiry("1/30", NOW)).toEqual({ month: 1, year: 2030 });
  });

  it("is valid through the last day of its month, and expired after", () => {
    expect(checkExpiry("11/26", NOW)).toEqual({ month: 11, year: 2026 });
    expect(checkExpiry("10/26", NOW)).toEqual({ error: "This card has expired." });
    expect(checkExpiry("12/25", NOW)).toEqual({ error: "This card has expired." });
  });

  it("refuses a month that does not exist, a missing date and other shapes", () => {
    expect(checkExpiry("13/30", NOW)).toEqual({ error: "The month must be from 01 to 12." });
    expect(checkExpiry("00/30", NOW)).toEqual({ error: "The month must be from 01 to 12." });
    expect(checkExpiry("", NOW)).toMatchObject({ error: expect.stringMatching(/Enter/) });
    expect(checkExpiry("12-3", NOW)).toMatchObject({ error: expect.stringMatching(/MM \/ YY/) });
    expect(checkExpiry("12/2101", NOW)).toMatchObject({ error: expect.stringMatching(/year/) });
  });
});

describe("security code, holder, e-mail, IBAN", () => {
  it("wants 3 digits, and 4 for American Express", () => {
    expect(checkCvc("123", "visa")).toBeNull();
    expect(checkCvc("1234", "visa")).toMatch(/3-digit/);
    expect(checkCvc("12", "other")).toMatch(/3-digit/);
    expect(checkCvc("1234", "amex")).toBeNull();
    expect(checkCvc("123", "amex")).toMatch(/4-digit/);
    expect(checkCvc("12a", "visa")).toMatch(/3-digit/);
  });

  it("wants a name on the card", () => {
    expect(checkHolder("Ada Lovelace")).toBeNull();
    expect(checkHolder("   ")).toMatch(/name/);
    expect(checkHolder("x".repeat(201))).toMatch(/too long/);
  });

  it("takes a blank e-mail or a well-formed one", () => {
    expect(checkEmail("")).toBeNull();
    expect(checkEmail("ada@example.com")).toBeNull();
    expect(checkEmail("ada@example")).toMatch(/valid e-mail/);
    expect(checkEmail("ada example.com")).toMatch(/valid e-mail/);
  });

  it("checks an IBAN's mod-97 check digits", () => {
    expect(checkIban("DE89 3704 0044 0532 0130 00")).toBeNull();
    expect(checkIban("de89370400440532013000")).toBeNull();
    expect(checkIban("DE88 3704 0044 0532 0130 00")).toMatch(/not valid/);
    expect(checkIban("89 3704 0044")).toMatch(/country code/);
    expect(checkIban("")).toMatch(/Enter/);
  });
});

describe("expiry as it is typed", () => {
  /**
   * The field's values as a payer types `keys` one at a time, each formatted as the page does.
   * @param {string} keys
   */
  const typing = (keys) => {
    let value = "";
    return [...keys].map((key) => {
      value = formatExpiry(value + key, value);
      return value;
    });
  };

  it("shapes the digits as MM / YY while they are typed", () => {
    expect(typing("1231")).toEqual(["1", "12 / ", "12 / 3", "12 / 31"]);
    expect(typing("0627")).toEqual(["0", "06 / ", "06 / 2", "06 / 27"]);
    expect(typing("122031")).toEqual(["1", "12 / ", "12 / 2", "12 / 20", "12 / 203", "12 / 2031"]);
    // What the page reads back is the same expiry.
    expect(checkExpiry("12 / 31", NOW)).toEqual({ month: 12, year: 2031 });
  });

  it("takes a one-digit month: a first digit no month starts with, or a slash after the digit", () => {
    expect(typing("431")).toEqual(["04 / ", "04 / 3", "04 / 31"]);
    expect(typing("1/31")).toEqual(["1", "01 / ", "01 / 3", "01 / 31"]);
  });

  it("formats a pasted or autofilled expiry, and ignores letters", () => {
    expect(formatExpiry("12/31")).toBe("12 / 31");
    expect(formatExpiry("12/2031")).toBe("12 / 2031");
    expect(formatExpiry("12 / 31 9")).toBe("12 / 319");
    expect(formatExpiry("ab")).toBe("");
  });

  it("lets the payer delete through the separator", () => {
    expect(formatExpiry("12 / ", "12 / 3")).toBe("12 / ");
    expect(formatExpiry("12 /", "12 / ")).toBe("12");
    expect(formatExpiry("1", "12")).toBe("1");
  });
});
