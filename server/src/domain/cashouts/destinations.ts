import { getPixKeyInfo } from "@brazilian-utils/brazilian-utils/get-pix-key-info";
import type { components } from "@payments/contract/types";
import { clabe as clabeCheck } from "clabe-validator";
import { electronicFormatIBAN, ValidationErrorsIBAN, validateIBAN } from "ibantools";
import { invalid } from "../kernel/errors.ts";
import type { DestinationType, DestinationView, PixKeyType } from "./records.ts";

// Cashout destinations (spec/resources/cashouts.tsp, CashoutDestinationInput): each kind is checked by
// its own rules, with maintained libraries where one fits: IBANs with `ibantools` (check digits and
// each country's BBAN format), pix keys with `@brazilian-utils/brazilian-utils` (CPF/CNPJ check digits,
// e-mail, +55 mobile numbers, random keys, normalized to the DICT's canonical form), CLABEs with
// `clabe-validator` (check digit, bank and city codes). The ABA routing-number check is written here:
// the maintained package for it (braintree's us-bank-account-validator 1.1) compares only the first
// digit against the Federal Reserve prefixes and accepts account numbers that are not digits.
//
// Messages never repeat the account number or key: they name the field and what is wrong with it.

/** A destination as a request gives it (the contract's CashoutDestinationInput). */
export type DestinationInput = components["schemas"]["CashoutDestinationInput"];

/**
 * The account holder's identity an acquirer's payout API may require (PayoutAccountHolder in the
 * contract; Adyen's Payout v50 does). Travels only sealed with the destination, never shown.
 */
export interface AccountHolder {
  entity_type: "company" | "individual";
  email: string;
  nationality: string;
  date_of_birth: string;
}

/** A checked destination in canonical form: what the payout rail needs. Stored only sealed. */
export type Destination =
  | { type: "iban"; iban: string; account_holder: string; holder?: AccountHolder }
  | {
      type: "us_bank_account";
      routing_number: string;
      account_number: string;
      account_type: "checking" | "savings";
      account_holder: string;
    }
  | { type: "pix"; key: string; key_type: PixKeyType }
  | { type: "clabe"; clabe: string; account_holder: string };

/** The currency each kind of destination is paid in; an IBAN account takes any supported currency. */
export const DESTINATION_CURRENCY: Readonly<Partial<Record<DestinationType, string>>> = {
  us_bank_account: "USD",
  pix: "BRL",
  clabe: "MXN",
};

/**
 * The ABA routing transit number check: nine digits, a first pair the Federal Reserve assigns (00-12
 * banks and the US government, 21-32 thrift institutions, 61-72 electronic transactions, 80 traveler's
 * checks), and the weighted check digit: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10).
 */
export function abaRoutingValid(routing: string): boolean {
  if (!/^[0-9]{9}$/.test(routing)) return false;
  const prefix = Number(routing.slice(0, 2));
  const assigned = prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  if (!assigned) return false;
  const d = [...routing].map(Number);
  const at = (i: number) => d[i] ?? 0;
  const sum = 3 * (at(0) + at(3) + at(6)) + 7 * (at(1) + at(4) + at(7)) + (at(2) + at(5) + at(8));
  return sum % 10 === 0;
}

function holder(value: string, param: string): string {
  const trimmed = value.trim();
  if (trimmed === "") throw invalid(param, "must not be blank");
  return trimmed;
}

/** Why ibantools refused an IBAN, in words; the most telling reason first. */
function ibanProblem(codes: ValidationErrorsIBAN[]): string {
  if (codes.includes(ValidationErrorsIBAN.NoIBANCountry)) return "the country code is not one that uses IBANs";
  if (codes.includes(ValidationErrorsIBAN.WrongBBANLength) || codes.includes(ValidationErrorsIBAN.WrongBBANFormat)) {
    return "the IBAN does not have its country's length and format";
  }
  if (
    codes.includes(ValidationErrorsIBAN.ChecksumNotNumber) ||
    codes.includes(ValidationErrorsIBAN.WrongIBANChecksum)
  ) {
    return "the IBAN's check digits do not match (mistyped?)";
  }
  if (codes.includes(ValidationErrorsIBAN.WrongAccountBankBranchChecksum)) {
    return "the account number inside the IBAN fails its national check digit";
  }
  return "is not a valid IBAN";
}

function checkIban(input: string): string {
  const iban = electronicFormatIBAN(input) ?? "";
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/.test(iban)) {
    throw invalid("destination.iban", "must be a country code, two check digits and the account (letters and digits)");
  }
  const result = validateIBAN(iban);
  if (!result.valid) throw invalid("destination.iban", ibanProblem(result.errorCodes));
  return iban;
}

/**
 * The holder's identity as given (the contract checks the e-mail's and the country's form); the date of
 * birth must be a real calendar day that has passed (`today`, on the environment's clock, when given).
 */
function checkHolder(input: AccountHolder, today: string | undefined): AccountHolder {
  const day = new Date(`${input.date_of_birth}T00:00:00Z`);
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== input.date_of_birth) {
    throw invalid("destination.holder.date_of_birth", "must be a calendar date written YYYY-MM-DD");
  }
  if (today !== undefined && input.date_of_birth >= today) {
    throw invalid("destination.holder.date_of_birth", "must be a date in the past");
  }
  return {
    entity_type: input.entity_type,
    email: input.email.trim(),
    nationality: input.nationality,
    date_of_birth: input.date_of_birth,
  };
}

