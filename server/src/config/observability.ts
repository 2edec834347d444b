import { z } from "zod";
import { bool, group, int, type Rule, setting } from "./kit.ts";

// What operators see: logs, metrics and the request log the console shows.

export const observabilitySettings = group("observability", {
  LOG_LEVEL: setting(
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    "How much is logged: the pino level (fatal, error, warn, info, debug, trace or silent).",
  ),
  LOG_FORMAT: setting(
    z.enum(["pretty", "json"]).optional(),
    "`pretty` (human-readable lines, pino-pretty) or `json` (one JSON object a line). Default: pretty in development only.",
  ),
  METRICS_PORT: setting(
    int(0, 65535).optional(),
    'Where the Prometheus metrics are served (GET /metrics, docs/operating.md "Metrics"): a listen address of their own, never the API\'s port, so they are not public wherever the API is. Unset: no metrics are collected or served. 0: a port the system picks (logged).',
  ),
  METRICS_HOST: setting(
    z.string().min(1).default("127.0.0.1"),
    "The address the metrics listener binds (loopback by default: only this machine can scrape).",
  ),
  REQUEST_LOG: setting(bool.default(true), "Whether the request log (for the console) is written to the store."),
  REQUEST_LOG_RETENTION_DAYS: setting(
    int(1, 3650).default(30),
    "How many days request-log records are kept; older ones are deleted by a background job.",
  ),
});

/** The metrics have a listen address of their own: never the API's port. */
export const metricsApart: Rule<{ PORT: number; METRICS_PORT?: number | undefined }> = (c, problem) => {
  if (c.METRICS_PORT !== undefined && c.METRICS_PORT !== 0 && c.METRICS_PORT === c.PORT) {
    problem(
      "METRICS_PORT",
      "must differ from PORT: the metrics have a listen address of their own, apart from the API",
    );
  }
};
