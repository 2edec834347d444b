import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

// How the Adyen client (./client.ts) reaches Adyen: Node's own http/https with a keep-alive agent per
// connector (one TLS handshake per connection, not per payment) and a hard time-out per request covering
// connect, send and the whole answer. A request that times out may still have reached Adyen: the caller
// treats it as in doubt and repeats it with the same Idempotency-Key (never a fresh one).
//
// It takes the request as the client built it (a path under a base address parsed once, headers, a JSON
// text) and gives back the status and the answer's text: no WHATWG Request, Headers or Response objects
// (with their web streams and abort signals) are built per call only to be taken apart again, which was a
// good part of a charge's extra CPU through this connector (issue 36, "Overhead over the acquirer"). Node's
// global fetch cannot take an agent or a per-request socket time-out without importing undici, which the
// server does not depend on; this small adapter keeps the dependency list as it is.

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

/** A base address (an API's root, e.g. `https://checkout-test.adyen.com/v71`), parsed once. */
export interface Endpoint {
  secure: boolean;
  hostname: string;
  port: number;
  /** The base's path, without a trailing slash: each call's path is appended to it. */
  basePath: string;
}

export function endpointOf(base: string): Endpoint {
  const url = new URL(base);
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:") throw new TransportError("network", `unsupported protocol ${url.protocol}`);
  return {
    secure,
    // An IPv6 literal comes bracketed in URL.hostname; node:http wants it bare.
    hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
    basePath: url.pathname.replace(/\/+$/, ""),
  };
}

export interface OutgoingCall {
  method: string;
  endpoint: Endpoint;
  /** The path under the endpoint's base, already filled in and encoded, starting with `/`. */
  path: string;
  headers: OutgoingHttpHeaders;
  /** The body's text (JSON); its length is sent as content-length. */
  body?: string;
}

export interface TransportAnswer {
  status: number;
  /** The answer's body as text (UTF-8); empty when it had none. */
  body: string;
}

export interface Transport {
  send(call: OutgoingCall): Promise<TransportAnswer>;
  /** Closes the idle kept-alive connections (at shutdown, and in tests). */
  close(): void;
}

export function createTransport(options: TransportOptions): Transport {
  const agentOptions = {
    keepAlive: true,
    keepAliveMsecs: 30_000,
    maxSockets: options.maxSockets,
    scheduling: "lifo" as const,
  };
  const http = new HttpAgent(agentOptions);
  const https = new HttpsAgent(agentOptions);

  function send(call: OutgoingCall): Promise<TransportAnswer> {
    const { endpoint, body } = call;
    // A body given as text lets node:http send the head and the body in one write (no writev of two buffers).
    const headers = body === undefined ? call.headers : { ...call.headers, "content-length": Buffer.byteLength(body) };
    return new Promise<TransportAnswer>((resolve, reject) => {
      const request = (endpoint.secure ? httpsRequest : httpRequest)({
        method: call.method,
        hostname: endpoint.hostname,
        port: endpoint.port,
        path: endpoint.basePath + call.path,
        headers,
        agent: endpoint.secure ? https : http,
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
        response.setEncoding("utf8");
        let text = "";
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.once("error", fail);
        response.once("end", () => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 502, body: text });
        });
      });
      request.end(body);
    });
  }

  return {
    send,
    close() {
      http.destroy();
      https.destroy();
    },
  };
}
