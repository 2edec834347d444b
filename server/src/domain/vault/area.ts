import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import type { VaultKeys } from "./crypto.ts";
import { vaultHandlers } from "./handlers.ts";
import { vaultCollections } from "./records.ts";
import { createTokens, type Tokens } from "./tokens.ts";

// The vault (spec/resources/tokens.tsp): card tokens and their audited reveals (domain/areas.ts).

export const vaultArea = {
  name: "vault",
  collections: vaultCollections,
  idPrefixes: ["tok", "aud"],
  machines: [],
  make: ({
    store,
    clock,
    deps,
  }: AreaContext<typeof vaultCollections, unknown, { vaultKeys: VaultKeys }>): {
    tokens: Tokens;
  } => ({ tokens: createTokens(store, deps.vaultKeys, clock) }),
  handlers: vaultHandlers,
} as const satisfies AreaDeclaration;
