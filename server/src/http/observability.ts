import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import type { AppStore } from "../domain/areas.ts";
import type { Now } from "../domain/kernel/caller.ts";
import { newId } from "../domain/kernel/ids.ts";
import { displayUrl } from "../domain/kernel/mask.ts";
import { createdAt } from "../domain/kernel/time.ts";
import type { RequestLogDoc } from "../domain/request-log/records.ts";
import { isOpenApiRequest, locals } from "./locals.ts";

/** How long a request-log record may wait in memory before it is written. */
export const REQUEST_LOG_FLUSH_MS = 200;
/** A batch this large is written at once instead of waiting for the timer. */
export const REQUEST_LOG_MAX_BATCH = 250;

/**
 * Writes request-log records in batches: one store transaction per batch instead of one insert (one
 * commit, on SQLite a WAL append) per request. A record waits at most `flushMs` (or until `maxRows`
 * are buffered); close() writes what is left, and RunningServer.close() calls it before the store
 * closes. Records still buffered when the process dies without closing are lost, as an insert in
 * flight was before: the request log is for the console, not an audit trail.
 */
export interface RequestLogWriter {
  record(row: RequestLogDoc): void;
  /** Writes everything recorded so far; resolves once it is stored (or the failure was logged). */
  flush(): Promise<void>;
  /** flush(), after which every record is written at once. */
  close(): Promise<void>;
}

export function requestLogWriter(deps: {
  store: AppStore;
  logger: Logger;
  flushMs?: number;
  maxRows?: number;
}): RequestLogWriter {
  const { store, logger } = deps;
  const flushMs = deps.flushMs ?? REQUEST_LOG_FLUSH_MS;
  const maxRows = deps.maxRows ?? REQUEST_LOG_MAX_BATCH;
  let buffer: RequestLogDoc[] = [];
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  /** Batches are written one after another, so flush() can wait for every earlier one. */
  let writing: Promise<void> = Promise.resolve();

  async function write(rows: RequestLogDoc[]): Promise<void> {
    try {
      await store.transaction(async (tx) => {
        for (const row of rows) await tx.insert("request_log", row);
      });
      return;
    } catch {
      // Retried one record at a time below, so one bad record does not take the rest of its batch along.
    }
    let failed = 0;
    let error: unknown;
    for (const row of rows) {
      try {
        await store.insert("request_log", row);
      } catch (err) {
        failed++;
        error = err;
      }
    }
    if (failed > 0) logger.warn({ err: error, records: failed }, "could not write the request log");
  }

  function flush(): Promise<void> {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (buffer.length > 0) {
      const rows = buffer;
      buffer = [];
      writing = writing.then(() => write(rows));
    }
    return writing;
  }

  return {
    record(row) {
      buffer.push(row);
      if (closed || buffer.length >= maxRows) {
        void flush();
      } else if (timer === null) {
        timer = setTimeout(flush, flushMs);
        // A pending batch alone must not keep the process alive; close() writes it.
        timer.unref();
      }
    },
    flush,
    close() {
      closed = true;
      return flush();
    },
  };
}

/**
 * What the request metrics are told about each finished request (adapters/metrics.ts counts them for
 * /metrics, docs/operating.md "Metrics"). Operations are the contract's operationIds, never paths, so
 * the number of series stays bounded whatever paths clients send.
 */
export interface RequestMetrics {
  /** Every request: its operation (OTHER_OPERATION when it is not one), its status and how long it took. */
  request(operation: string, status: number, seconds: number): void;
  /** An answer replayed for a repeated Idempotency-Key (`Idempotent-Replayed: true`). */
  replayed(operation: string): void;
  /** A request refused with 429 by the rate limiter named (http/rate-limits.ts). */
  rateLimited(limit: string): void;
}

/** The operation label of a request that is not a contract operation: pages, /docs, unknown paths. */
export const OTHER_OPERATION = "other";

/**
 * The contract operation a request is for. The validator has matched most requests already (its
 * `req.openapi`); those refused before it (401 without a valid key, 429, a body too large) are matched
 * here against the contract's path templates.
 */
export function operationResolver(
  operations: readonly { operationId: string; method: string; path: string }[],
): (req: Request) => string {
  const templates = operations.map((op) => ({
    method: op.method.toUpperCase(),
    pattern: new RegExp(`^${op.path.replace(/\{\w+\}/g, "[^/]+")}$`),
    operationId: op.operationId,
  }));
  return (req) => {
    const matched = isOpenApiRequest(req) ? req.openapi?.schema?.operationId : undefined;
    if (typeof matched === "string") return matched;
    const method = req.method === "HEAD" ? "GET" : req.method;
    const path = req.path.startsWith("/console/api/") ? req.path.slice("/console/api".length) : req.path;
    return templates.find((t) => t.method === method && t.pattern.test(path))?.operationId ?? OTHER_OPERATION;
  };
}

