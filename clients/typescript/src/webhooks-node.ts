/**
 * Receiving webhooks with Node's `http` module or Express. The signature covers the raw request body,
 * byte for byte, so these helpers verify the bytes as received: parsing the JSON first and
 * re-serializing it (what `express.json()` does) changes whitespace, key order or number forms and
 * makes every signature fail, the most common webhook support problem.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from "./webhooks.ts";

export { type WebhookEvent, WebhookVerificationError } from "./webhooks.ts";

/** Deliveries are small JSON events; a body larger than this is refused before it is read to the end. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface ReceiveOptions {
  /** The endpoint's signing secret; during a rotation, both (either is accepted). */
  secret: string | string[];
  /** How far the signature's timestamp may be from now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
  /** Largest body accepted. Default 1 MiB. */
  maxBodyBytes?: number;
}

/**
 * The request body exactly as received. Rejects with a RangeError once more than `maxBytes` arrive (the
 * rest is read and dropped, so an answer can still be sent; answer 413 with `Connection: close`).
 */
export function readRawBody(req: IncomingMessage, maxBytes = DEFAULT_MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new RangeError(`the request body is larger than ${maxBytes} bytes`);
    if (Number(req.headers["content-length"] ?? 0) > maxBytes) {
      req.resume();
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off("data", onData);
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** The raw body of a request some middleware may already have read (express.raw or express.text). */
async function rawBodyOf(req: IncomingMessage & { body?: unknown }, maxBytes: number): Promise<Buffer | string> {
  const { body } = req;
  if (Buffer.isBuffer(body) || typeof body === "string") return body;
  // Another parser read the stream (express.json): the bytes the signature covers are gone.
  if (req.readableEnded || (body !== undefined && body !== null)) {
    throw new TypeError(
      "The webhook body was parsed as JSON before verification, so its raw bytes are lost: mount " +
        "express.raw({ type: 'application/json' }) (or nothing) on the webhook route instead of express.json().",
    );
  }
  return readRawBody(req, maxBytes);
}

function headerOf(req: IncomingMessage): string | undefined {
  const value = req.headers["x-service-signature"];
  return Array.isArray(value) ? value.join(",") : value;
}

/**
 * Reads a Node `http` request's raw body and verifies its `X-Service-Signature`. Returns the event;
 * throws `WebhookVerificationError` (answer 401) when it does not verify.
 */
export async function verifyNodeRequest(req: IncomingMessage, options: ReceiveOptions): Promise<WebhookEvent> {
  const payload = await rawBodyOf(req, options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  return verifyWebhook({
    payload,
    header: headerOf(req),
    secret: options.secret,
    ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}

export interface WebhookListenerOptions extends ReceiveOptions {
  /**
   * Handles a verified event. Answer quickly: the sender waits at most its timeout (10 s by default)
   * and retries otherwise. Events may arrive more than once and out of order: deduplicate on `event.id`.
   */
  onEvent: (event: WebhookEvent, req: IncomingMessage) => void | Promise<void>;
}

/**
 * A request listener for `http.createServer`: 401 for a delivery that does not verify, 200 once
 * `onEvent` has handled one, 500 (so the delivery is retried) when `onEvent` throws, 413 for a body
 * over the limit.
 */
export function webhookListener(options: WebhookListenerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const answer = (status: number, text: string) => {
      if (res.headersSent) return;
      const close = status === 413 ? { connection: "close" } : {};
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...close }).end(text);
    };
    if (req.method !== "POST") return answer(405, "POST only");
    verifyNodeRequest(req, options).then(
      (event) =>
        Promise.resolve()
          .then(() => options.onEvent(event, req))
          .then(
            () => answer(200, "ok"),
            () => answer(500, "the event could not be handled"),
          ),
      (err: unknown) => {
        if (err instanceof WebhookVerificationError) answer(401, err.reason);
        else if (err instanceof RangeError) answer(413, "body too large");
        else answer(400, "unreadable request");
      },
    );
  };
}

/** The parts of Express's request and response the middleware uses (the client does not depend on Express). */
type ExpressRequest = IncomingMessage & { body?: unknown; webhookEvent?: WebhookEvent };
type ExpressResponse = ServerResponse & { locals?: Record<string, unknown> };

/**
 * Express middleware for a webhook route: verifies the raw body and puts the event on
 * `req.webhookEvent` (and `res.locals.webhookEvent`), or answers 401. Use it on its own or after
 * `express.raw({ type: "application/json" })`; never after `express.json()` (that fails loudly).
 *
 * ```ts
 * app.post("/webhooks", expressWebhookMiddleware({ secret: process.env.WEBHOOK_SECRET! }), (req, res) => {
 *   const event = req.webhookEvent; // typed by the contract; switch on event.type
 *   res.sendStatus(200);
 * });
 * ```
 */
export function expressWebhookMiddleware(
  options: ReceiveOptions,
): (req: ExpressRequest, res: ExpressResponse, next: (err?: unknown) => void) => void {
  return (req, res, next) => {
    verifyNodeRequest(req, options).then(
      (event) => {
        req.webhookEvent = event;
        if (res.locals) res.locals.webhookEvent = event;
        next();
      },
      (err: unknown) => {
        if (err instanceof WebhookVerificationError) {
          res.writeHead(401, { "content-type": "text/plain; charset=utf-8" }).end(err.reason);
        } else if (err instanceof RangeError) {
          res
            .writeHead(413, { "content-type": "text/plain; charset=utf-8", connection: "close" })
            .end("body too large");
        } else {
          next(err);
        }
      },
    );
  };
}

declare module "node:http" {
  interface IncomingMessage {
    /** Set by `expressWebhookMiddleware` once the delivery verified. */
    webhookEvent?: WebhookEvent;
  }
}
