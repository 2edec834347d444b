// The benchmark's HTTP scenarios (`npm run bench`, ./run.ts; `npm run bench:profile`, ./profile.ts).
// Each has a short id, the one BENCH_ONLY and bench:profile name it by.

import { randomUUID } from "node:crypto";
import type { Options } from "autocannon";
import { chargeBody, evaluationBody, type ReadyMessage, TOKEN_BODY } from "./targets/protocol.ts";

/**
 * Where a scenario runs: the payments server (`payments`, in-memory store), bare Express (`bare`), Express +
 * express-openapi-validator with no-work handlers (`validated`, the stack's ceiling), the Prism mock
 * (`prism`), the production build run like production (`built`, `built2`: one and two workers), and a
 * bare node:http echo (`echo`, the floor of a steady-rate scenario's latency).
 */
export type TargetName = "payments" | "bare" | "validated" | "prism" | "built" | "built2" | "echo";
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
  options: (target: ReadyMessage) => Omit<Options, "url" | "connections" | "duration"> & { path: string };
}

function json(body: unknown): string {
  return JSON.stringify(body);
}

function auth(target: ReadyMessage): Record<string, string> {
  return { Authorization: `Bearer ${target.key}`, "Content-Type": "application/json" };
}

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
