// The benchmark's HTTP scenarios (`npm run bench`, ./run.ts; `npm run bench:profile`, ./profile.ts).
// Each has a short id, the one BENCH_ONLY and bench:profile name it by.

import { randomUUID } from "node:crypto";
import type { Options } from "autocannon";
import { chargeBody, evaluationBody, type ReadyMessage, TOKEN_BODY } from "./targets/protocol.ts";

/**
 * Where a scenario runs: the payments server (`payments`, in-memory store), bare Express (`bare`), Express +
 * express-openapi-validator with no-work handlers (`validated`, the stack's ceiling), the Prism mock
 * (`prism`), the production build run like production (`built`, `built2`: one and two workers), the
 * same build charging through the Adyen connector against the Adyen stand-in (`adyen`), and a bare
 * node:http echo (`echo`, the floor of a steady-rate scenario's latency).
 */
export type TargetName = "payments" | "bare" | "validated" | "prism" | "built" | "built2" | "adyen" | "echo";
export type Kind = "GET" | "POST";

export interface Scenario {
  id: string;
  name: string;
  target: TargetName;
  kind: Kind;
  /**
   * Requests per second for a steady-rate scenario, sent open loop (./open-loop.ts: at fixed times,
   * latency from when each request was due): the latency integrators feel at that load. Absent: as fast
   * as the server answers with CONNECTIONS connections (throughput, autocannon).
   */
  rate?: number;
  /**
   * The status every answer must have, for a scenario that measures a refusal (`worst-body`); absent:
   * any 2xx. Any other answer fails the run.
   */
  expected?: number;
  options: (target: ReadyMessage) => Omit<Options, "url" | "connections" | "duration"> & { path: string };
}

function json(body: unknown): string {
  return JSON.stringify(body);
}

function auth(target: ReadyMessage): Record<string, string> {
  return { Authorization: `Bearer ${target.key}`, "Content-Type": "application/json" };
}

/** `{ name, f0: 0, …, f7999: 7999 }`: 79 KB, under the default BODY_LIMIT_BYTES (100 KB). */
const WORST_BODY = json({
  name: "Bench Merchant",
  ...Object.fromEntries(Array.from({ length: 8000 }, (_, i) => [`f${i}`, i])),
});
/** 99 fields of 1,000-character names the operation does not take: 97 KB. */
const WORST_FINDINGS_BODY = json({
  name: "Bench Merchant",
  ...Object.fromEntries(Array.from({ length: 99 }, (_, i) => [`${i}`.padEnd(1000, "n"), i])),
});

const getToken = (t: ReadyMessage) => ({ path: `/v1/tokens/${t.tokenId}`, method: "GET", headers: auth(t) });
const postToken = (t: ReadyMessage) => ({
  path: "/v1/tokens",
  method: "POST",
  headers: auth(t),
  body: json(TOKEN_BODY),
});
const postCharge = (t: ReadyMessage) => ({
  path: "/v1/charges",
  method: "POST",
  headers: auth(t),
  body: json(chargeBody(t.merchantId ?? "", t.tokenId ?? "")),
});
/** The same charge in production (the production build's live fixtures), as a merchant's backend sends it. */
const postLiveCharge = (t: ReadyMessage) => {
  if (!t.live) throw new Error("this target has no production key");
  return {
    path: "/v1/charges",
    method: "POST",
    headers: { Authorization: `Bearer ${t.live.key}`, "Content-Type": "application/json" },
    body: json(chargeBody(t.live.merchantId, t.live.tokenId)),
  };
};

/**
 * The rates of the steady-rate scenarios (docs/contributing.md "Benchmark"): a quarter and about half
 * of what the production build answers at saturation on the 2-core machine.
 */
export const STEADY_RATES = [200, 500] as const;

/** The steady-rate scenarios: the production build's charges, and the bare echo at the same rates. */
const steady: Scenario[] = STEADY_RATES.flatMap((rate): Scenario[] => [
  {
    id: `echo-${rate}`,
    name: `bare node:http echo POST at ${rate}/s`,
    target: "echo",
    kind: "POST",
    rate,
    options: () => ({
      path: "/echo",
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: json(chargeBody("m", "t")),
    }),
  },
  {
    // Open loop, on the production build with its SQLite file, charging in production.
    id: `built-${rate}`,
    name: `built, 1 worker: POST /v1/charges at ${rate}/s`,
    target: "built",
    kind: "POST",
    rate,
    options: postLiveCharge,
  },
]);

