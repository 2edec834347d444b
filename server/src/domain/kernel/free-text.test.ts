import { describe, expect, it } from "vitest";
import { DomainError } from "./errors.ts";
import { refuseCardNumbersInText } from "./free-text.ts";

// Free-text fields refuse card numbers (spec/main.tsp, "Card numbers go only where a card number is
// asked for"): what the detector finds and what it leaves alone, and the walk over a request body.

/** The refusal a body's free-text fields get, or null when they pass. */
const refusal = (body: unknown, fields: string[]) => {
  try {
    refuseCardNumbersInText(body, fields);
  } catch (err) {
    return err as DomainError;
  }
  return null;
};

describe("refuseCardNumbersInText", () => {
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

describe("refuseCardNumbersInText: secrets", () => {
  it("refuses a secret this API issues with 400 secret_in_text naming the field, without echoing it", () => {
    const secret = "whsec_9Kd2Lp7Qw4Er1Ty6Ui3Op8As5Df0GhJk";
    const err = refusal({ url: `https://shop.example/hooks?secret=${secret}`, description: "ok" }, [
      "description",
      "url",
    ]);
    expect(err?.code).toBe("secret_in_text");
    expect(err?.param).toBe("url");
    expect(err?.errors).toEqual([{ param: "url", message: "looks like it contains a secret" }]);
    expect(err?.message).not.toContain("9Kd2");
    expect(err?.message).toMatch(/rotate/);
  });

  it("names card numbers first when a body holds both", () => {
    const err = refusal({ name: "key_test_Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6", description: "4242 4242 4242 4242" }, [
      "name",
      "description",
    ]);
    expect(err?.code).toBe("card_number_in_text");
    expect(err?.param).toBe("description");
  });
});
