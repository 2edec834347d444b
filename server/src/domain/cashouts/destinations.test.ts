import { describe, expect, it } from "vitest";
import { DomainError } from "../kernel/errors.ts";
import {
  abaRoutingValid,
  accountOf,
  type Destination,
  type DestinationInput,
  maskPixKey,
  validateDestination,
  viewOf,
} from "./destinations.ts";

// The destination validators at their edges (spec/resources/cashouts.tsp, CashoutDestinationInput).

/** The DomainError a call throws (fails the test if it throws nothing or something else). */
function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

const holder = "Acme Coffee Roasters";
const iban = (value: string): Extract<DestinationInput, { type: "iban" }> => ({
  type: "iban",
  iban: value,
  account_holder: holder,
});
const us = (routing: string, account = "000123456789"): Extract<DestinationInput, { type: "us_bank_account" }> => ({
  type: "us_bank_account",
  routing_number: routing,
  account_number: account,
  account_holder: holder,
});
const pix = (key: string, key_type?: "cpf" | "cnpj" | "email" | "phone" | "evp"): DestinationInput => ({
  type: "pix",
  key,
  key_type,
});
const clabe = (value: string): DestinationInput => ({ type: "clabe", clabe: value, account_holder: holder });

describe("ABA routing numbers (hand-written check)", () => {
  it("accepts numbers whose weighted digits sum to a multiple of 10 under an assigned prefix", () => {
    for (const routing of ["110000000", "011000015", "021000021", "121000358", "026009593", "322271627"]) {
      expect(abaRoutingValid(routing), routing).toBe(true);
    }
  });

  it("refuses a wrong check digit", () => {
    expect(abaRoutingValid("110000001")).toBe(false);
    expect(abaRoutingValid("021000022")).toBe(false);
  });

  /** Eight digits and the check digit that makes them a checksum-valid routing number. */
  function withCheckDigit(first8: string): string {
    const d = [...first8].map(Number);
    const partial =
      3 * ((d[0] ?? 0) + (d[3] ?? 0) + (d[6] ?? 0)) +
      7 * ((d[1] ?? 0) + (d[4] ?? 0) + (d[7] ?? 0)) +
      ((d[2] ?? 0) + (d[5] ?? 0));
    return `${first8}${(10 - (partial % 10)) % 10}`;
  }

  it("refuses prefixes the Federal Reserve does not assign, even with a valid check digit", () => {
    // 13-20, 33-60, 73-79 and 81-99 are unassigned.
    for (const prefix of ["13", "20", "33", "60", "73", "79", "81", "99"]) {
      const routing = withCheckDigit(`${prefix}123456`);
      expect(abaRoutingValid(routing), routing).toBe(false);
    }
    // The edges of each assigned range pass.
    for (const prefix of ["00", "12", "21", "32", "61", "72", "80"]) {
      const routing = withCheckDigit(`${prefix}123456`);
      expect(abaRoutingValid(routing), routing).toBe(true);
      const wrong = `${routing.slice(0, 8)}${(Number(routing[8]) + 1) % 10}`;
      expect(abaRoutingValid(wrong), wrong).toBe(false);
    }
  });

  it("wants exactly nine digits", () => {
    for (const routing of ["11000000", "1100000000", "11000000a", " 110000000", ""]) {
      expect(abaRoutingValid(routing), JSON.stringify(routing)).toBe(false);
    }
  });
});

