import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CashoutStore } from "../cashouts/records.ts";
import type { ChargeTx } from "../charges/records.ts";
import type { ConsoleSessionStore } from "../console-sessions/records.ts";
import type { DisputeTx } from "../disputes/records.ts";
import type { FraudStore } from "../fraud/records.ts";
import type { LedgerEntryDoc, LedgerStore } from "../ledger/records.ts";
import type { PaymentLinkStore } from "../payment-links/records.ts";
import type { SandboxClockTx } from "../sandbox-clock/records.ts";

// An area's store is typed to its own collections and the kernel's (kernel/store.ts): each
// `@ts-expect-error` below is a read or write of another area's collection that `tsc` must refuse (were it
// accepted, the directive itself would fail `tsc -p server`). The functions are never called; the test
// only keeps them type-checked with the rest of the suite. The scan below refuses the ways around it: an
// area's code importing the whole store's type, or another area's store type.

declare const fraud: FraudStore;
declare const paymentLinks: PaymentLinkStore;
declare const cashouts: CashoutStore;
declare const consoleSessions: ConsoleSessionStore;
declare const ledger: LedgerStore;
declare const disputeTx: DisputeTx;
declare const sandboxClockTx: SandboxClockTx;
declare const chargeTx: ChargeTx;
declare const entry: LedgerEntryDoc;

function crossAreaAccess() {
  return [
    // @ts-expect-error fraud reads a charge through the charges area's service (fraud/evaluations.ts ChargeLookup)
    fraud.get("charges", "tx_1"),
    // @ts-expect-error payment links read their merchant through the merchants service
    paymentLinks.get("merchants", "mch_1"),
    // @ts-expect-error cashouts ask the ledger's balances whether a currency is held
    cashouts.get("balances", "mch_1:USD"),
    // @ts-expect-error console sessions re-check their key through the service keys service
    consoleSessions.get("service_keys", "kid_1"),
    // @ts-expect-error the ledger's upgrade lists paid cashouts through the cashouts service
    ledger.list("cashouts", {}, { limit: 1 }),
    // @ts-expect-error a dispute claims its charge through the charges area (charges/disputed.ts)
    disputeTx.update("charges", "tx_1", { set: { chargeback_id: null } }),
    // @ts-expect-error the sandbox clock restarts endpoints' failure windows through the webhooks area
    sandboxClockTx.findAll("webhook_endpoints", {}),
    // @ts-expect-error nor may charges write the ledger's entries themselves
    chargeTx.insert("ledger_entries", entry),
  ];
}

function ownAndKernel() {
  return [
    fraud.get("fraud_evaluations", "fe_1"),
    paymentLinks.get("payment_links", "plink_1"),
    // The kernel's collections are every area's: events are recorded in the transaction they report.
    disputeTx.findAll("events", {}),
    chargeTx.get("idempotency", "key"),
  ];
}

describe("area walls (type test)", () => {
  it("an area's store reaches only its own and the kernel's collections (checked by tsc)", () => {
    expect([crossAreaAccess, ownAndKernel].every((f) => typeof f === "function")).toBe(true);
  });
});

const DOMAIN = new URL("..", import.meta.url).pathname;

/**
 * The imports that would go around the walls, in an area's sources (tests aside): the list of areas and the
 * whole store's type (areas.ts: only the composition root, index.ts, builds from it), or another area's
 * store type.
 */
const ALLOWED: Record<string, string> = {
  // The ledger's audit reads, read-only, what its platform accounts stand for (verify.ts LedgerAuditStore).
  "ledger/verify.ts": "cashouts charges disputes",
};

function wallBreaches(areaOf: (file: string) => string | null, files: Record<string, string>): string[] {
  const breaches: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    const area = areaOf(file);
    if (!area) continue;
    const imports = text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+"\.\.\/([\w-]+)(?:\/[\w.-]+)?(\.ts)?"/g);
    for (const [, names = "", target = ""] of imports) {
      if (target === "areas" || target === "index") {
        breaches.push(`${file} imports the whole store's type (${target}.ts)`);
        continue;
      }
      if (target === area || target === "kernel") continue;
      const storeTypes = names.match(/\b\w+(?:Store|Tx|Docs)\b/g) ?? [];
      if (storeTypes.length > 0 && !(ALLOWED[file] ?? "").split(" ").includes(target)) {
        breaches.push(`${file} imports ${target}'s ${storeTypes.join(", ")}`);
      }
    }
  }
  return breaches;
}

function areaSources(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const area of readdirSync(DOMAIN, { withFileTypes: true })) {
    if (!area.isDirectory() || area.name === "kernel") continue;
    for (const name of readdirSync(join(DOMAIN, area.name))) {
      if (!name.endsWith(".ts") || name.includes(".test") || name.includes(".fixture")) continue;
      files[`${area.name}/${name}`] = readFileSync(join(DOMAIN, area.name, name), "utf8");
    }
  }
  return files;
}

const areaOf = (file: string) => (file.includes("/") ? (file.split("/")[0] ?? null) : null);

describe("area walls (scan)", () => {
  it("no area's source imports the whole store's type or another area's store type", () => {
    expect(wallBreaches(areaOf, areaSources())).toEqual([]);
  });

  it("would see both (fixture)", () => {
    expect(
      wallBreaches(areaOf, {
        "fraud/x.ts": 'import type { AppStore } from "../areas.ts";',
        "cashouts/y.ts": 'import type { LedgerStore, LedgerTx } from "../ledger/records.ts";',
        "cashouts/z.ts":
          'import type { Balances } from "../ledger/balances.ts";\nimport type { CashoutTx } from "./records.ts";',
      }),
    ).toEqual([
      "fraud/x.ts imports the whole store's type (areas.ts)",
      "cashouts/y.ts imports ledger's LedgerStore, LedgerTx",
    ]);
  });
});