function checkClabe(input: string): string {
  const clabe = input.replace(/ /g, "");
  if (!/^[0-9]{18}$/.test(clabe)) throw invalid("destination.clabe", "must be 18 digits");
  const result = clabeCheck.validate(clabe);
  if (!result.ok) {
    const why = !result.valid.format
      ? "the CLABE's check digit does not match (mistyped?)"
      : !result.valid.bank
        ? "the CLABE's first three digits are not a known bank's code"
        : "the CLABE's city code is not a known one for its bank";
    throw invalid("destination.clabe", why);
  }
  return clabe;
}

function checkPixKey(input: string, declared: PixKeyType | undefined): { key: string; key_type: PixKeyType } {
  const info = getPixKeyInfo(input);
  if (!info) {
    throw invalid(
      "destination.key",
      "is not a pix key: a CPF or CNPJ with valid check digits, an e-mail address, a mobile number written +55…, or a random key (UUID)",
    );
  }
  if (declared !== undefined && declared !== info.type) {
    throw invalid("destination.key_type", `the key is a ${info.type} key, not ${declared}`);
  }
  return { key: info.value, key_type: info.type };
}

/**
 * Checks a destination for a cashout in `currency` (`today`: the environment's date, YYYY-MM-DD, for the
 * holder's date of birth) and returns it in canonical form. Throws a 400 naming
 * the field at fault (`destination.iban`, `destination.routing_number`, …, or `currency` when the kind of
 * destination is not paid in it).
 */
export function validateDestination(input: DestinationInput, currency: string, today?: string): Destination {
  const required = DESTINATION_CURRENCY[input.type];
  if (required !== undefined && currency !== required) {
    throw invalid("currency", `a ${input.type} destination is paid in ${required}, not ${currency}`);
  }
  switch (input.type) {
    case "iban":
      return {
        type: "iban",
        iban: checkIban(input.iban),
        account_holder: holder(input.account_holder, "destination.account_holder"),
        ...(input.holder === undefined ? {} : { holder: checkHolder(input.holder, today) }),
      };
    case "us_bank_account": {
      if (!abaRoutingValid(input.routing_number)) {
        throw invalid(
          "destination.routing_number",
          "must be a 9-digit ABA routing number with a valid check digit and Federal Reserve prefix",
        );
      }
      if (!/^[0-9]{4,17}$/.test(input.account_number)) {
        throw invalid("destination.account_number", "must be 4 to 17 digits");
      }
      return {
        type: "us_bank_account",
        routing_number: input.routing_number,
        account_number: input.account_number,
        account_type: input.account_type ?? "checking",
        account_holder: holder(input.account_holder, "destination.account_holder"),
      };
    }
    case "pix":
      return { type: "pix", ...checkPixKey(input.key, input.key_type) };
    case "clabe":
      return {
        type: "clabe",
        clabe: checkClabe(input.clabe),
        account_holder: holder(input.account_holder, "destination.account_holder"),
      };
  }
}

/** `keep` leading and `tail` trailing characters visible, every other one starred (same length). */
function starMiddle(value: string, keep: number, tail: number): string {
  if (value.length <= keep + tail) return "*".repeat(value.length);
  return value.slice(0, keep) + "*".repeat(value.length - keep - tail) + value.slice(value.length - tail);
}

/** The pix key as shown: CPF `***.456.789-**` (the form Brazilian practice shows), e-mail `a****@example.com`. */
export function maskPixKey(key: string, type: PixKeyType): string {
  switch (type) {
    case "cpf":
      return `***.${key.slice(3, 6)}.${key.slice(6, 9)}-**`;
    case "cnpj":
      // The first eight characters identify the company in the public register; the branch and check digits are hidden.
      return `${key.slice(0, 2)}.${key.slice(2, 5)}.${key.slice(5, 8)}/****-**`;
    case "email": {
      const at = key.lastIndexOf("@");
      const local = key.slice(0, at);
      return `${local.slice(0, 1)}${"*".repeat(Math.max(local.length - 1, 3))}${key.slice(at)}`;
    }
    case "phone":
      // +55, the area code, then the subscriber number with its last four digits visible.
      return `${key.slice(0, 3)} ${key.slice(3, 5)} ${"*".repeat(key.length - 9)}-${key.slice(-4)}`;
    case "evp":
      return `${key.slice(0, 8)}-****-****-****-********${key.slice(-4)}`;
  }
}

/** The destination as the API shows it (CashoutDestination): masked, never the account number itself. */
export function viewOf(destination: Destination): DestinationView {
  switch (destination.type) {
    case "iban": {
      const { iban } = destination;
      const masked = starMiddle(iban, 4, 4).replace(/(.{4})(?=.)/g, "$1 ");
      return {
        type: "iban",
        masked,
        last4: iban.slice(-4),
        account_holder: destination.account_holder,
        country: iban.slice(0, 2),
      };
    }
    case "us_bank_account":
      return {
        type: "us_bank_account",
        masked: starMiddle(destination.account_number, 0, 4),
        last4: destination.account_number.slice(-4),
        account_holder: destination.account_holder,
        routing_number: destination.routing_number,
        account_type: destination.account_type,
      };
    case "pix":
      return {
        type: "pix",
        masked: maskPixKey(destination.key, destination.key_type),
        last4: destination.key.slice(-4),
        account_holder: null,
        key_type: destination.key_type,
      };
    case "clabe":
      return {
        type: "clabe",
        masked: starMiddle(destination.clabe, 3, 4),
        last4: destination.clabe.slice(-4),
        account_holder: destination.account_holder,
        bank_code: destination.clabe.slice(0, 3),
      };
  }
}

/** The account identifier of a destination, for the payout simulator's magic values. */
export function accountOf(destination: Destination): string {
  switch (destination.type) {
    case "iban":
      return destination.iban;
    case "us_bank_account":
      return destination.account_number;
    case "pix":
      return destination.key;
    case "clabe":
      return destination.clabe;
  }
}
