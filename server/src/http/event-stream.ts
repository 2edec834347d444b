import type { Request, Response } from "express";
import type { EventStreamBody } from "../domain/kernel/operations.ts";
import { AUTH_CACHE_TTL_MS } from "../domain/service-keys/service-keys.ts";
import { RENEW_MS, type StreamLeases } from "../domain/webhooks/stream-leases.ts";
import { isRecord } from "../guards.ts";
import { sendProblem } from "./errors.ts";
import { authenticatedCaller, locals } from "./locals.ts";
import { problem } from "./problems.ts";

// The transport of a streaming operation (GET /v1/events/stream, the contract's EventStream): server-sent
// events over a response that stays open. The domain gives the messages (kernel/operations.ts
// EventStreamBody); this writes them, keeps the connection alive through proxies with a comment line
// every HEARTBEAT_MS, and stops when the client goes away (the request closes) or the messages end (the
// server shuts down: domain/webhooks/events.ts ends every stream). The response validator sees only
// res.json answers, so a stream goes out as the contract's `text/event-stream` string, unvalidated.
//
// A stream is one request that lasts, so what a request is checked for once is checked again while it
// lasts (streamEvents in spec/resources/events.tsp): its credential every AUTH_CACHE_TTL_MS, as the
// next request with it would be (a key revoked, expired or rotated past its grace period, a console
// session ended), and the stream ends when that fails; and a key holds at most EVENT_STREAMS_PER_KEY
// streams open at once across every instance on the store (429 with Retry-After beyond: a slot leased
// in the store and renewed while the stream is open, domain/webhooks/stream-leases.ts), so one key
// cannot make every commit wake hundreds of streams, however many workers there are.

/** A comment line this often keeps idle streams open through proxies that cut silent connections. */
export const HEARTBEAT_MS = 15_000;

export function isEventStream(body: unknown): body is EventStreamBody {
  return isRecord(body) && body.kind === "event-stream";
}

/** `text` as the lines of one SSE field: a value with newlines becomes one field line per line. */
function field(name: string, text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => `${name}: ${line}\n`)
    .join("");
}

/** Retry-After of a stream refused for the number already open: a moment, not a window to wait out. */
export const STREAMS_RETRY_AFTER_SECONDS = 5;

/** Whether the credential a request was made with is still good (locals(res).stillAuthorized, auth.ts). */
export type CredentialCheck = () => Promise<boolean>;

export interface StreamSettings {
  /** Streams one key may hold open at once, across every instance on the store (EVENT_STREAMS_PER_KEY). */
  perKey: number;
  /** The slots they are counted with, in the store. */
  leases: StreamLeases;
  /** How often an open stream renews its slot (default RENEW_MS). */
  renewMs?: number;
  /** How often an open stream checks its credential again (default AUTH_CACHE_TTL_MS). */
  recheckMs?: number;
  heartbeatMs?: number;
}

/**
 * The server's open event streams: counted per key in the store, each ended once its credential no
 * longer holds. One per app (createApp), handed to every operation's Express handler (handlers.ts).
 */
export function eventStreams(settings: StreamSettings) {
  const recheckMs = settings.recheckMs ?? AUTH_CACHE_TTL_MS;
  const renewMs = settings.renewMs ?? RENEW_MS;
  return {
    async write(req: Request, res: Response, status: number, body: EventStreamBody): Promise<void> {
      const caller = authenticatedCaller(res);
      const lease = await settings.leases.acquire(caller.keyId, caller.livemode, settings.perKey);
      if (lease === null) {
        locals(res).rateLimited = "event_streams";
        res.setHeader("Retry-After", String(STREAMS_RETRY_AFTER_SECONDS));
        sendProblem(
          res,
          problem(
            "rate_limited",
            `This key already has ${settings.perKey} event streams open, the most it may have at once (EVENT_STREAMS_PER_KEY): close one, or retry after the number of seconds in Retry-After.`,
            { requestId: String(locals(res).requestId ?? "") },
          ),
        );
        return;
      }
      // The slot is renewed while the stream is open; a slot lost (this instance stalled past its lease
      // and another stream took it) ends the stream. A renewal the store cannot make now is tried again
      // at the next one: the lease outlasts two missed renewals.
      const lost = new AbortController();
      const renewal = setInterval(() => {
        lease.renew().then(
          (held) => held || lost.abort(),
          () => {},
        );
      }, renewMs);
      renewal.unref();
      try {
        await writeEventStream(req, res, status, body, {
          heartbeatMs: settings.heartbeatMs,
          recheckMs,
          stillAuthorized: locals(res).stillAuthorized,
          signal: lost.signal,
        });
      } finally {
        clearInterval(renewal);
        await lease.release().catch(() => {});
      }
    },
  };
}

export type EventStreams = ReturnType<typeof eventStreams>;

export async function writeEventStream(
  req: Request,
  res: Response,
  status: number,
  body: EventStreamBody,
  options: {
    heartbeatMs?: number | undefined;
    recheckMs?: number;
    stillAuthorized?: CredentialCheck | undefined;
    /** Ends the stream when aborted (its slot lost). */
    signal?: AbortSignal;
  } = {},
): Promise<void> {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const closed = new AbortController();
  options.signal?.addEventListener("abort", () => closed.abort(), { once: true });
  req.on("close", () => closed.abort());
  res.on("close", () => closed.abort());
  // The credential, checked again on a timer: the stream ends (its messages stop, the response ends)
  // once it fails, or cannot be confirmed (the store unreachable: the client reconnects with
  // Last-Event-ID, and is checked as any request is).
  const { stillAuthorized } = options;
  let checking = false;
  const recheck =
    stillAuthorized === undefined
      ? undefined
      : setInterval(() => {
          if (checking || closed.signal.aborted) return;
          checking = true;
          stillAuthorized()
            .then(
              (ok: boolean) => ok || closed.abort(),
              () => closed.abort(),
            )
            .finally(() => {
              checking = false;
            });
        }, options.recheckMs ?? AUTH_CACHE_TTL_MS);
  recheck?.unref();
  res.status(status);
  res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
  res.setHeader("Cache-Control", "no-cache, no-transform");
  // Reverse proxies (nginx) otherwise buffer the stream.
  res.setHeader("X-Accel-Buffering", "no");
  res.flushHeaders();
  const write = (text: string): Promise<void> | undefined => {
    if (closed.signal.aborted || res.writableEnded) return undefined;
    if (res.write(text)) return undefined;
    return new Promise((resolve) => {
      const done = () => {
        res.off("drain", done);
        closed.signal.removeEventListener("abort", done);
        resolve();
      };
      res.on("drain", done);
      closed.signal.addEventListener("abort", done, { once: true });
    });
  };
  // A first comment, so a client knows at once that the stream is open.
  await write(": connected\n\n");
  const heartbeat = setInterval(() => void write(": keep-alive\n\n"), heartbeatMs);
  heartbeat.unref();
  try {
    for await (const message of body.messages(closed.signal)) {
      await write(`${field("id", message.id)}${field("event", message.event)}${field("data", message.data)}\n`);
      if (closed.signal.aborted) break;
    }
  } finally {
    clearInterval(heartbeat);
    if (recheck !== undefined) clearInterval(recheck);
    if (!res.writableEnded) res.end();
  }
}
