import { type AgentOptions, Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

// The `fetch` the Adyen client (openapi-fetch) sends through: Node's own http/https with a keep-alive
// agent per connector (one TLS handshake per connection, not per payment) and a hard time-out per request
// covering connect, send and the whole answer. A request that times out may still have reached Adyen:
// the caller treats it as in doubt and repeats it with the same Idempotency-Key (never a fresh one).
//
// Node's global fetch cannot take an agent or a per-request socket time-out without importing undici,
// which the server does not depend on; this small adapter keeps the dependency list as it is.

export interface TransportOptions {
  /** Whole-request time-out in milliseconds (connect to last byte of the answer). */
  timeoutMs: number;
  /** Most connections kept open to Adyen at once. */
  maxSockets: number;
}

/** Raised when a request gets no complete answer in time, or the connection fails. */
export class TransportError extends Error {
  readonly kind: "timeout" | "network";
  constructor(kind: "timeout" | "network", message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TransportError";
    this.kind = kind;
  }
}

export interface Transport {
  fetch(input: Request): Promise<Response>;
  /** Closes the idle kept-alive connections (at shutdown, and in tests). */
  close(): void;
}

export function createTransport(options: TransportOptions): Transport {
  const agentOptions: AgentOptions = {
    keepAlive: true,
    keepAliveMsecs: 30_000,
    maxSockets: options.maxSockets,
    scheduling: "lifo",
  };
  const http = new HttpAgent(agentOptions);
  const https = new HttpsAgent(agentOptions);

  async function send(input: Request): Promise<Response> {
    const url = new URL(input.url);
    const secure = url.protocol === "https:";
    if (!secure && url.protocol !== "http:")
      throw new TransportError("network", `unsupported protocol ${url.protocol}`);
    const body = input.body === null ? undefined : Buffer.from(await input.arrayBuffer());
    const headers: Record<string, string> = {};
    input.headers.forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== undefined) headers["content-length"] = String(body.length);

    return new Promise<Response>((resolve, reject) => {
      const request = (secure ? httpsRequest : httpRequest)(url, {
        method: input.method,
        headers,
        agent: secure ? https : http,
      });
      const timer = setTimeout(() => {
        request.destroy(new TransportError("timeout", `no complete answer within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(
          error instanceof TransportError
            ? error
            : new TransportError("network", `the connection failed: ${error.message}`, { cause: error }),
        );
      };
      request.once("error", fail);
      request.once("response", (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.once("error", fail);
        response.once("end", () => {
          clearTimeout(timer);
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            if (value === undefined) continue;
            for (const one of Array.isArray(value) ? value : [value]) answerHeaders.append(name, one);
          }
          const status = response.statusCode ?? 502;
          const payload = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(payload, { status, headers: answerHeaders }));
        });
      });
      request.end(body);
    });
  }

  return {
    fetch: send,
    close() {
      http.destroy();
      https.destroy();
    },
  };
}
