import type { AddressPolicy } from "./ssrf.ts";

// The port through which the dispatcher sends a delivery attempt. The shipped adapter speaks HTTP
// (server/src/adapters/webhook-sender.ts) and enforces the address policy on the connection it
// makes; tests drive the dispatcher with an adapter of their own, so the attempt log and the schedule
// can be checked without a network and without waiting.

export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  /** The exact bytes the signature covers. */
  body: string;
  /** The whole attempt (resolving, connecting, the answer's status and first bytes) must fit in it. */
  timeoutMs: number;
  /** What the connection may reach; checked on the address actually connected to. */
  policy: AddressPolicy;
}

export type DeliveryErrorCode = "timeout" | "dns_error" | "connection_error" | "tls_error" | "address_refused";

export type DeliveryResult =
  | {
      kind: "response";
      status: number;
      /** At most the first 1024 bytes of the body, decoded as UTF-8. */
      body: string;
      latencyMs: number;
    }
  | { kind: "error"; error: DeliveryErrorCode; message: string; latencyMs: number };

export interface WebhookSender {
  send(request: DeliveryRequest): Promise<DeliveryResult>;
  /** Closes idle connections (server shutdown). */
  close?(): void;
}

/** How many bytes of an answer's body the attempt log keeps. */
export const RESPONSE_BODY_BYTES = 1024;
