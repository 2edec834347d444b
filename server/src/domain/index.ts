import type { Now } from "./context.ts";
import { createEvents } from "./events.ts";
import { createMerchants } from "./merchants.ts";
import type { AppStore } from "./records.ts";
import { createServiceKeys } from "./service-keys.ts";
import { createTokens } from "./tokens.ts";
import type { VaultKeys } from "./vault/crypto.ts";

/** Every use case, wired to one store. Knows nothing of HTTP or of which database is behind the store. */
export function createDomain(deps: { store: AppStore; vaultKeys: VaultKeys; now?: Now }) {
  const now = deps.now ?? (() => new Date());
  return {
    merchants: createMerchants(deps.store, now),
    tokens: createTokens(deps.store, deps.vaultKeys, now),
    serviceKeys: createServiceKeys(deps.store, now),
    events: createEvents(deps.store),
  };
}

export type Domain = ReturnType<typeof createDomain>;
