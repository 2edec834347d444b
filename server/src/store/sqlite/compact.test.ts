import { describe, expect, it } from "vitest";
import { DEFLATE_FROM, pack, unpack } from "./compact.ts";

// The doc column's formats (compact.ts): what a previous version wrote must read back the same, since
// a store is upgraded row by row at each row's next write (issue 36).

/** Rows format 1 wrote (the version before format 2), with the JSON each holds. */
const FORMAT_1_ROWS: [string, string, string][] = [
  [
    "charges",
    '{"updated_at":"2026-11-28T11:07:04.908000Z","amount":1000,"currency":"USD","amount_captured":1000,"amount_refunded":0,"payment_method":{"type":"card","token":"tok_0VcGUB6MD1cT4t7ZS4HysuQv","brand":"visa","last4":"4242","fingerprint":"fp_e3b5b6ddb0196da942813784b6dd5115"},"next_action":null,"expires_at":null,"failure_code":null,"failure_message":null,"description":"format 1","metadata":{"order":"A-1"},"customer":null,"processor_ref":"sim_auth_1","fraud_evaluation_id":"fe_0VcGUQoA0gcqvbTx7hXyMMjR","review":null}',
    "AavGEr2GhrpGFiGGhlYG5lYGJnqWBhYDGr0GYcnuoU5mvi6GySEmJeZRwSYelcWlgWWkR3uqcZJpkllKSpKBoaVZSqKliZGFobG5hQlIzNTQ0JTmyUIpLb8oN7FEwVAJJXEo5RelgNKFkqOuoRIpKcUQX1IBh1tgvqNBenJhWVJIhXlGRKWvb1YQWhKqBQA=",
  ],
  // A collection format 1 had no dictionary of its own for (the common one), which format 2 has.
  [
    "ledger_entries",
    '{"account":"merchant:mch_1:available","amount":1000}',
    "AatWSkxOhrsI4g8rkBcMrRLLEjNzEpNyUpFcbWhgYFALAA==",
  ],
];

describe("the doc column's formats", () => {
  it.each(FORMAT_1_ROWS)("read a row format 1 wrote (%s)", (collection, json, base64) => {
    expect(unpack(collection, Buffer.from(base64, "base64"))).toBe(json);
  });

  it.each(FORMAT_1_ROWS)("write format 2, which reads back (%s)", (collection, json) => {
    const packed = pack(collection, json, 0);
    expect(Buffer.isBuffer(packed) && packed[0]).toBe(2);
    expect(unpack(collection, packed)).toBe(json);
  });

  it("deflates a per-charge row of a hundred-odd characters, smaller", () => {
    const entry =
      '{"account":"merchant:mch_0VcGUB6MD1cT4t7ZS4HysuQv:available","amount":1000,"type":"capture","available_on":null,"settled":null,"drawn":null}';
    expect(entry.length).toBeGreaterThanOrEqual(DEFLATE_FROM);
    const packed = pack("ledger_entries", entry);
    expect(Buffer.isBuffer(packed)).toBe(true);
    expect(packed.length).toBeLessThan(entry.length / 2);
  });

  it("reads back a document that deflates and inflates to more than one output chunk (2 KiB)", () => {
    // Random-looking text does not deflate, so both directions take several chunks joined together.
    const noise = Array.from({ length: 600 }, (_, i) => ((i * 2654435761) % 2 ** 32).toString(36)).join("");
    const json = JSON.stringify({ description: noise, metadata: { note: "x".repeat(9000) } });
    const packed = pack("charges", json);
    expect(Buffer.isBuffer(packed) && packed.length).toBeGreaterThan(2048);
    expect(unpack("charges", packed)).toBe(json);
  });

  it("refuses a format it does not know", () => {
    expect(() => unpack("charges", Buffer.from([9, 1, 2]))).toThrow(/no format this version reads/);
  });
});
