import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DomainError } from "./errors.ts";
import { holdsCardNumber, luhnValid, refuseCardNumbersInText } from "./free-text.ts";

// Free-text fields refuse card numbers (spec/main.tsp, "Card numbers go only where a card number is
// asked for"): what the detector finds and what it leaves alone, and the walk over a request body.

describe("luhnValid", () => {
  it("accepts numbers whose check digit is right, and nothing that is not all digits", () => {
    for (const n of ["4242424242424242", "378282246310005", "4222222222222", "6759649826438453128"]) {
      expect(luhnValid(n), n).toBe(true);
    }
    for (const n of ["4242424242424241", "6759649826438453123", "4242 4242 4242 4242", ""]) {
      expect(luhnValid(n), n).toBe(false);
    }
  });
});

describe("holdsCardNumber", () => {
  it("finds a card number of 13 to 19 digits, bare or grouped with any separator", () => {
    const found = [
      "4242424242424242",
      "4242 4242 4242 4242",
      "4242-4242-4242-4242",
      "4242.4242.4242.4242",
      "4242_4242_4242_4242",
      "4242/4242/4242/4242",
      "4242, 4242, 4242, 4242",
      "4242 - 4242 - 4242 - 4242",
      "4242\u00a04242\u00a04242\u00a04242",
      "4242\t4242\n4242\r\n4242",
      "4242%204242%204242%204242",
      "4242%2D4242%2D4242%2D4242",
      "4222222222222", // 13 digits
      "3782 822463 10005", // 15, grouped as printed on the card
      "6759649826438453128", // 19
    ];
    for (const text of found) expect(holdsCardNumber(text), JSON.stringify(text)).toBe(true);
  });

  it("finds one inside other text, next to other numbers", () => {
    const found = [
      "Order #1042 paid with 4242 4242 4242 4242, thanks",
      "Order 12, card 4242 4242 4242 4242",
      "4242424242424242 exp 12/31 cvc 123",
      "4242424242424242@example.com",
      "https://shop.example/thanks?card=4242424242424242",
      "https://shop.example/cards/4242-4242-4242-4242/receipt",
      "call 555 0100 or use 5555555555554444",
    ];
    for (const text of found) expect(holdsCardNumber(text), text).toBe(true);
  });

  it("leaves numbers that fail the Luhn check alone, phone numbers among them", () => {
    // The preconditions: each fails Luhn as a whole.
    const failing = ["4242424242424241", "5511912345678", "4412345678900"];
    for (const digits of failing) expect(luhnValid(digits)).toBe(false);
    const untouched = ["4242 4242 4242 4241", "+55 11 91234 5678", "+44 1234 567 8900"];
    for (const text of untouched) expect(holdsCardNumber(text), text).toBe(false);
  });

  it("leaves short numbers alone: dates, times, amounts, most phone numbers, 12 digits", () => {
    const untouched = [
      "2026-11-24",
      "2026-11-24 10:30:00",
      "2026-11-24T10:30:00.123Z",
      "1,234,567.89 USD",
      "+1 415 555 0100",
      "+44 20 7946 0958",
      "424242424242", // Luhn-valid, but 12 digits
      "order 1763720467",
      "fp_3f9c2a7be81d4c0f9a6e5d2b1c0a9f8e",
      "f47ac10b-58cc-4372-a567-0e02b2c3d479",
      "",
    ];
    for (const text of untouched) expect(holdsCardNumber(text), text).toBe(false);
  });

  it("takes digit groups whole: a single group longer than 19 digits is a reference, not a card", () => {
    expect(holdsCardNumber("42424242424242420000")).toBe(false);
    expect(holdsCardNumber("4242424242424242 0000")).toBe(true);
  });

  it("does not join digits across letters or across more than three separators", () => {
    expect(holdsCardNumber("4242a4242b4242c4242")).toBe(false);
    expect(holdsCardNumber("4242    4242    4242    4242")).toBe(false);
    expect(holdsCardNumber("4242   4242   4242   4242")).toBe(true);
  });

  it("finds every Luhn-valid number of 13 to 19 digits, however its groups are separated", () => {
    const separator = fc.constantFrom(" ", "-", ".", "  ", " - ", "%20", "/");
    const card = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 12, maxLength: 18 }).map((digits) => {
      const body = digits.join("");
      const check = [...Array(10).keys()].find((d) => luhnValid(`${body}${d}`)) as number;
      return `${body}${check}`;
    });
    fc.assert(
      fc.property(card, fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 6 }), separator, (pan, cuts, sep) => {
        // Split the number into groups at the given lengths, the rest in the last group.
        const groups: string[] = [];
        let at = 0;
        for (const size of cuts) {
          if (at + size >= pan.length) break;
          groups.push(pan.slice(at, at + size));
          at += size;
        }
        groups.push(pan.slice(at));
        return holdsCardNumber(`note: ${groups.join(sep)} end`);
      }),
      { seed: 21, numRuns: 1000 },
    );
  });

  it("completes on a 1 MB run of digits and separators", () => {
    expect(holdsCardNumber("1234 ".repeat(200_000))).toBe(false);
  });
});

describe("refuseCardNumbersInText", () => {
  const refusal = (body: unknown, fields: string[]) => {
    try {
      refuseCardNumbersInText(body, fields);
    } catch (err) {
      return err as DomainError;
    }
    return null;
  };

  it("passes a body without card numbers, and fields that are absent or not strings", () => {
    expect(refusal({ name: "Acme", metadata: { order: "1042" } }, ["name", "metadata.*", "metadata.{key}"])).toBe(null);
    expect(refusal({}, ["name", "customer.email", "metadata.*", "tags[]"])).toBe(null);
    expect(refusal({ name: 4242424242424242, customer: null, tags: "x" }, ["name", "customer.email", "tags[]"])).toBe(
      null,
    );
  });

  it("refuses with 400 card_number_in_text naming the field, without echoing the number", () => {
    const err = refusal({ name: "Acme", description: "card 4242 4242 4242 4242" }, ["description", "name"]);
    expect(err).toBeInstanceOf(DomainError);
    expect(err?.code).toBe("card_number_in_text");
    expect(err?.param).toBe("description");
    expect(err?.errors).toEqual([{ param: "description", message: "looks like it contains a card number" }]);
    expect(err?.message).toMatch(/^description looks like it contains a card number/);
    expect(err?.message).not.toMatch(/4242/);
  });

  it("walks nested fields, map values and keys, and list items, naming each one found", () => {
    const body = {
      customer: { email: "4242424242424242@example.com" },
      metadata: { note: "5555-5555-5555-4444", fine: "ok", "4000056655665556": "key" },
      tags: ["a", "378282246310005"],
      other: "4242424242424242", // not a free-text field of this operation
    };
    const err = refusal(body, ["customer.email", "metadata.*", "metadata.{key}", "tags[]"]);
    expect(err?.param).toBe("customer.email");
    expect(err?.errors).toEqual([
      { param: "customer.email", message: "looks like it contains a card number" },
      { param: "metadata.note", message: "looks like it contains a card number" },
      { param: "metadata", message: "has a key that looks like a card number" },
      { param: "tags.1", message: "looks like it contains a card number" },
    ]);
  });
});
