import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// The call ledger: a pass-through in front of the Adyen stand-in (between Prism's validating proxy and
// ./stand-in.ts) that records every mutating call the stand-in received, with its Idempotency-Key, its
// merchant reference and the PSP reference it answered, and that can make a call end as it does with a
// real acquirer on a bad day. The crash suite (test/crash/adyen-crash.test.ts) counts here, outside the
// server it kills: 0 double authorisations, captures or refunds means one PSP reference per idempotency
// key and one payment per charge (Adyen's `reference` on /payments is our charge id).
//
// Interceptions, planned by the n-th mutating call from the moment they are planned:
// - `kill_before`: the server is killed (`run`) as its call arrives; the stand-in never sees it.
// - `kill_after`: the stand-in processes the call, then the server is killed before the answer reaches it
//   (the acquirer did it, the server never heard), and the connection is dropped.
// - `drop`: processed, then the connection is dropped (the caller sees a network error: in doubt).
// - `timeout`: processed, then no answer at all (the caller's time-out, ADYEN_TIMEOUT_MS, puts it in doubt).
// - `error_after`: processed, then a 500 Adyen ServiceError (in doubt: the money moved).
// - `error_before`: a 500 Adyen ServiceError, not processed (in doubt: nothing moved).
// It lives in its own module so the stand-in's handlers (3-D Secure, payouts, …) stay one file's concern.

export type Interception =
  | { kind: "kill_before" | "kill_after"; run: () => void }
  | { kind: "drop" | "timeout" | "error_after" | "error_before" };

/** Adyen's operation, by path: what was asked of it. */
export type CallOperation = "payment" | "details" | "capture" | "cancel" | "refund" | "reversal" | "other";

export interface LedgerCall {
  operation: CallOperation;
  path: string;
  idempotencyKey: string | undefined;
  /** Adyen's `reference` of the request: our charge id for /payments, the intent id for a modification. */
  merchantReference: string | undefined;
  /** The payment a modification is on (the path's paymentPspReference). */
  paymentPspReference: string | undefined;
  /** The stand-in's HTTP status, or null when the call never reached it (kill_before, error_before). */
  status: number | null;
  /** The PSP reference the stand-in answered (a new one when it processed, the first one when it replayed). */
  pspReference: string | undefined;
  interception: Interception["kind"] | undefined;
}

export interface CallLedger {
  url: string;
  /** Every mutating call, in the order received. */
  calls: LedgerCall[];
  /** Plans `interception` for the n-th mutating call from now (1 = the next); replaces any plan for it. */
  plan(nth: number, interception: Interception): void;
  /** Drops the plans not yet met (the calls they waited for did not come); returns how many. */
  clearPlans(): number;
  /** How many interceptions were met, by kind. */
  met: Record<Interception["kind"], number>;
  /** What moved twice, counted over the calls the stand-in answered (see `doubles`). */
  doubles(): Doubles;
  stop(): Promise<void>;
}

const OPERATIONS = { captures: "capture", cancels: "cancel", refunds: "refund", reversals: "reversal" } as const;

function operationOf(path: string): { operation: CallOperation; paymentPspReference?: string } {
  if (path === "/payments") return { operation: "payment" };
  if (path === "/payments/details") return { operation: "details" };
  const match = /^\/payments\/([^/]+)\/(captures|cancels|refunds|reversals)$/.exec(path);
  if (!match) return { operation: "other" };
  return {
    operation: OPERATIONS[match[2] as keyof typeof OPERATIONS],
    paymentPspReference: decodeURIComponent(match[1] as string),
  };
}

/** Adyen's ServiceError for a 500 (valid against Checkout v71's 500 answer). */
const INTERNAL_ERROR = JSON.stringify({
  status: 500,
  errorCode: "000",
  message: "Internal error",
  errorType: "internal",
});

/**
 * What moved twice at the acquirer, from the calls it answered with a 2xx (processed, or replayed under
 * their key): an idempotency key answered with two PSP references; a charge (Adyen's `reference` on
 * /payments) with two payments; a payment captured, cancelled or reversed twice (every capture here is
 * in full); a refund (its intent's reference) made twice.
 */
export interface Doubles {
  keys_with_two_psp_references: number;
  authorizations: number;
  captures: number;
  cancels: number;
  refunds: number;
  reversals: number;
}

