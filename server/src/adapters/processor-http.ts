import type { Processor } from "../domain/charges/processor.ts";

// The Processor port over HTTP, to an acquirer simulator run as a process of its own (TEST_ACQUIRER_URL,
// tests only): the crash tests kill the server with SIGKILL, and what the acquirer applied must outlive
// it to be counted. Each call is a POST of the port's request as JSON to `<url>/<call>`, carrying its
// idempotency key as the `Idempotency-Key` header too, as a real acquirer's API takes it; the answer is
// the port's answer. Anything but a 200 (or no answer within the time limit) is a call in doubt: it
// throws, and the charge's intent stays open for a retry or the recovery job (domain/charges/intents.ts).

const TIMEOUT_MS = 10_000;

export function createHttpProcessor(baseUrl: string): Processor {
  async function call<T>(name: string, request: object & { idempotencyKey?: string }): Promise<T> {
    const res = await fetch(`${baseUrl.replace(/\/+$/, "")}/${name}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(request.idempotencyKey ? { "idempotency-key": request.idempotencyKey } : {}),
      },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (res.status !== 200) throw new Error(`acquirer ${name} answered ${res.status}: ${await res.text()}`);
    // The acquirer simulator (a process of our own, tests only) answers each call with the port's answer to
    // it as JSON, as the in-process simulator returns it; res.json() types every body unknown: hence the cast.
    return (await res.json()) as T;
  }
  return {
    authorizeCard: (request) => call("authorizeCard", request),
    capture: (request) => call("capture", request),
    void: (request) => call("void", request),
    refund: (request) => call("refund", request),
    reverse: (request) => call("reverse", request),
    startLocalPayment: (request) => call("startLocalPayment", request),
    // 3-D Secure's two questions to the issuer move no money, so they carry no idempotency key.
    authenticateCard: (request) => call("authenticateCard", request),
    completeChallenge: (request) => call("completeChallenge", request),
  };
}
