import { randomBytes } from "node:crypto";
import { openSqliteStore } from "../store/sqlite.ts";
import type { PayoutRail } from "./cashouts/payout-rail.ts";
import type { Processor } from "./charges/processor.ts";
import type { FraudScreen } from "./fraud/port.ts";
import { createDomain, type DomainDeps } from "./index.ts";
import type { Caller } from "./kernel/caller.ts";
import { DomainError } from "./kernel/errors.ts";
import { COLLECTIONS, type Docs } from "./records.ts";
import type { VaultKeys } from "./vault/crypto.ts";
import { parseVaultKeys } from "./vault/keys.ts";

// For unit tests of the domain: the real domain on an in-memory store, with a clock the test moves.

export function testDomain(
  options: {
    settlementDelaySeconds?: number;
    start?: Date;
    processor?: Processor;
    fraud?: FraudScreen;
    /** Webhook settings, sender and resolver (defaults: nothing is sent and no name resolves). */
    webhooks?: DomainDeps["webhooks"];
    /** A store to share with another domain (two instances on one store); default a fresh in-memory one. */
    store?: ReturnType<typeof openSqliteStore<Docs>>;
    /** Vault keys to share with another domain on the same store. */
    vaultKeys?: VaultKeys;
    payoutRail?: PayoutRail;
    cashoutPendingSeconds?: number;
    cashoutTransitSeconds?: number;
  } = {},
) {
  const store = options.store ?? openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  const vaultKeys =
    options.vaultKeys ??
    parseVaultKeys({
      masterKey: randomBytes(32).toString("base64"),
      fingerprintKey: randomBytes(32).toString("base64"),
    });
  let clock = options.start ?? new Date("2026-11-21T10:00:00Z");
  const domain = createDomain({
    store,
    now: () => clock,
    vaultKeys,
    money: { supportedCurrencies: new Set(["USD", "EUR", "BRL", "MXN", "JPY", "KWD"]), maxAmountMajor: 999_999 },
    settlementDelaySeconds: options.settlementDelaySeconds ?? 0,
    processor: options.processor,
    fraud: options.fraud,
    webhooks: options.webhooks,
    payoutRail: options.payoutRail,
    cashoutPendingSeconds: options.cashoutPendingSeconds,
    cashoutTransitSeconds: options.cashoutTransitSeconds,
    baseUrl: () => "https://pay.example.com",
  });
  const caller = (livemode = false): Caller => ({
    keyId: "kid_test",
    livemode,
    scopes: ["*"],
    keyPrefix: "key_test_abcd",
    requestId: "req_test",
  });
  return {
    store,
    domain,
    vaultKeys,
    caller,
    advance(seconds: number) {
      clock = new Date(clock.getTime() + seconds * 1000);
    },
    /** Sets the clock to an absolute time. */
    at(time: Date | string) {
      clock = new Date(time);
    },
    now: () => clock,
  };
}

/** The DomainError a use case refused with; fails when it succeeded or threw anything else. */
export async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}
