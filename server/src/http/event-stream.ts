import type { Request, Response } from "express";
import type { EventStreamBody } from "../domain/kernel/operations.ts";

// The transport of a streaming operation (GET /v1/events/stream, the contract's EventStream): server-sent
// events over a response that stays open. The domain gives the messages (kernel/operations.ts
// EventStreamBody); this writes them, keeps the connection alive through proxies with a comment line
// every HEARTBEAT_MS, and stops when the client goes away (the request closes) or the messages end (the
// server shuts down: domain/webhooks/events.ts ends every stream). The response validator sees only
// res.json answers, so a stream goes out as the contract's `text/event-stream` string, unvalidated.

/** A comment line this often keeps idle streams open through proxies that cut silent connections. */
export const HEARTBEAT_MS = 15_000;

export function isEventStream(body: unknown): body is EventStreamBody {
  return typeof body === "object" && body !== null && (body as { kind?: unknown }).kind === "event-stream";
}

/** `text` as the lines of one SSE field: a value with newlines becomes one field line per line. */
function field(name: string, text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => `${name}: ${line}\n`)
    .join("");
}

export async function writeEventStream(
  req: Request,
  res: Response,
  status: number,
  body: EventStreamBody,
  heartbeatMs = HEARTBEAT_MS,
): Promise<void> {
  const closed = new AbortController();
  req.on("close", () => closed.abort());
  res.on("close", () => closed.abort());
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
    if (!res.writableEnded) res.end();
  }
}