/**
 * `Server-Timing: app;dur=<ms>` on every answer (docs/api.md "Conventions"): the server's own time, from
 * this middleware (the first to see the request) to the moment the answer's head is written, so an
 * integrator can tell it from the network's. Set in writeHead, which every way of answering goes
 * through (res.json, res.send, res.end, an event stream's first write), when the time is known.
 */
function serverTiming(res: Response, started: bigint): void {
  const writeHead = res.writeHead;
  // The casts: writeHead is overloaded (with or without a status message), and this passes its arguments
  // through whichever it is; an overloaded function cannot be written as one implementation without them.
  res.writeHead = function (this: Response, ...args: unknown[]) {
    if (!this.headersSent) {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      this.setHeader("Server-Timing", `app;dur=${ms.toFixed(1)}`);
    }
    return (writeHead as (...a: unknown[]) => Response).apply(this, args); // cast: as above
  } as typeof res.writeHead;
}

/** The longest path and query kept in a log line or a request-log record; longer ones are cut. */
export const MAX_LOGGED_URL = 1024;

/**
 * Gives every request an id (sent back as `Request-Id`), and when the response is finished writes one
 * log line (request id, method, path, status, latency, key prefix) and, if a request log is given, one
 * request-log record for the console. Paths are decoded, masked and cut here, as well as masked by the
 * logger, because the store has no logger hook. Only requests made with a valid service key reach the
 * request log: anonymous ones (no key, a bad key) go to the log stream alone, so nobody without a key
 * can fill the store.
 */
export function observability(deps: {
  logger: Logger;
  now: Now;
  requestLog: RequestLogWriter | null;
  /**
   * Paths whose requests are never recorded in the request log and are logged at debug level only:
   * the health probes (getLiveness, getReadiness), which a load balancer calls every few seconds.
   */
  quietPaths?: ReadonlySet<string>;
  /** Request counts and latencies by operation and status, replays and rate-limit refusals (METRICS_PORT). */
  metrics?: { record: RequestMetrics; operationOf: (req: Request) => string } | undefined;
}) {
  const { logger, now, requestLog, metrics } = deps;
  const quietPaths = deps.quietPaths ?? new Set<string>();
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const requestId = newId("req");
    locals(res).requestId = requestId;
    res.setHeader("Request-Id", requestId);
    serverTiming(res, started);
    // Once per request: when the answer is finished, or when the connection closes first (a client that
    // went away, or closed an event stream: logged with how long it stayed open).
    let logged = false;
    const record = () => {
      if (logged) return;
      logged = true;
      const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (metrics) {
        const operation = metrics.operationOf(req);
        metrics.record.request(operation, res.statusCode, latencyMs / 1000);
        if (res.getHeader("Idempotent-Replayed") === "true") metrics.record.replayed(operation);
        const limit = locals(res).rateLimited;
        if (limit !== undefined) metrics.record.rateLimited(limit);
      }
      const caller = locals(res).caller;
      const path = displayUrl(req.originalUrl, MAX_LOGGED_URL);
      const line = {
        request_id: requestId,
        method: req.method,
        path,
        status: res.statusCode,
        latency_ms: Math.round(latencyMs * 100) / 100,
        key_prefix: caller?.keyPrefix ?? null,
      };
      if (quietPaths.has(req.path)) {
        logger.debug(line, "request");
        return;
      }
      // Why a presented key was refused goes to the log only; the caller gets one 401 for every reason.
      const authFailure = locals(res).authFailure;
      // A Sandbox-Simulate `timeout_after_commit` (http/sandbox-simulate.ts): the status is what committed,
      // and the line says the answer was not sent.
      const simulated = locals(res).simulated;
      const extra = { ...(authFailure ? { auth_failure: authFailure } : {}), ...(simulated ? { simulated } : {}) };
      logger.info(authFailure || simulated ? { ...line, ...extra } : line, "request");
      if (caller) {
        requestLog?.record({
          id: requestId,
          livemode: caller.livemode,
          created_at: createdAt(now()),
          ...line,
          key_id: caller.keyId,
          source: locals(res).console ? "console" : "api",
        });
      }
    };
    res.on("finish", record);
    res.on("close", record);
    next();
  };
}
