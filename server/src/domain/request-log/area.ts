import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import type { SettingsOf } from "../kernel/settings.ts";
import { requestLogHandlers } from "./handlers.ts";
import { requestLogCollections } from "./records.ts";
import { createRequestLog, type RequestLog } from "./request-log.ts";

// The console's request log (spec/resources/request-log.tsp), as the list of areas sees it (domain/areas.ts).

type Deps = { settings: SettingsOf<"requestLog"> };

export const requestLogArea = {
  name: "request-log",
  collections: requestLogCollections,
  idPrefixes: ["req"],
  machines: [],
  make: ({
    store,
    now,
    deps,
  }: AreaContext<typeof requestLogCollections, unknown, Deps>): { requestLog: RequestLog } => ({
    requestLog: createRequestLog(store, now, deps.settings.requestLog.retentionDays),
  }),
  handlers: requestLogHandlers,
  jobs: (_ctx: unknown, { requestLog }: { requestLog: RequestLog }) => ({
    /** Deletes request-log records older than the retention period. */
    sweepRequestLog: () => requestLog.sweep(),
  }),
} as const satisfies AreaDeclaration;