export const SCENARIOS: Scenario[] = [
  {
    id: "bare-get",
    name: "bare Express GET /bare",
    target: "bare",
    kind: "GET",
    options: () => ({ path: "/bare", method: "GET" }),
  },
  {
    id: "tokens-get",
    name: "GET /v1/tokens/{id}",
    target: "payments",
    kind: "GET",
    options: getToken,
  },
  {
    id: "bare-post",
    name: "bare Express POST /bare (echo)",
    target: "bare",
    kind: "POST",
    // The same body as POST /v1/tokens, so both parse the same bytes.
    options: () => ({
      path: "/bare",
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: json(TOKEN_BODY),
    }),
  },
  {
    id: "ceiling-get",
    name: "Express + validator GET /v1/tokens/{id}",
    target: "validated",
    kind: "GET",
    options: getToken,
  },
  {
    // The same request as POST /v1/tokens below, validated and authorized (by a handler that accepts
    // any key) the same way, answered with a fixed token: the POST ceiling.
    id: "ceiling-post",
    name: "Express + validator POST /v1/tokens",
    target: "validated",
    kind: "POST",
    options: postToken,
  },
  {
    // Every request tokenizes the card: a new token (encryption, fingerprint, insert) each time.
    id: "tokens",
    name: "POST /v1/tokens",
    target: "payments",
    kind: "POST",
    options: postToken,
  },
  {
    id: "merchants",
    name: "POST /v1/merchants",
    target: "payments",
    kind: "POST",
    options: (t) => ({
      path: "/v1/merchants",
      method: "POST",
      headers: auth(t),
      body: json({ name: "Bench Merchant" }),
    }),
  },
  {
    // The same request with a fresh Idempotency-Key each time: every request also stores an
    // idempotency record and its response (IdempotencyKeyHeader), which is what this row shows the cost of.
    id: "merchants-idem",
    name: "POST /v1/merchants + Idempotency-Key",
    target: "payments",
    kind: "POST",
    options: (t) => ({
      path: "/v1/merchants",
      method: "POST",
      headers: auth(t),
      body: json({ name: "Bench Merchant" }),
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, "Idempotency-Key": randomUUID() },
          }),
        },
      ],
    }),
  },
  {
    // A card charge captured at once on the same merchant and token each time: the fraud evaluation,
    // the charge, its ledger entries, the balance and the events, in one store transaction per request.
    id: "charges",
    name: "POST /v1/charges",
    target: "payments",
    kind: "POST",
    options: postCharge,
  },
  {
    // A fraud evaluation of a prospective transaction on the prepared merchant and token, with a
    // customer IP address: settings, one list lookup over every list, the velocity counts read, the
    // merchant's history, then the evaluation and its `fraud.evaluated` event in one transaction.
    id: "evaluations",
    name: "POST /v1/fraud/evaluations",
    target: "payments",
    kind: "POST",
    options: (t) => ({
      path: "/v1/fraud/evaluations",
      method: "POST",
      headers: auth(t),
      body: json(evaluationBody(t.merchantId ?? "", t.tokenId ?? "")),
    }),
  },
  {
    // The attack of issue 35 (a keyless CPU denial of service): a body under the 100 KB limit with 8,000
    // fields the operation does not take, refused with one finding now that a body's shape is bounded
    // before it is parsed (server/src/http/body-bounds.ts). Compared with `merchants`, the same
    // operation's ordinary request: a target (run.ts) holds it to at most 20 times that CPU.
    id: "worst-body",
    name: "POST /v1/merchants, 8,000 unknown fields (400)",
    target: "payments",
    kind: "POST",
    expected: 400,
    options: (t) => ({ path: "/v1/merchants", method: "POST", headers: auth(t), body: WORST_BODY }),
  },
  {
    // The dearest refusal the bounds let through that was found: 99 unknown fields of 1,000 characters
    // (under the bound of 100 per object), so the validator finds 99 and the answer lists 50.
    id: "worst-findings",
    name: "POST /v1/merchants, 99 unknown long fields (400)",
    target: "payments",
    kind: "POST",
    expected: 400,
    options: (t) => ({ path: "/v1/merchants", method: "POST", headers: auth(t), body: WORST_FINDINGS_BODY }),
  },
  {
    // The sandbox mock answering the same GET as GET /v1/tokens/{id} above (its example token).
    id: "prism-get",
    name: "Prism mock GET /v1/tokens/{id}",
    target: "prism",
    kind: "GET",
    options: getToken,
  },
  ...steady,
  {
    // The production build (`node dist/main.js`, NODE_ENV=production, SQLite file in WAL mode), one
    // worker: its memory under load is the peak RSS figure.
    id: "built-charges",
    name: "built, 1 worker: POST /v1/charges",
    target: "built",
    kind: "POST",
    options: postCharge,
  },
  {
    id: "built-get",
    name: "built, 1 worker: GET /v1/tokens/{id}",
    target: "built",
    kind: "GET",
    options: getToken,
  },
  {
    // Issue 36, "overhead over the acquirer": a production charge through the simulator (built-live-charges)
    // and through the Adyen connector against the Adyen stand-in answering at once, in a process of its
    // own, no Prism (adyen-charges). The server's CPU per charge of the two is the connector's cost.
    id: "built-live-charges",
    name: "built, 1 worker: POST /v1/charges in production (simulator)",
    target: "built",
    kind: "POST",
    options: postLiveCharge,
  },
  {
    id: "adyen-charges",
    name: "built, 1 worker: POST /v1/charges in production (Adyen connector, stand-in)",
    target: "adyen",
    kind: "POST",
    options: postLiveCharge,
  },
  {
    id: "built2-charges",
    name: "built, 2 workers: POST /v1/charges",
    target: "built2",
    kind: "POST",
    options: postCharge,
  },
  {
    id: "built2-get",
    name: "built, 2 workers: GET /v1/tokens/{id}",
    target: "built2",
    kind: "GET",
    options: getToken,
  },
];

/** BENCH_ONLY's extra name for the webhook delivery part, which is not an HTTP scenario. */
export const WEBHOOKS = "webhooks";

/**
 * The scenarios BENCH_ONLY selects (comma-separated ids; `webhooks` for the webhook part), all of them
 * when it is empty. Unknown ids are an error, so a typo does not silently measure nothing.
 */
export function selectScenarios(only: string | undefined): { scenarios: Scenario[]; webhooks: boolean } {
  const ids = (only ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length === 0) return { scenarios: SCENARIOS, webhooks: true };
  const known = new Set([...SCENARIOS.map((s) => s.id), WEBHOOKS]);
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new Error(`BENCH_ONLY: unknown scenario(s) ${unknown.join(", ")}; known: ${[...known].join(", ")}`);
  }
  return { scenarios: SCENARIOS.filter((s) => ids.includes(s.id)), webhooks: ids.includes(WEBHOOKS) };
}