describe("IBAN destinations (ibantools)", () => {
  it("normalizes spaces and case, and keeps the holder trimmed", () => {
    expect(validateDestination(iban("de89 3704 0044 0532 0130 00"), "EUR")).toEqual({
      type: "iban",
      iban: "DE89370400440532013000",
      account_holder: holder,
    });
    expect(validateDestination({ ...iban("GB82WEST12345698765432"), account_holder: "  Ada  " }, "GBP")).toMatchObject({
      account_holder: "Ada",
    });
  });

  it("takes any currency", () => {
    for (const currency of ["EUR", "USD", "GBP", "CHF"]) {
      expect(validateDestination(iban("DE89370400440532013000"), currency).type).toBe("iban");
    }
  });

  it("says why an IBAN is refused, naming destination.iban, never echoing it", () => {
    const cases: [string, RegExp][] = [
      ["DE88370400440532013000", /check digits/],
      ["DE8937040044053201300", /length and format/],
      ["XX89370400440532013000", /country code/],
      ["DE89 3704 0044 0532 0130 0!", /country code, two check digits/],
      ["12", /country code, two check digits/],
    ];
    for (const [value, why] of cases) {
      const err = refusal(() => validateDestination(iban(value), "EUR"));
      expect(err.code, value).toBe("invalid_request");
      expect(err.param, value).toBe("destination.iban");
      expect(err.message, value).toMatch(why);
      const account = value.replace(/ /g, "").slice(4);
      if (account.length > 4) expect(err.message).not.toContain(account);
    }
  });

  it("refuses a blank account holder", () => {
    const err = refusal(() => validateDestination({ ...iban("DE89370400440532013000"), account_holder: "  " }, "EUR"));
    expect(err.param).toBe("destination.account_holder");
  });
  it("keeps the holder's identity (Adyen's payout API needs it); refuses a date of birth that is no day or not past", () => {
    const identity = {
      entity_type: "company",
      email: " finance@shop.example ",
      nationality: "DE",
      date_of_birth: "1990-02-28",
    } as const;
    const withHolder = (date_of_birth: string) => ({
      ...iban("DE89370400440532013000"),
      holder: { ...identity, date_of_birth },
    });
    expect(validateDestination(withHolder("1990-02-28"), "EUR", "2026-11-28")).toMatchObject({
      holder: { entity_type: "company", email: "finance@shop.example", nationality: "DE", date_of_birth: "1990-02-28" },
    });
    expect(validateDestination(iban("DE89370400440532013000"), "EUR", "2026-11-28")).not.toHaveProperty("holder");
    for (const [day, why] of [
      ["1990-02-30", /calendar date/],
      ["2026-11-28", /in the past/],
      ["2030-01-01", /in the past/],
    ] as const) {
      const err = refusal(() => validateDestination(withHolder(day), "EUR", "2026-11-28"));
      expect(err.param, day).toBe("destination.holder.date_of_birth");
      expect(err.message, day).toMatch(why);
    }
  });
});

describe("US bank account destinations", () => {
  it("checks routing number, account digits (4 to 17) and the currency", () => {
    expect(validateDestination(us("110000000"), "USD")).toEqual({
      type: "us_bank_account",
      routing_number: "110000000",
      account_number: "000123456789",
      account_type: "checking",
      account_holder: holder,
    });
    expect(
      validateDestination({ ...us("110000000"), account_type: "savings" } as DestinationInput, "USD"),
    ).toMatchObject({ account_type: "savings" });
    expect(validateDestination(us("110000000", "1234"), "USD").type).toBe("us_bank_account");
    expect(validateDestination(us("110000000", "1".repeat(17)), "USD").type).toBe("us_bank_account");
    for (const account of ["123", "1".repeat(18), "1234-5678", "12 34"]) {
      expect(refusal(() => validateDestination(us("110000000", account), "USD")).param).toBe(
        "destination.account_number",
      );
    }
    expect(refusal(() => validateDestination(us("110000001"), "USD")).param).toBe("destination.routing_number");
    const currency = refusal(() => validateDestination(us("110000000"), "EUR"));
    expect(currency.param).toBe("currency");
    expect(currency.message).toMatch(/USD/);
  });
});

describe("pix destinations (@brazilian-utils)", () => {
  it("recognises each kind of key and stores its canonical form", () => {
    expect(validateDestination(pix("123.456.789-09"), "BRL")).toEqual({
      type: "pix",
      key: "12345678909",
      key_type: "cpf",
    });
    expect(validateDestination(pix("12.345.678/0001-95"), "BRL")).toMatchObject({
      key: "12345678000195",
      key_type: "cnpj",
    });
    expect(validateDestination(pix(" Ana@Example.COM "), "BRL")).toMatchObject({
      key: "ana@example.com",
      key_type: "email",
    });
    expect(validateDestination(pix("+55 11 98765-4321"), "BRL")).toMatchObject({
      key: "+5511987654321",
      key_type: "phone",
    });
    expect(validateDestination(pix("71C7D9BE-4B85-4E43-9F1C-1F3B8B4E9A2D"), "BRL")).toMatchObject({
      key: "71c7d9be-4b85-4e43-9f1c-1f3b8b4e9a2d",
      key_type: "evp",
    });
  });

  it("refuses a CPF or CNPJ whose check digits are wrong, and other non-keys", () => {
    for (const key of ["123.456.789-00", "111.111.111-11", "12.345.678/0001-90", "not a key", "+1 415 555 0100"]) {
      const err = refusal(() => validateDestination(pix(key), "BRL"));
      expect(err.param, key).toBe("destination.key");
      expect(err.message).not.toContain(key);
    }
  });

  it("holds a declared key_type to the kind the key is", () => {
    expect(validateDestination(pix("123.456.789-09", "cpf"), "BRL").type).toBe("pix");
    const err = refusal(() => validateDestination(pix("ana@example.com", "phone"), "BRL"));
    expect(err.param).toBe("destination.key_type");
    expect(err.message).toMatch(/email key, not phone/);
  });

  it("pays in BRL only", () => {
    expect(refusal(() => validateDestination(pix("ana@example.com"), "USD")).param).toBe("currency");
  });
});

