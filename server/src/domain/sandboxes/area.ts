import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { sandboxHandlers } from "./handlers.ts";
import { sandboxCollections } from "./records.ts";
import { createSandboxes, type Sandboxes, type SandboxHost } from "./sandboxes.ts";

// Sandboxes on demand (spec/resources/sandboxes.tsp), as the list of areas sees them (domain/areas.ts).
// The host port (server/src/sandboxes/host.ts) is absent in a domain that hosts none: a sandbox's own.

type Deps = {
  vaultKeys: VaultKeys;
  sandboxHost?: SandboxHost | undefined;
  sandbox?: { id: string } | undefined;
};

export const sandboxesArea = {
  name: "sandboxes",
  collections: sandboxCollections,
  idPrefixes: ["sbx"],
  machines: [],
  make: ({ store, clock, deps }: AreaContext<typeof sandboxCollections, unknown, Deps>): { sandboxes: Sandboxes } => ({
    sandboxes: createSandboxes({ store, clock, vaultKeys: deps.vaultKeys }, deps),
  }),
  handlers: sandboxHandlers,
} as const satisfies AreaDeclaration;
