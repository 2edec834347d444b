import { createCharges } from "./charges.ts";
import type { Caller, Now } from "./context.ts";
import { createEvents } from "./events.ts";
import { allowAllFraudScreen, type FraudScreen } from "./fraud.ts";
import { createHealth } from "./health.ts";
import { settleDue } from "./ledger.ts";
import { createMerchants } from "./merchants.ts";
import type { MoneyRules } from "./money.ts";
import { createSimulatorProcessor, type Processor } from "./processor.ts";
import type { AppStore } from "./records.ts";
import { createServiceKeys } from "./service-keys.ts";
import { iso } from "./time.ts";
import { createTokens } from "./tokens.ts";
import type { VaultKeys } from "./vault/crypto.ts";

export interface DomainDeps {
  store: AppStore;
  vaultKeys: VaultKeys;
  money: MoneyRules;
  settlementDelaySeconds: number;
  now?: Now;
  processor?: Processor;
  fraud?: FraudScreen;
}

/** Every use case, wired to one store. Knows nothing of HTTP or of which database is behind the store. */
export function createDomain(deps: DomainDeps) {
  const now = deps.now ?? (() => new Date());
  const { store } = deps;
  const merchants = createMerchants(store, now);
  const tokens = createTokens(store, deps.vaultKeys, now);
  const charges = createCharges({
    store,
    now,
    merchants,
    tokens,
    processor: deps.processor ?? createSimulatorProcessor(),
    fraud: deps.fraud ?? allowAllFraudScreen,
    money: deps.money,
    settlementDelaySeconds: deps.settlementDelaySeconds,
  });
  return {
    merchants,
    tokens,
    serviceKeys: createServiceKeys(store, now),
    events: createEvents(store),
    health: createHealth(store),
    charges,
    balances: {
      /** A merchant's balance per currency (GET /v1/merchants/{id}/balance). */
      async get(caller: Caller, merchantId: string) {
        const merchant = await merchants.get(caller, merchantId);
        return { merchant, rows: await store.findAll("balances", { merchant_id: merchant.id }, 1000) };
      },
    },
    /** The background jobs' work, one pass; the server runs it every JOBS_INTERVAL_SECONDS. */
    jobs: {
      /** Expires unpaid local payments whose next_action has run out. */
      expire: () => charges.expireDue(),
      /** Moves pending credits whose settlement time has come to available. */
      settle: () => settleDue(store, now),
      /** Forgets Idempotency-Keys older than their time to live. */
      sweepIdempotency: () => store.deleteMany("idempotency", { expires_at: { $lt: iso(now()) } }),
    },
  };
}

export type Domain = ReturnType<typeof createDomain>;
