import type { Page, PageResult, Where } from "../../store/port.ts";
import type { Caller, Now } from "../kernel/caller.ts";
import type { QueryParams } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import { FAILED_FROM, type RequestLogDoc, type RequestLogStore } from "./records.ts";

// The request log (the contract's listRequestLog, spec/resources/request-log.tsp): what the HTTP layer
// recorded for each request made with a valid key (server/src/http/observability.ts), read back
// newest first within the caller's environment. Records are written masked; nothing here unmasks.

/** listRequestLog's filters (its query parameters in the contract). */
export type RequestLogFilter = Pick<QueryParams<"listRequestLog">, "key_id" | "method" | "outcome">;

export function createRequestLog(store: RequestLogStore, now: Now, retentionDays: number): RequestLog {
  return {
    /** Deletes records older than the retention period (REQUEST_LOG_RETENTION_DAYS); returns how many. */
    sweep: () =>
      // Both environments named, so the listing index (livemode, created_at, id) serves the sweep and the
      // log needs no index on created_at alone (issue 36: 39 bytes per request).
      store.deleteMany("request_log", {
        livemode: { $in: [false, true] },
        created_at: { $lt: iso(new Date(now().getTime() - retentionDays * 86_400_000)) },
      }),

    list(caller: Caller, filter: RequestLogFilter, page: Page): Promise<PageResult<RequestLogDoc>> {
      const where: Where<RequestLogDoc> = { livemode: caller.livemode };
      if (filter.key_id !== undefined) where.key_id = filter.key_id;
      if (filter.method !== undefined) where.method = filter.method;
      if (filter.outcome !== undefined)
        where.status = filter.outcome === "failed" ? { $gte: FAILED_FROM } : { $lt: FAILED_FROM };
      return store.list("request_log", where, page);
    },
  };
}

/** The request log's service (the console's request log). */
export interface RequestLog {
  /** Deletes records older than the retention period (REQUEST_LOG_RETENTION_DAYS); returns how many. */
  sweep: () => Promise<number>;
  list(caller: Caller, filter: RequestLogFilter, page: Page): Promise<PageResult<RequestLogDoc>>;
}
