import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import type { Caller, Now } from "../domain/context.ts";
import { newId } from "../domain/ids.ts";
import { maskCardNumbers } from "../domain/mask.ts";
import type { AppStore } from "../domain/records.ts";

/**
 * Gives every request an id (sent back as `Request-Id`), and when the response is finished writes one
 * log line (request id, method, path, status, latency, key prefix) and, if enabled, one request-log
 * record for the console. Paths are masked here as well as by the logger, because the store has no
 * logger hook.
 */
export function observability(deps: { logger: Logger; store: AppStore; now: Now; requestLog: boolean }) {
  const { logger, store, now, requestLog } = deps;
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const requestId = newId("req");
    res.locals.requestId = requestId;
    res.setHeader("Request-Id", requestId);
    res.on("finish", () => {
      const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
      const caller = res.locals.caller as Caller | undefined;
      const path = maskCardNumbers(req.originalUrl);
      const line = {
        request_id: requestId,
        method: req.method,
        path,
        status: res.statusCode,
        latency_ms: Math.round(latencyMs * 100) / 100,
        key_prefix: caller?.keyPrefix ?? null,
      };
      logger.info(line, "request");
      if (requestLog) {
        store
          .insert("request_log", {
            id: requestId,
            livemode: caller?.livemode ?? false,
            created_at: now().toISOString(),
            ...line,
          })
          .catch((err: unknown) => logger.warn({ err }, "could not write the request log"));
      }
    });
    next();
  };
}
