import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import type { SettingsOf } from "../kernel/settings.ts";
import type { ServiceKeys } from "../service-keys/service-keys.ts";
import { type ConsoleSessions, createConsoleSessions } from "./console-sessions.ts";
import { consoleSessionCollections } from "./records.ts";

// Developer-console sessions (the console's sign-in), as the list of areas sees them (domain/areas.ts).

type Needs = { serviceKeys: ServiceKeys };
type Deps = {
  settings: SettingsOf<"consoleSessions">;
  /** In a sandbox on demand's domain: its sessions live in its store, their tokens end with its tag. */
  sandbox?: { id: string; name: string; keyTag: string } | undefined;
};

export const consoleSessionsArea = {
  name: "console-sessions",
  collections: consoleSessionCollections,
  idPrefixes: [],
  machines: [],
  make: ({
    store,
    now,
    needs,
    deps,
  }: AreaContext<typeof consoleSessionCollections, Needs, Deps>): {
    consoleSessions: ConsoleSessions;
  } => ({
    consoleSessions: createConsoleSessions({
      store,
      now,
      serviceKeys: needs.serviceKeys,
      ttlSeconds: deps.settings.consoleSessions.ttlSeconds,
      sandbox: deps.sandbox,
    }),
  }),
  jobs: (_ctx: unknown, { consoleSessions }: { consoleSessions: ConsoleSessions }) => ({
    /** Deletes console sessions past their end. */
    sweepConsoleSessions: () => consoleSessions.sweep(),
  }),
} as const satisfies AreaDeclaration;
