// Sending a scenario's load with autocannon (in this process, on the same cores as the servers, as the
// figures in docs/contributing.md "Benchmark" were measured), for ./run.ts and ./profile.ts.

import autocannon, { type Result } from "autocannon";
import type { Target } from "./launch.ts";
import type { OpenLoopRequest } from "./open-loop.ts";
import type { Scenario } from "./scenarios.ts";

/** The benchmark's published figures were taken with 50 connections; keep that so ratios stay comparable. */
export const CONNECTIONS = 50;
/**
 * Answers other than the scenario's (its `expected` status, or else any 2xx), connection errors and
 * timeouts: what makes a run fail. A refusal scenario (`worst-body`) expects its 400.
 */
export function failures(result: Result, scenario?: Pick<Scenario, "expected">): number {
  return unexpected(result, scenario) + result.errors + result.timeouts;
}

/** Answers with another status than the scenario's (its `expected`, or else any 2xx). */
export function unexpected(result: Result, scenario?: Pick<Scenario, "expected">): number {
  if (scenario?.expected === undefined) return result.non2xx;
  const answered = Object.values(result.statusCodeStats).reduce((sum, s) => sum + Number(s.count), 0);
  return answered - Number(result.statusCodeStats[String(scenario.expected)]?.count ?? 0);
}

/** One request through fetch first, so a wrong setup fails at once with the server's answer. */
export async function preflight(scenario: Scenario, target: Target): Promise<void> {
  const options = scenario.options(target.ready);
  const request = options.requests?.[0]?.setupRequest?.({ ...options }, {}) ?? options;
  const res = await fetch(`${target.ready.url}${options.path}`, {
    method: request.method ?? "GET",
    headers: request.headers ?? {},
    body: request.body ?? null,
  });
  const expected =
    scenario.expected === undefined ? res.status >= 200 && res.status <= 299 : res.status === scenario.expected;
  if (!expected) {
    throw new Error(`${scenario.name}: preflight answered ${res.status}: ${await res.text()}`);
  }
}

/** The scenario's load for `seconds`, as fast as CONNECTIONS connections go (autocannon). */
export function load(scenario: Scenario, target: Target, seconds: number): Promise<Result> {
  const options = scenario.options(target.ready);
  return autocannon({
    ...options,
    url: `${target.ready.url}${options.path}`,
    connections: CONNECTIONS,
    timeout: 10,
    duration: seconds,
  });
}

/** The scenario's request as the open-loop sender sends it (steady-rate scenarios). */
export function steadyRequest(scenario: Scenario, target: Target): OpenLoopRequest {
  const options = scenario.options(target.ready);
  return {
    url: `${target.ready.url}${options.path}`,
    method: options.method ?? "GET",
    headers: (options.headers ?? {}) as Record<string, string>,
    body: typeof options.body === "string" ? options.body : undefined,
  };
}
