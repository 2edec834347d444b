/**
 * Forwarding webhooks to a local receiver, from any server: `listen()` follows the server's event stream
 * (GET /v1/events/stream, server-sent events, scope `webhooks`) with a service key and POSTs each event
 * to a local URL, signed with a secret of its own exactly as the server signs a delivery
 * (`X-Service-Signature`), so the receiver verifies it as it would a real one. After a dropped
 * connection it reconnects with `Last-Event-ID`, so no event is lost or repeated.
 */
import { randomInt } from "node:crypto";
import { SIGNATURE_HEADER, signWebhookPayload } from "./webhooks.ts";

export interface ListenOptions {
  /** The server's address, e.g. `http://127.0.0.1:3000` or a shared sandbox's. */
  baseUrl: string;
  /** A service key with the `webhooks` scope (or `*`). */
  apiKey: string;
  /** Where each event is POSTed; omit to only receive them. */
  forwardTo?: string | undefined;
  /** Only these event types; all when absent. */
  types?: readonly string[] | undefined;
  /** The signing secret (`whsec_…`); a fresh one when absent, readable as `secret` on the result. */
  secret?: string | undefined;
  /** Resume after this event id (what a previous run's last line printed). */
  lastEventId?: string | undefined;
  /** Stops listening. */
  signal?: AbortSignal | undefined;
  /** Waits this long before reconnecting after a dropped connection (default 1000 ms). */
  reconnectDelayMs?: number | undefined;
  /** Gives up on a forward after this long (default 10 s, the server's own delivery timeout). */
  forwardTimeoutMs?: number | undefined;
  /** Called for each event once it was forwarded (or received, without `forwardTo`). */
  onEvent?: (event: ListenedEvent) => void;
  /** Called when the stream drops or cannot be opened, before the reconnect. */
  onDisconnect?: (reason: string) => void;
  fetch?: typeof fetch;
}

export interface ListenedEvent {
  id: string;
  type: string;
  /** The event, exactly as the stream's `data:` carried it (the body a delivery would have). */
  body: string;
  /** The local receiver's status, or the error that prevented an answer; null without `forwardTo`. */
  forwarded: { status: number } | { error: string } | null;
}

export interface Listener {
  /** The secret the forwarded requests are signed with: give it to the local receiver. */
  secret: string;
  /** Resolves when listening stops (the signal aborted), with the last event id received. */
  done: Promise<string | undefined>;
}

/** Thrown when the server refuses the stream itself (a bad key, a missing scope): reconnecting cannot help. */
export class ListenError extends Error {
  override readonly name = "ListenError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A signing secret of the server's own shape: `whsec_` and 32 base62 characters. */
export function newSigningSecret(): string {
  let out = "whsec_";
  for (let i = 0; i < 32; i++) out += BASE62[randomInt(62)];
  return out;
}

interface SseMessage {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** Parses server-sent events from a byte stream (the HTML Living Standard's rules, minus `retry`). */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  let id: string | undefined;
  let event: string | undefined;
  let data: string[] = [];
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.search(/\r\n|\r|\n/);
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      newline = buffer.search(/\r\n|\r|\n/);
      if (line === "") {
        if (data.length > 0) yield { id, event, data: data.join("\n") };
        event = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue; // a comment: the keep-alive
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (name === "id") id = value;
      else if (name === "event") event = value;
      else if (name === "data") data.push(value);
    }
  }
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

export function listen(options: ListenOptions): Listener {
  const secret = options.secret ?? newSigningSecret();
  const doFetch = options.fetch ?? fetch;
  const { signal } = options;
  const streamUrl = new URL("/v1/events/stream", options.baseUrl);
  for (const type of options.types ?? []) streamUrl.searchParams.append("type", type);

  async function forward(message: SseMessage & { id: string }): Promise<ListenedEvent["forwarded"]> {
    if (!options.forwardTo) return null;
    try {
      const res = await doFetch(options.forwardTo, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "PaymentsListen/1.0",
          [SIGNATURE_HEADER.toLowerCase()]: signWebhookPayload({ payload: message.data, secret }),
          "x-service-event-id": message.id,
        },
        body: message.data,
        signal: AbortSignal.timeout(options.forwardTimeoutMs ?? 10_000),
      });
      await res.body?.cancel();
      return { status: res.status };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  async function run(): Promise<string | undefined> {
    let lastId = options.lastEventId;
    while (!signal?.aborted) {
      let reason: string;
      try {
        const res = await doFetch(streamUrl, {
          headers: {
            authorization: `Bearer ${options.apiKey}`,
            accept: "text/event-stream",
            ...(lastId ? { "last-event-id": lastId } : {}),
          },
          ...(signal ? { signal } : {}),
        });
        if (res.status === 401 || res.status === 403 || res.status === 400 || res.status === 404) {
          const problem = (await res.json().catch(() => ({}))) as { detail?: string };
          throw new ListenError(res.status, problem.detail ?? `the server answered ${res.status}`);
        }
        if (res.status !== 200 || !res.body) {
          await res.body?.cancel();
          reason = `the server answered ${res.status}`;
        } else {
          for await (const message of sseMessages(res.body)) {
            if (message.id === undefined) continue;
            const id = message.id;
            const forwarded = await forward({ ...message, id });
            lastId = id;
            options.onEvent?.({ id, type: message.event ?? "message", body: message.data, forwarded });
          }
          reason = "the server closed the stream";
        }
      } catch (err) {
        if (err instanceof ListenError) throw err;
        if (signal?.aborted) break;
        reason = err instanceof Error ? err.message : String(err);
      }
      if (signal?.aborted) break;
      options.onDisconnect?.(reason);
      await sleep(options.reconnectDelayMs ?? 1000, signal);
    }
    return lastId;
  }

  return { secret, done: run() };
}