export function doublesOf(calls: readonly LedgerCall[]): Doubles {
  const answered = calls.filter((c) => c.status !== null && c.status < 300 && c.pspReference !== undefined);
  /** How many groups of `operation`'s calls got more than one distinct PSP reference. */
  const twice = (operation: CallOperation | null, group: (call: LedgerCall) => string | undefined) => {
    const seen = new Map<string, Set<string | undefined>>();
    for (const call of answered) {
      if (operation !== null && call.operation !== operation) continue;
      const name = `${call.operation}:${group(call) ?? "(none)"}`;
      seen.set(name, (seen.get(name) ?? new Set()).add(call.pspReference));
    }
    return [...seen.values()].filter((references) => references.size > 1).length;
  };
  return {
    keys_with_two_psp_references: twice(null, (c) => c.idempotencyKey),
    authorizations: twice("payment", (c) => c.merchantReference),
    captures: twice("capture", (c) => c.paymentPspReference),
    cancels: twice("cancel", (c) => c.paymentPspReference),
    refunds: twice("refund", (c) => c.merchantReference),
    reversals: twice("reversal", (c) => c.paymentPspReference),
  };
}

export async function startCallLedger(upstream: string): Promise<CallLedger> {
  const calls: LedgerCall[] = [];
  const plans = new Map<number, Interception>();
  const met: CallLedger["met"] = {
    kill_before: 0,
    kill_after: 0,
    drop: 0,
    timeout: 0,
    error_after: 0,
    error_before: 0,
  };
  /** Mutating calls seen since the plans were last counted from. */
  let seen = 0;
  /** Answers held back (timeout), closed at stop. */
  const held = new Set<ServerResponse>();

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const path = new URL(request.url ?? "/", "http://ledger").pathname;
    const raw = await readBody(request);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      // Hop-by-hop and length headers are the forwarding fetch's own.
      if (value === undefined || ["host", "connection", "content-length", "transfer-encoding"].includes(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    const forward = () =>
      fetch(`${upstream}${request.url ?? "/"}`, {
        method: request.method,
        headers,
        body: request.method === "GET" || request.method === "HEAD" ? undefined : raw,
      });
    if (request.method !== "POST") {
      const answer = await forward();
      response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      response.end(await answer.text());
      return;
    }

    const interception = plans.get(++seen);
    plans.delete(seen);
    if (interception) met[interception.kind]++;
    const { operation, paymentPspReference } = operationOf(path);
    let merchantReference: string | undefined;
    try {
      const reference = (JSON.parse(raw) as { reference?: unknown }).reference;
      merchantReference = typeof reference === "string" ? reference : undefined;
    } catch {
      // not JSON: the stand-in refuses it, and the ledger records it without a reference
    }
    const call: LedgerCall = {
      operation,
      path,
      idempotencyKey: headers["idempotency-key"],
      merchantReference,
      paymentPspReference,
      status: null,
      pspReference: undefined,
      interception: interception?.kind,
    };
    calls.push(call);

    if (interception?.kind === "kill_before") {
      interception.run();
      response.socket?.destroy();
      return;
    }
    if (interception?.kind === "error_before") {
      response.writeHead(500, { "content-type": "application/json" }).end(INTERNAL_ERROR);
      return;
    }
    const answer = await forward();
    const text = await answer.text();
    call.status = answer.status;
    try {
      const psp = (JSON.parse(text) as { pspReference?: unknown }).pspReference;
      call.pspReference = typeof psp === "string" ? psp : undefined;
    } catch {
      // an answer without JSON has no PSP reference
    }
    switch (interception?.kind) {
      case "kill_after":
        interception.run();
        response.socket?.destroy();
        return;
      case "drop":
        response.socket?.destroy();
        return;
      case "timeout":
        held.add(response);
        return;
      case "error_after":
        response.writeHead(500, { "content-type": "application/json" }).end(INTERNAL_ERROR);
        return;
      default:
        response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
        response.end(text);
    }
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
      response.end(`the call ledger could not forward the call: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    met,
    doubles: () => doublesOf(calls),
    plan(nth, interception) {
      plans.set(seen + nth, interception);
    },
    clearPlans() {
      const left = plans.size;
      plans.clear();
      return left;
    },
    async stop() {
      for (const response of held) response.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.once("error", reject);
  });
}
