import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  holdsCardNumber,
  looksLikeCardNumber,
  luhnValid,
  MIN_MASKED_DIGITS,
  maskCardNumbers,
  maskPan,
} from "./card-number.ts";
import { CARD_WRITINGS, NOT_CARDS } from "./hostile-writings.ts";

// The one card-number recogniser (card-number.ts): every writing of issue 35 item 2 (and more) is found
// by the free-text rule and masked by the masker, and the ordinary numbers around them are not.

describe("luhnValid", () => {
  it("accepts numbers whose check digit is right, and nothing that is not all ASCII digits", () => {
    for (const n of ["4242424242424242", "378282246310005", "4222222222222", "6759649826438453128"]) {
      expect(luhnValid(n), n).toBe(true);
    }
    for (const n of ["4242424242424241", "6759649826438453123", "4242 4242 4242 4242", "", "４２４２"]) {
      expect(luhnValid(n), n).toBe(false);
    }
  });
});

describe.each(CARD_WRITINGS)("a card number written $name", ({ text }) => {
  it("is found in free text, alone and inside a sentence", () => {
    expect(holdsCardNumber(text), JSON.stringify(text)).toBe(true);
    expect(holdsCardNumber(`Order #1042, paid with ${text}, thanks`), JSON.stringify(text)).toBe(true);
  });

  it("is masked to its first four and last four digits", () => {
    const masked = maskCardNumbers(`GET /v1/merchants?q=${text}&limit=2`);
    // What is left of the number: eight digits, whatever their script.
    expect(holdsCardNumber(masked), masked).toBe(false);
    expect(masked).toContain("*");
    expect(maskCardNumbers(masked)).toBe(masked);
  });

  it("is a card number when sent alone where a token belongs", () => {
    expect(looksLikeCardNumber(text), JSON.stringify(text)).toBe(true);
  });
});

describe("holdsCardNumber (free text)", () => {
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

  it("does not join digits across letters, and joins them across any run of separators", () => {
    expect(holdsCardNumber("4242a4242b4242c4242")).toBe(false);
    expect(holdsCardNumber("4242    4242    4242    4242")).toBe(true);
    expect(holdsCardNumber("4242 | 4242 -- 4242 ~~~ 4242")).toBe(true);
  });
});

describe("masking keeps the first four and last four digits", () => {
  it("stars each hidden digit and leaves separators where they are", () => {
    expect(maskCardNumbers("4242424242424242")).toBe("4242********4242");
    expect(maskCardNumbers("card 4242 4242 4242 4242 ok")).toBe("card 4242 **** **** 4242 ok");
    expect(maskCardNumbers("/v1/merchants?q=4870:0506:2385:6121")).toBe("/v1/merchants?q=4870:****:****:6121");
    expect(maskCardNumbers("4242 | 4242 | 4242 | 4242")).toBe("4242 | **** | **** | 4242");
  });

  it("stars a hidden digit of any script as one `*`, and drops nothing else", () => {
    expect(maskCardNumbers("４２４２４２４２４２４２４２４２")).toBe("４２４２********４２４２");
    expect(maskCardNumbers("٤٢٤٢ ٤٢٤٢ ٤٢٤٢ ٤٢٤٢")).toBe("٤٢٤٢ **** **** ٤٢٤٢");
    expect(maskCardNumbers("4\u200b2\u200b4\u200b2\u200b4242 4242 4242")).toBe(
      "4\u200b2\u200b4\u200b2\u200b**** **** 4242",
    );
    expect(maskCardNumbers("𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐𝟒𝟐")).toBe("𝟒𝟐𝟒𝟐********𝟒𝟐𝟒𝟐");
  });

  it("stars a percent-encoded digit whole, and never counts the digits of an escape", () => {
    expect(maskCardNumbers("4242%204242%204242%204242")).toBe("4242%20****%20****%204242");
    expect(maskCardNumbers("4242%25204242%25204242%25204242")).toBe("4242%2520****%2520****%25204242");
    expect(maskCardNumbers("%34242424242424242")).toBe("%34242********4242");
  });

  it("masks every run of 12 digits or more, Luhn-valid or not", () => {
    expect(maskCardNumbers("a=4242424242424241 b=378282246310005")).toBe("a=4242********4241 b=3782*******0005");
    expect(maskCardNumbers("x675964982643x")).toBe("x6759****2643x");
    expect(maskCardNumbers('"time":1763720467123')).toBe('"time":1763*****7123');
    expect(maskCardNumbers("00004242424242424242")).toBe("0000************4242");
  });

  it("maskPan counts every digit of its text and stars all of a short one", () => {
    expect(maskPan("4242424242424242")).toBe("4242********4242");
    expect(maskPan("4242 4242 4242 4242")).toBe("4242 **** **** 4242");
    expect(maskPan("378282246310005")).toBe("3782*******0005");
    expect(maskPan("675964982643")).toBe("6759****2643");
    expect(maskPan("42424242424")).toBe("***********");
    expect(maskPan("")).toBe("");
  });
});

describe.each(NOT_CARDS)("ordinary text: $name", ({ text, masked }) => {
  it("is not a card number in free text", () => {
    expect(holdsCardNumber(text), JSON.stringify(text)).toBe(false);
  });

  it(masked === undefined ? "is not masked" : `is masked as ${masked}`, () => {
    expect(maskCardNumbers(text)).toBe(masked ?? text);
  });
});

