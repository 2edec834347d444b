import { createCharges } from "./charges.ts";
import type { Caller, Now } from "./context.ts";
import { createEvents } from "./events.ts";
import { allowAllFraudScreen, type FraudScreen } from "./fraud.ts";
import { settleDue } from "./ledger.ts";
import { createMerchants } from "./merchants.ts";
import type { MoneyRules } from "./money.ts";
import { createSimulatorProcessor, type Processor } from "./processor.ts";
import type { AppStore } from "./records.ts";
import { createServiceKeys } from "./service-keys.ts";
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
  return {
    merchants,
    tokens,
    serviceKeys: createServiceKeys(store, now),
    events: createEvents(store),
    charges: createCharges({
      store,
      now,
      merchants,
      tokens,
      processor: deps.processor ?? createSimulatorProcessor(),
      fraud: deps.fraud ?? allowAllFraudScreen,
      money: deps.money,
      settlementDelaySeconds: deps.settlementDelaySeconds,
    }),
    balances: {
      /** A merchant's balance per currency (GET /v1/merchants/{id}/balance). */
      async get(caller: Caller, merchantId: string) {
        const merchant = await merchants.get(caller, merchantId);
        return { merchant, rows: await store.findAll("balances", { merchant_id: merchant.id }, 1000) };
      },
    },
    /** The background jobs' work, one pass; the server runs it every JOBS_INTERVAL_SECONDS. */
    jobs: {
      settle: () => settleDue(store, now),
    },
  };
}

export type Domain = ReturnType<typeof createDomain>;
