import type { Schemas } from "../kernel/operations.ts";
import type { RequestLogDoc } from "./records.ts";

/** A request-log record (RequestLogEntry); records are only ever written for requests made with a key. */
export const requestLogEntry = (r: RequestLogDoc): Schemas["RequestLogEntry"] => ({
  id: r.id,
  object: "request_log_entry",
  method: r.method,
  path: r.path,
  status: r.status,
  latency_ms: r.latency_ms,
  key_id: r.key_id ?? null,
  key_prefix: r.key_prefix ?? "",
  source: r.source ?? "api",
  livemode: r.livemode,
  created_at: r.created_at,
});
