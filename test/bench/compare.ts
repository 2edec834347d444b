// What `npm run bench` writes (test/bench/results/*.json), and `--compare`: each scenario's change
// between two runs. Absolute requests/s move with the machine and its load, so the change of each
// scenario's ratio to bare Express in its own run is shown beside it: when both runs were on the same
// machine kind, that ratio is the steadier signal of what a code change did.

import type { WebhookBenchResult } from "./webhooks.ts";

export interface Row {
  id: string;
  scenario: string;
  target: string;
  kind: string;
  /** Requests per second of a fixed-rate scenario, null for a throughput one. */
  rate: number | null;
  requestsPerSecond: number;
  p50Ms: number;
  /** Absent in results saved before it was measured. */
  p90Ms?: number;
  p99Ms: number;
  p99_9Ms: number;
  maxMs: number;
  requests: number;
  /** Answers with another status than the scenario's: any but a 2xx, or, for a refusal scenario, any but its own. */
  non2xx: number;
  errors: number;
  timeouts: number;
  warmupFailures: number;
  /** Sum of the server's processes' VmRSS at its highest during the measured run. */
  peakRssMb: number | null;
  /** The server's CPU time (user + system, all its processes) per request answered, in µs. */
  cpuUsPerRequest: number | null;
  statusCodes: Record<string, number>;
  /** Steady-rate scenarios: how late the open-loop sender itself sent a request, at its worst, in ms. */
  senderLateMs?: number;
  /** requests/s over bare Express's for the same method, in this run (throughput scenarios only). */
  ratioToBare?: number;
}

export interface TargetResult {
  target: string;
  value: number | null;
  unit: "%" | "ms" | "MB" | "x";
  /** null: not measured in this run. */
  met: boolean | null;
  /** The same figure computed from CPU time per request (targets comparing two servers). */
  byCpu?: number | null;
  missing?: string[];
  /** A figure measured without a threshold: never met or not met. */
  reportOnly?: boolean;
  /** The figures behind the value. */
  detail?: string;
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  machine: Record<string, unknown>;
  settings: Record<string, unknown>;
  scenarios: Row[];
  /** Scenarios that threw instead of giving a row (summary.ts measureEach); absent in older results. */
  scenarioFailures?: { scenario: string; error: string }[];
  startupMs?: Record<string, number>;
  startupRunsMs?: Record<string, number[]>;
  targets?: TargetResult[];
  webhooks: WebhookBenchResult | null;
  ok: boolean;
}

function change(before: number | null | undefined, after: number | null | undefined): string {
  if (before === null || before === undefined || after === null || after === undefined) return "n/a";
  if (before === 0) return after === 0 ? "0 %" : "n/a";
  const pct = ((after - before) / before) * 100;
  return `${pct >= 0 ? "+" : ""}${pct.toFixed(0)} %`;
}

function num(value: number | null | undefined, digits = 0): string {
  return value === null || value === undefined ? "n/a" : value.toFixed(digits);
}

function pad(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 10) : c.padStart(widths[i] ?? 10))).join("  ");
}

function showTarget(t: TargetResult | undefined): string {
  if (!t || t.value === null) return "n/a";
  const v =
    t.unit === "%"
      ? `${(t.value * 100).toFixed(0)} %`
      : t.unit === "x"
        ? `${t.value.toFixed(2)}x`
        : `${t.value.toFixed(1)} ${t.unit}`;
  return `${v}${t.met === null ? "" : t.met ? " met" : " not met"}`;
}

/** The comparison as text: throughput, steady-load latency, start-up, targets. */
export function compare(before: BenchResults, after: BenchResults): string {
  const out: string[] = [`compared: ${before.startedAt} (before) -> ${after.startedAt} (after)`];
  const old = new Map(before.scenarios.map((r) => [r.id ?? r.scenario, r]));
  const throughput = after.scenarios.filter((r) => r.rate === null && old.has(r.id));
  if (throughput.length > 0) {
    const widths = [44, 10, 10, 7, 9, 9, 7, 11, 7];
    out.push("", pad(["scenario", "req/s", "was", "change", "vs bare", "was", "p99", "CPU µs/req", "change"], widths));
    for (const r of throughput) {
      const b = old.get(r.id) as Row;
      out.push(
        pad(
          [
            r.scenario,
            num(r.requestsPerSecond),
            num(b.requestsPerSecond),
            change(b.requestsPerSecond, r.requestsPerSecond),
            r.ratioToBare === undefined ? "-" : `${num(r.ratioToBare * 100)} %`,
            b.ratioToBare === undefined ? "-" : `${num(b.ratioToBare * 100)} %`,
            change(b.p99Ms, r.p99Ms),
            num(r.cpuUsPerRequest),
            change(b.cpuUsPerRequest, r.cpuUsPerRequest),
          ],
          widths,
        ),
      );
    }
  }
  const steady = after.scenarios.filter((r) => r.rate !== null && old.has(r.id));
  if (steady.length > 0) {
    const widths = [44, 14, 14, 16];
    out.push("", pad(["steady load", "p50 ms (was)", "p99 ms (was)", "p99.9 ms (was)"], widths));
    for (const r of steady) {
      const b = old.get(r.id) as Row;
      out.push(
        pad([r.scenario, `${r.p50Ms} (${b.p50Ms})`, `${r.p99Ms} (${b.p99Ms})`, `${r.p99_9Ms} (${b.p99_9Ms})`], widths),
      );
    }
  }
  for (const [name, ms] of Object.entries(after.startupMs ?? {})) {
    const was = before.startupMs?.[name];
    out.push(`start-up ${name}: ${num(ms)} ms (was ${num(was)} ms, ${change(was, ms)})`);
  }
  const oldTargets = new Map((before.targets ?? []).map((t) => [t.target, t]));
  if ((after.targets ?? []).length > 0) out.push("");
  for (const t of after.targets ?? []) {
    out.push(`target: ${t.target}: ${showTarget(t)} (was ${showTarget(oldTargets.get(t.target))})`);
  }
  const dropped = before.scenarios.filter((r) => !after.scenarios.some((a) => a.id === r.id));
  if (dropped.length > 0) out.push(`not in the newer run: ${dropped.map((r) => r.id ?? r.scenario).join(", ")}`);
  return out.join("\n");
}
