import { createHash } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import type { Caller, Now } from "../domain/context.ts";
import { DomainError } from "../domain/errors.ts";
import type { AppStore, IdempotencyDoc } from "../domain/records.ts";
import { iso } from "../domain/time.ts";
import { DuplicateKeyError } from "../store/port.ts";

// DESIGN §4, Idempotency-Key on every POST. The record lives in the store, so it holds across
// instances: the first request inserts an in-flight record (the insert is the lock), later ones with
// the same key either replay the stored response byte for byte, get 409 while the first is running,
// or 422 when they carry a different request. Responses that failed with 5xx are forgotten, so the
// client's retry runs again. Request-validation failures never reach this middleware, as in Stripe.

/** How long an in-flight record blocks retries if its instance died before finishing. */
const IN_FLIGHT_LOCK_MS = 60_000;

const STORED_HEADERS = ["content-type"] as const;

export interface IdempotencyOptions {
  store: AppStore;
  now: Now;
  ttlSeconds: number;
  logger: Logger;
}

const recordId = (caller: Caller, key: string) => `${caller.livemode ? "live" : "test"}:${key}`;

function requestHash(req: Request): string {
  return createHash("sha256")
    .update(`${req.method} ${req.baseUrl}${req.path}\n${JSON.stringify(req.body ?? null)}`)
    .digest("hex");
}

export function idempotency(options: IdempotencyOptions, config: { storeResponse: boolean } = { storeResponse: true }) {
  const { store, now, ttlSeconds, logger } = options;

  /** Takes the key for this request, or answers for it. Returns the record id when this request now owns the key. */
  async function claim(req: Request, res: Response, key: string): Promise<string | null> {
    const caller = res.locals.caller as Caller;
    const id = recordId(caller, key);
    const hash = requestHash(req);
    for (let attempt = 0; attempt < 3; attempt++) {
      const at = now();
      const record: IdempotencyDoc = {
        id,
        livemode: caller.livemode,
        created_at: iso(at),
        request_hash: hash,
        state: "in_flight",
        locked_until: iso(new Date(at.getTime() + IN_FLIGHT_LOCK_MS)),
        status: null,
        headers: null,
        body: null,
        expires_at: iso(new Date(at.getTime() + ttlSeconds * 1000)),
      };
      try {
        await store.insert("idempotency", record);
        return id;
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      const existing = await store.get("idempotency", id);
      if (!existing) continue; // expired and swept meanwhile: try to claim again
      if (existing.expires_at <= iso(at)) {
        await store.delete("idempotency", id, { expires_at: existing.expires_at });
        continue;
      }
      if (existing.request_hash !== hash) {
        throw new DomainError(
          "idempotency_key_reused",
          "This Idempotency-Key was already used with a different request; use a new key for a new request.",
          { param: "Idempotency-Key" },
        );
      }
      if (existing.state === "done") {
        replay(res, existing);
        return null;
      }
      if (existing.locked_until > iso(at)) {
        throw new DomainError(
          "idempotency_request_in_progress",
          "A request with this Idempotency-Key is still being processed; retry shortly.",
          { param: "Idempotency-Key" },
        );
      }
      // The first request's instance died mid-flight: take the key over, conditionally, so only one retry does.
      const taken = await store.update(
        "idempotency",
        id,
        { set: { locked_until: record.locked_until } },
        { state: "in_flight", locked_until: existing.locked_until },
      );
      if (taken) return id;
    }
    throw new DomainError("idempotency_request_in_progress", "Could not claim the Idempotency-Key; retry shortly.", {
      param: "Idempotency-Key",
    });
  }

  function replay(res: Response, record: IdempotencyDoc): void {
    for (const [name, value] of Object.entries(record.headers ?? {})) res.setHeader(name, value);
    res.setHeader("Idempotent-Replayed", "true");
    res.status(record.status ?? 200).end(record.body ?? "");
  }

  return async function idempotencyMiddleware(req: Request, res: Response, next: NextFunction) {
    const key = req.get("Idempotency-Key");
    if (key === undefined) return next();
    let id: string | null;
    try {
      id = await claim(req, res, key);
    } catch (err) {
      return next(err);
    }
    if (id === null) return; // replayed
    const owned = id;

    // Capture the final bytes at res.send (res.json and the response validator both end there) and
    // store them before they go out, so an immediate retry already sees the finished record.
    const send = res.send.bind(res);
    res.send = ((body?: unknown) => {
      const status = res.statusCode;
      const text = typeof body === "string" ? body : Buffer.isBuffer(body) ? body.toString("utf8") : String(body ?? "");
      const settle =
        status >= 500 || !config.storeResponse
          ? store.delete("idempotency", owned)
          : store.update("idempotency", owned, {
              set: {
                state: "done",
                status,
                body: text,
                headers: Object.fromEntries(
                  STORED_HEADERS.flatMap((h) => {
                    const v = res.getHeader(h);
                    return v === undefined ? [] : [[h, String(v)]];
                  }),
                ),
              },
            });
      settle.then(
        () => send(body),
        (err: unknown) => {
          logger.error({ err, idempotency_key: owned }, "could not store the idempotent response");
          send(body);
        },
      );
      return res;
    }) as Response["send"];
    next();
  };
}