describe("CLABE destinations (clabe-validator)", () => {
  it("accepts a CLABE with its check digit, spaces allowed", () => {
    expect(validateDestination(clabe("002 010 07777777777 1"), "MXN")).toEqual({
      type: "clabe",
      clabe: "002010077777777771",
      account_holder: holder,
    });
  });

  it("refuses a wrong check digit, an unknown bank, a wrong length, naming destination.clabe", () => {
    const cases: [string, RegExp][] = [
      ["002010077777777772", /check digit/],
      ["999010077777777779", /bank|check digit/],
      ["00201007777777777", /18 digits/],
      ["0020100777777777711", /18 digits/],
      ["00201007777777777a", /18 digits/],
    ];
    for (const [value, why] of cases) {
      const err = refusal(() => validateDestination(clabe(value), "MXN"));
      expect(err.param, value).toBe("destination.clabe");
      expect(err.message, value).toMatch(why);
    }
    expect(refusal(() => validateDestination(clabe("002010077777777771"), "USD")).param).toBe("currency");
  });
});

describe("what is shown of a destination", () => {
  const shown = (d: Destination) => viewOf(d);

  it("masks an IBAN but its country, check digits and last four characters", () => {
    expect(shown({ type: "iban", iban: "DE89370400440532013000", account_holder: holder })).toEqual({
      type: "iban",
      masked: "DE89 **** **** **** **30 00",
      last4: "3000",
      account_holder: holder,
      country: "DE",
    });
  });

  it("masks a US account but its last four digits; the routing number is a bank's public id", () => {
    expect(
      shown({
        type: "us_bank_account",
        routing_number: "110000000",
        account_number: "000123456789",
        account_type: "checking",
        account_holder: holder,
      }),
    ).toEqual({
      type: "us_bank_account",
      masked: "********6789",
      last4: "6789",
      account_holder: holder,
      routing_number: "110000000",
      account_type: "checking",
    });
  });

  it("masks a CLABE but its bank code and last four digits", () => {
    expect(shown({ type: "clabe", clabe: "002010077777777771", account_holder: holder })).toMatchObject({
      masked: "002***********7771",
      last4: "7771",
      bank_code: "002",
    });
  });

  it("masks each kind of pix key", () => {
    expect(maskPixKey("12345678909", "cpf")).toBe("***.456.789-**");
    expect(maskPixKey("12345678000195", "cnpj")).toBe("12.345.678/****-**");
    expect(maskPixKey("ana@example.com", "email")).toBe("a***@example.com");
    expect(maskPixKey("ada.lovelace@example.com", "email")).toBe("a***********@example.com");
    expect(maskPixKey("+5511987654321", "phone")).toBe("+55 11 *****-4321");
    expect(maskPixKey("71c7d9be-4b85-4e43-9f1c-1f3b8b4e9a2d", "evp")).toBe("71c7d9be-****-****-****-********9a2d");
    expect(shown({ type: "pix", key: "12345678909", key_type: "cpf" })).toEqual({
      type: "pix",
      masked: "***.456.789-**",
      last4: "8909",
      account_holder: null,
      key_type: "cpf",
    });
  });

  it("never shows the whole account identifier", () => {
    const destinations: Destination[] = [
      { type: "iban", iban: "DE89370400440532013000", account_holder: holder },
      {
        type: "us_bank_account",
        routing_number: "110000000",
        account_number: "000123456789",
        account_type: "checking",
        account_holder: holder,
      },
      { type: "clabe", clabe: "002010077777777771", account_holder: holder },
      { type: "pix", key: "12345678909", key_type: "cpf" },
      { type: "pix", key: "+5511987654321", key_type: "phone" },
    ];
    for (const d of destinations) {
      expect(JSON.stringify(viewOf(d)), accountOf(d)).not.toContain(accountOf(d));
    }
  });
});
