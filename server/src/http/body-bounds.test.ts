import { describe, expect, it } from "vitest";
import { DomainError } from "../domain/kernel/errors.ts";
import { BODY_BOUNDS, refuseUnboundedJson } from "./body-bounds.ts";

// The bounds on a JSON body's shape, read from its bytes before it is parsed (docs/api.md
// "Conventions"). The answer a client gets is asserted end to end in test/e2e/body-bounds.test.ts.

const bytes = (text: string) => new TextEncoder().encode(text);

/** The refusal for `text`, or undefined when it passes. */
function refusal(text: string): DomainError | undefined {
  try {
    refuseUnboundedJson(bytes(text));
    return undefined;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return err;
  }
}

const fields = (n: number, prefix = "f") =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("refuseUnboundedJson", () => {
  it("passes every body the contract can take: its widest object, longest array, deepest nesting", () => {
    const widest = { name: "Acme", metadata: fields(BODY_BOUNDS.entries, "k"), ...fields(10) };
    expect(refusal(JSON.stringify(widest))).toBeUndefined();
    expect(
      refusal(JSON.stringify({ enabled_events: Array.from({ length: BODY_BOUNDS.entries }, () => "x") })),
    ).toBeUndefined();
    expect(refusal(nested(BODY_BOUNDS.depth))).toBeUndefined();
    expect(refusal("{}")).toBeUndefined();
    expect(refusal("[]")).toBeUndefined();
    expect(refusal('"text"')).toBeUndefined();
    expect(refusal("null")).toBeUndefined();
  });

  it("refuses an object with more fields than the bound, naming it and where it is", () => {
    const top = refusal(JSON.stringify({ name: "x", ...fields(8000) }));
    expect(top?.code).toBe("invalid_request");
    expect(top?.param).toBe("body");
    expect(top?.message).toContain(`at most ${BODY_BOUNDS.entries}`);
    expect(top?.errors).toEqual([
      {
        param: "body",
        code: "too_long",
        message: `must have at most ${BODY_BOUNDS.entries} fields (no operation takes more)`,
      },
    ]);
    const inner = refusal(JSON.stringify({ name: "x", metadata: fields(BODY_BOUNDS.entries + 1, "k") }));
    expect(inner?.param).toBe("metadata");
    expect(inner?.message).toMatch(/^`metadata` has more than 100 fields/);
  });

  it("refuses an array with more entries than the bound, naming its place with indexes", () => {
    const body = { items: [{}, { 'we\\ird "name"': Array.from({ length: BODY_BOUNDS.entries + 1 }, () => 1) }] };
    const err = refusal(JSON.stringify(body));
    expect(err?.param).toBe('items.1.we\\ird "name"');
    expect(err?.errors?.[0]).toMatchObject({ code: "too_long", message: expect.stringContaining("entries") });
  });

  it("refuses more entries in all than the bound, however they are spread", () => {
    const spread = { a: Array.from({ length: 20 }, () => fields(60)) };
    const err = refusal(JSON.stringify(spread));
    expect(err?.param).toBe("body");
    expect(err?.message).toContain(`more than ${BODY_BOUNDS.total} fields and array entries`);
  });

  it("refuses nesting past the bound, objects or arrays", () => {
    expect(refusal(nested(BODY_BOUNDS.depth + 1))?.message).toContain(`more than ${BODY_BOUNDS.depth} deep`);
    expect(refusal(nested(50_000))?.errors?.[0]).toMatchObject({ param: "body", code: "invalid_value" });
    expect(refusal(`${'{"a":'.repeat(BODY_BOUNDS.depth + 1)}1${"}".repeat(BODY_BOUNDS.depth + 1)}`)).toBeDefined();
  });

  it("reads brackets, commas and quotes inside strings as text", () => {
    const text = JSON.stringify({ name: `${"[{,".repeat(5000)}\\"\\\\`, description: '"' });
    expect(refusal(text)).toBeUndefined();
  });

  it("leaves malformed JSON to the parser", () => {
    expect(refusal("]]]}}}")).toBeUndefined();
    expect(refusal('{"a": [1, 2')).toBeUndefined();
  });
});
