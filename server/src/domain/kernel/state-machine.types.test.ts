import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { AppTx } from "../areas.ts";
import { CHARGE_MACHINE } from "../charges/state.ts";

// A status written outside its state machine does not compile: each `@ts-expect-error` below is a raw
// write `tsc` must refuse (were it accepted, the directive itself would fail `tsc -p server`). The
// functions are never called; the test only keeps them type-checked with the rest of the suite.
// A cast is the one way past the compiler, so the scan at the end refuses a cast to a status anywhere in
// server/src but the kernel's own.

declare const tx: AppTx;

function rawWrites() {
  return [
    // @ts-expect-error a plain string is not a charge status: only CHARGE_MACHINE makes one
    tx.update("charges", "tx_1", { set: { status: "captured" } }),
    // @ts-expect-error nor is another machine's status
    tx.update("charges", "tx_1", { set: { status: REVIEW_STATUS } }),
    // @ts-expect-error a cashout sent without CASHOUT_MACHINE
    tx.update("cashouts", "co_1", { set: { status: "in_transit" } }),
    // @ts-expect-error a merchant closed without MERCHANT_MACHINE
    tx.update("merchants", "mch_1", { set: { status: "closed" } }),
    // @ts-expect-error an endpoint disabled without ENDPOINT_MACHINE
    tx.update("webhook_endpoints", "we_1", { set: { status: "disabled" } }),
    // @ts-expect-error a delivery ended without DELIVERY_MACHINE
    tx.update("webhook_deliveries", "whd_1", { set: { status: "failed" } }),
  ];
}

declare const REVIEW_STATUS: import("./state-machine.ts").Status<"review", "open">;
declare const charge: import("../charges/records.ts").ChargeDoc;

function rawMutations() {
  // @ts-expect-error a document changed in memory before it is stored, too
  charge.status = "blocked";
  // @ts-expect-error a review's status is its own machine's
  charge.review = { status: "open", opened_at: "", expires_at: "", closed_at: null, capture: true };
}

function throughTheMachine() {
  charge.status = CHARGE_MACHINE.start("blocked");
  return [
    tx.update("charges", "tx_1", { set: { status: CHARGE_MACHINE.step("authorized", "captured") } }),
    // Reading and filtering take plain values.
    tx.findAll("charges", { status: "pending" }),
    tx.update("charges", "tx_1", { set: { updated_at: "" } }, { status: { $in: ["captured", "refunded"] } }),
  ];
}

describe("status writes (type test)", () => {
  it("compiles only through the machines (checked by tsc, not at run time)", () => {
    expect([rawWrites, rawMutations, throughTheMachine].every((f) => typeof f === "function")).toBe(true);
  });
});

/** The server's sources (tests aside) that cast to a status: a cast is the one way past the compiler. */
function castsToStatus(dir: string, root: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return castsToStatus(path, root);
    if (!entry.name.endsWith(".ts") || entry.name.includes(".test")) return [];
    const file = relative(root, path);
    if (file === "domain/kernel/state-machine.ts") return []; // `made`: the machine's own, after its table said yes
    return /\bas\s+(?:unknown\s+as\s+)?(?:Status<|\w+\["status"\])/.test(readFileSync(path, "utf8")) ? [file] : [];
  });
}

describe("status casts (scan)", () => {
  it("no source but the kernel casts a value to a status", () => {
    const src = new URL("../..", import.meta.url).pathname;
    expect(castsToStatus(src, src)).toEqual([]);
  });

  it("would see one (fixture)", () => {
    const pattern = /\bas\s+(?:unknown\s+as\s+)?(?:Status<|\w+\["status"\])/;
    expect(pattern.test('charge.status = "captured" as ChargeDoc["status"];')).toBe(true);
    expect(pattern.test('const s = "paid" as unknown as Status<"cashout", CashoutStatus>;')).toBe(true);
    expect(pattern.test("const s = CASHOUT_MACHINE.step(from, to);")).toBe(false);
  });
});
