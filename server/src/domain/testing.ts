import { randomBytes } from "node:crypto";
import { openSqliteStore } from "../store/sqlite.ts";
import type { PayoutRail } from "./cashouts/payouts.ts";
import type { Caller } from "./context.ts";
import type { FraudScreen } from "./fraud.ts";
import { createDomain } from "./index.ts";
import type { Processor } from "./processor.ts";
import { COLLECTIONS, type Docs } from "./records.ts";
import { parseVaultKeys } from "./vault/keys.ts";

// For unit tests of the domain: the real domain on an in-memory store, with a clock the test moves.

export function testDomain(
  options: {
    settlementDelaySeconds?: number;
    start?: Date;
    processor?: Processor;
    fraud?: FraudScreen;
    payoutRail?: PayoutRail;
    cashoutPendingSeconds?: number;
    cashoutTransitSeconds?: number;
  } = {},
) {
  const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  let clock = options.start ?? new Date("2026-11-21T10:00:00Z");
  const domain = createDomain({
    store,
    now: () => clock,
    vaultKeys: parseVaultKeys({
      masterKey: randomBytes(32).toString("base64"),
      fingerprintKey: randomBytes(32).toString("base64"),
    }),
    money: { supportedCurrencies: new Set(["USD", "EUR", "BRL", "MXN", "JPY", "KWD"]), maxAmountMajor: 999_999 },
    settlementDelaySeconds: options.settlementDelaySeconds ?? 0,
    processor: options.processor,
    fraud: options.fraud,
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
    caller,
    advance(seconds: number) {
      clock = new Date(clock.getTime() + seconds * 1000);
    },
  };
}
