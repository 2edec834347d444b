import { type Handlers, list, page } from "../kernel/operations.ts";
import type { RequestLog } from "./request-log.ts";
import * as serialize from "./serialize.ts";

// The request log (listRequestLog in spec/resources/request-log.tsp; scope `*`).

export function requestLogHandlers({ requestLog }: { requestLog: RequestLog }) {
  return {
    listRequestLog: async ({ caller, query }) => ({
      status: 200,
      body: list(
        await requestLog.list(
          caller,
          { key_id: query.key_id, method: query.method, outcome: query.outcome },
          page(query),
        ),
        serialize.requestLogEntry,
      ),
    }),
  } satisfies Partial<Handlers>;
}