describe("IP addresses (issue 34 item 3)", () => {
  it("stay readable in a problem's message", () => {
    const message =
      "url points to 169.254.169.254, a link-local address: webhooks are delivered to public addresses only.";
    expect(maskCardNumbers(message)).toBe(message);
    expect(maskCardNumbers("from 203.0.113.7:8443 and 198.51.100.23")).toBe("from 203.0.113.7:8443 and 198.51.100.23");
  });

  it("do not hide a card number beside them", () => {
    expect(maskCardNumbers("169.254.169.254 4242 4242 4242 4242")).toBe("169.254.169.254 4242 **** **** 4242");
    expect(holdsCardNumber("10.0.0.1 4242-4242-4242-4242")).toBe(true);
  });

  it("are four groups of at most 255 joined by single dots, nothing longer", () => {
    expect(maskCardNumbers("424.242.424.242.4242")).toBe("424.2**.***.***.4242");
    expect(maskCardNumbers("4242.4242.4242.4242")).toBe("4242.****.****.4242");
    expect(looksLikeCardNumber("169.254.169.254")).toBe(false);
  });
});

describe("looksLikeCardNumber", () => {
  it("is a value that is nothing but 12 to 19 digits and separators", () => {
    for (const v of ["4242424242424242", "4242 4242 4242 4241", 4242424242424242, "675964982643"]) {
      expect(looksLikeCardNumber(v), String(v)).toBe(true);
    }
    for (const v of [
      "tok_4242424242424242",
      "42424242424",
      "42424242424242424242",
      12,
      null,
      {},
      "2026-11-24 10:30:00",
    ]) {
      expect(looksLikeCardNumber(v), String(v)).toBe(false);
    }
  });
});

describe("properties", () => {
  const card = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 12, maxLength: 18 }).map((digits) => {
    const body = digits.join("");
    const check = [...Array(10).keys()].find((d) => luhnValid(`${body}${d}`)) as number;
    return `${body}${check}`;
  });

  it("finds every Luhn-valid number of 13 to 19 digits, however its groups are separated", () => {
    const separator = fc.constantFrom(
      " ",
      "-",
      ".",
      "  ",
      " - ",
      "%20",
      "/",
      ":",
      "|",
      "\u2013",
      "\u200b",
      " ~ ",
      "\u00ad",
    );
    fc.assert(
      fc.property(card, fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 6 }), separator, (pan, cuts, sep) => {
        const groups: string[] = [];
        let at = 0;
        for (const size of cuts) {
          if (at + size >= pan.length) break;
          groups.push(pan.slice(at, at + size));
          at += size;
        }
        groups.push(pan.slice(at));
        const text = `note: ${groups.join(sep)} end`;
        return holdsCardNumber(text) && maskCardNumbers(text) !== text;
      }),
      { seed: 21, numRuns: 1000 },
    );
  });

  it("masks whatever the free-text rule finds, and masked text is found no more", () => {
    const pieces = ["4", "2", "0", "9", "1", " ", "-", ".", ":", "x", "%20", "\u200b", "٤", "４", "/", "*"];
    const text = fc.array(fc.constantFrom(...pieces), { maxLength: 60 }).map((p) => p.join(""));
    fc.assert(
      fc.property(text, (t) => {
        const masked = maskCardNumbers(t);
        if (holdsCardNumber(t)) expect(masked).not.toBe(t);
        expect(holdsCardNumber(masked)).toBe(false);
        expect(maskCardNumbers(masked)).toBe(masked);
      }),
      { seed: 35, numRuns: 3000 },
    );
  });

  it(`never leaves more than eight digits of a run of ${MIN_MASKED_DIGITS} or more in clear`, () => {
    fc.assert(
      fc.property(card, (pan) => {
        const masked = maskCardNumbers(`a ${pan.split("").join(" ")} b`);
        return masked.replace(/[^0-9]/g, "").length === 8;
      }),
      { seed: 7, numRuns: 500 },
    );
  });
});

describe("cost", () => {
  it("completes on 1 MB runs of digits, separators and invisible characters", () => {
    expect(holdsCardNumber("1234 ".repeat(200_000))).toBe(false);
    const line = "4".repeat(1 << 20);
    expect(maskCardNumbers(line).replaceAll("*", "").length).toBe(8);
    const spaced = "4\u200b ".repeat(1 << 18);
    expect(maskCardNumbers(spaced).replace(/[^0-9]/g, "")).toBe("44444444");
    const separators = `1${" -".repeat(1 << 19)}x`;
    expect(maskCardNumbers(separators)).toBe(separators);
  });

  it("completes on 1 MB of mixed text and of non-ASCII text", () => {
    const chunk = 'ts=1763720467 id="a1b2c3" n=12345678901 d=2026-11-21T10:15:30Z sep=1 - - - x ';
    const line = chunk.repeat(Math.ceil((1 << 20) / chunk.length));
    expect(maskCardNumbers(line)).toBe(line);
    const text = "Zahlung für Bestellung № ٤٢ — ありがとう ".repeat(30_000);
    expect(holdsCardNumber(text)).toBe(false);
    expect(maskCardNumbers(text)).toBe(text);
  });
});
