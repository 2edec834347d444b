// `npm run bench` (docs/contributing.md "Benchmark"): autocannon against the real payments server and, in the same
// run, the baselines it is judged against; results are quoted as ratios within the run, because absolute
// numbers move between runs and machines.
//
// - Throughput scenarios (./scenarios.ts): 50 connections as fast as the server answers; the payments
//   server (plain JavaScript bundled from the sources, as production runs it; in-memory store), bare Express 5 (the floor of any Express app's cost), and Express 5 +
//   express-openapi-validator on the same document with handlers that do no work (the ceiling this
//   stack allows: what is left between it and bare Express is the validator's own cost).
// - Steady-rate scenarios: POST /v1/charges in production on the production build at 200 and 500
//   requests/s, sent open loop (./open-loop.ts: at fixed times, each latency from when its request was
//   due), p50/p90/p99/p99.9/max, beside a bare node:http echo at the same rates: what an integrator
//   feels, on what an operator runs.
// - The Prism mock answering the same GET as the server.
// - The production build (`node server/dist/main.js`, NODE_ENV=production, SQLite file in WAL mode),
//   with WORKERS=1 and WORKERS=2: its start-up time (spawn to first answer, median of STARTUP_ROUNDS
//   fresh starts), its peak RSS under load (every process's VmRSS from /proc, sampled every
//   RSS_SAMPLE_MS), and how throughput scales from one worker to two (the load generator shares the
//   same cores, so two workers cannot double it here).
// - Webhook delivery (./webhooks.ts), against the payments server process.
//
// Every performance target (docs/contributing.md "Benchmark") is printed with "met" or "not met" (or "not measured"
// when BENCH_ONLY left out a scenario it needs); the scaling from one worker to two, which is measured
// without a threshold, is printed as "reported". Results go to test/bench/results/latest.json and a copy named by the
// start time; `npm run bench -- --compare <file>` prints each scenario's change against a saved run
// after this one, `npm run bench -- --compare <old> <new>` compares two saved runs without running.
//
// Settings (environment): BENCH_ONLY=<ids> runs the scenarios named (comma-separated ids from
// ./scenarios.ts, plus `webhooks`); BENCH_SECONDS (default 8) and BENCH_WARMUP_SECONDS (default 2) per
// throughput scenario; BENCH_RATE_SECONDS (default 60) and BENCH_RATE_WARMUP_SECONDS (default 5) per
// steady-rate scenario; BENCH_NODE_FLAGS, node flags for the production build (to measure a setting
// such as --max-old-space-size=96 against the default). A smoke run: `BENCH_ONLY=tokens,built-500 BENCH_SECONDS=3 BENCH_RATE_SECONDS=5 npm run bench`.
//
// A benchmark, not a test: it exits 1 only when a request failed (a non-2xx answer, a connection
// error or a timeout, in the warm-up or the measured run) or a webhook was not delivered, never because
// of a ratio or a target.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import type { Result } from "autocannon";
import { type BenchResults, compare, type Row, type TargetResult } from "./compare.ts";
import { builtNodeFlags, killAll, startTarget, type Target } from "./launch.ts";
import { CONNECTIONS, failures, load, preflight, steadyRequest, unexpected } from "./load.ts";
import { openLoop } from "./open-loop.ts";
import { type Scenario, selectScenarios, type TargetName } from "./scenarios.ts";
import { evaluateTargets, measureEach } from "./summary.ts";
import { benchWebhooks, type WebhookBenchResult } from "./webhooks.ts";

function seconds(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of seconds, at least 1`);
  return value;
}

const WARMUP_SECONDS = seconds("BENCH_WARMUP_SECONDS", 2);
const MEASURE_SECONDS = seconds("BENCH_SECONDS", 8);
const RATE_SECONDS = seconds("BENCH_RATE_SECONDS", 60);
const RATE_WARMUP_SECONDS = seconds("BENCH_RATE_WARMUP_SECONDS", 5);
const RSS_SAMPLE_MS = 100;
/** Fresh starts of the production build whose start-up times give the median. */
const STARTUP_ROUNDS = 3;
const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

/** The performance targets (docs/contributing.md "Benchmark"), each computed from the rows of this run. */
interface TargetSpec {
  text: string;
  /** The scenario ids it needs. */
  needs: string[];
  value: (
    row: (id: string) => Row,
    startup: Partial<Record<TargetName, number>>,
    has: (id: string) => boolean,
  ) => number | null;
  /**
   * The same figure from the servers' CPU time per request instead of their throughput, for the targets
   * that compare two servers: on a machine other work shares, the steadier of the two.
   */
  byCpu?: (row: (id: string) => Row) => number | null;
  /** How the value is shown. */
  unit: "%" | "ms" | "MB" | "x";
  /** Absent: a figure measured without a threshold (reported, neither met nor not). */
  met?: (value: number) => boolean;
  /** The figures behind the value, printed beside it. */
  detail?: (row: (id: string) => Row) => string;
}

const ratio = (a: Row, b: Row) => (b.requestsPerSecond > 0 ? a.requestsPerSecond / b.requestsPerSecond : null);
/** How many times b's CPU time per request a's takes. */
const cpuTimes = (a: Row, b: Row) =>
  a.cpuUsPerRequest && b.cpuUsPerRequest ? a.cpuUsPerRequest / b.cpuUsPerRequest : null;
/** How many of a's requests fit in the CPU time of b's, relative: b's CPU per request over a's. */
const cpuRatio = (a: Row, b: Row) =>
  a.cpuUsPerRequest && b.cpuUsPerRequest ? b.cpuUsPerRequest / a.cpuUsPerRequest : null;

const TARGETS: TargetSpec[] = [
  {
    text: "POST /v1/tokens >= 80 % of the stack ceiling (Express + validator, same request)",
    needs: ["tokens", "ceiling-post"],
    value: (r) => ratio(r("tokens"), r("ceiling-post")),
    byCpu: (r) => cpuRatio(r("tokens"), r("ceiling-post")),
    unit: "%",
    met: (v) => v >= 0.8,
  },
  {
    text: "POST /v1/tokens >= 45 % of bare Express POST",
    needs: ["tokens", "bare-post"],
    value: (r) => ratio(r("tokens"), r("bare-post")),
    byCpu: (r) => cpuRatio(r("tokens"), r("bare-post")),
    unit: "%",
    met: (v) => v >= 0.45,
  },
  {
    text: "GET /v1/tokens/{id} >= 90 % of its ceiling",
    needs: ["tokens-get", "ceiling-get"],
    value: (r) => ratio(r("tokens-get"), r("ceiling-get")),
    byCpu: (r) => cpuRatio(r("tokens-get"), r("ceiling-get")),
    unit: "%",
    met: (v) => v >= 0.9,
  },
  {
    text: "POST /v1/charges (card, fraud engine) >= 60 % of the POST ceiling",
    needs: ["charges", "ceiling-post"],
    value: (r) => ratio(r("charges"), r("ceiling-post")),
    byCpu: (r) => cpuRatio(r("charges"), r("ceiling-post")),
    unit: "%",
    met: (v) => v >= 0.6,
  },
  {
    text: "an Idempotency-Key costs <= 15 % on POST /v1/merchants",
    needs: ["merchants", "merchants-idem"],
    value: (r) => {
      const kept = ratio(r("merchants-idem"), r("merchants"));
      return kept === null ? null : 1 - kept;
    },
    byCpu: (r) => {
      const kept = cpuRatio(r("merchants-idem"), r("merchants"));
      return kept === null ? null : 1 - kept;
    },
    unit: "%",
    met: (v) => v <= 0.15,
  },
  {
    // Issue 36: the platform's own overhead over the acquirer, with the acquirer answering at once.
    text: "CPU per production charge through the Adyen connector <= 1.3x the simulator path's (stand-in answering at once)",
    needs: ["adyen-charges", "built-live-charges"],
    value: (r) => cpuTimes(r("adyen-charges"), r("built-live-charges")),
    unit: "x",
    met: (v) => v <= 1.3,
    detail: (r) =>
      `${show(r("adyen-charges").cpuUsPerRequest)} µs against ${show(r("built-live-charges").cpuUsPerRequest)} µs`,
  },
  {
    text: "CPU per charge at saturation <= 5.6x a bare Express POST's: the production build (SQLite file)",
    needs: ["built-charges", "bare-post"],
    value: (r) => cpuTimes(r("built-charges"), r("bare-post")),
    unit: "x",
    met: (v) => v <= 5.6,
    detail: (r) =>
      `${show(r("built-charges").cpuUsPerRequest)} µs against ${show(r("bare-post").cpuUsPerRequest)} µs` +
      (r("charges").cpuUsPerRequest ? `; in-memory store ${show(cpuTimes(r("charges"), r("bare-post")), "x")}` : ""),
  },
  ...[
    { text: "p99 <= 10 ms", of: (row: Row) => row.p99Ms, max: 10 },
    { text: "p99.9 <= 20 ms", of: (row: Row) => row.p99_9Ms, max: 20 },
    { text: "no answer over 50 ms", of: (row: Row) => row.maxMs, max: 50 },
  ].map(
    (t): TargetSpec => ({
      text: `the production build, POST /v1/charges at 500/s open loop (${RATE_SECONDS} s): ${t.text}`,
      needs: ["built-500"],
      value: (r) => t.of(r("built-500")),
      unit: "ms",
      met: (v) => v <= t.max,
      detail: (r) => {
        const echo = r("echo-500");
        return echo ? `bare echo at the same rate: ${show(t.of(echo), "ms")}` : "";
      },
    }),
  ),
  {
    // The highest of the one-worker process's rows (the same process serves them one after the other).
    text: "the built server's peak RSS under load <= 180 MB (1 worker)",
    // Any of its rows measures it (the same process serves them one after the other).
    needs: [],
    value: (r, _startup, has) => {
      const peaks = ["built-charges", "built-get", "built-200", "built-500"].filter(has).map((id) => r(id).peakRssMb);
      return peaks.length === 0 || peaks.includes(null) ? null : Math.max(...(peaks as number[]));
    },
    unit: "MB",
    met: (v) => v <= 180,
  },
  ...(["charges", "get"] as const).map(
    (kind): TargetSpec => ({
      text: `the built server with 1 and 2 workers (WORKERS), ${kind === "get" ? "GET /v1/tokens/{id}" : "POST /v1/charges"}: 2 workers over 1`,
      needs: [`built-${kind}`, `built2-${kind}`],
      value: (r) => ratio(r(`built2-${kind}`), r(`built-${kind}`)),
      byCpu: (r) => cpuRatio(r(`built2-${kind}`), r(`built-${kind}`)),
      unit: "x",
      detail: (r) =>
        `${show(r(`built-${kind}`).requestsPerSecond)} -> ${show(r(`built2-${kind}`).requestsPerSecond)} req/s; ` +
        "autocannon shares the same cores",
    }),
  ),
  {
    text: "the built server's start to first answer <= 1 s (1 worker)",
    needs: ["built-charges"],
    value: (_r, startup) => startup.built ?? null,
    unit: "ms",
    met: (v) => v <= 1000,
  },
  ...(["worst-body", "worst-findings"] as const).map(
    (id): TargetSpec => ({
      text: `the worst body under the limit (${id}) <= 20x the CPU of an ordinary POST /v1/merchants`,
      needs: [id, "merchants"],
      value: (r) => cpuTimes(r(id), r("merchants")),
      unit: "x",
      met: (v) => v <= 20,
      detail: (r) => `${show(r(id).cpuUsPerRequest)} µs against ${show(r("merchants").cpuUsPerRequest)} µs`,
    }),
  ),
  {
    text: "the real server >= 2x the Prism mock on the same GET",
    needs: ["tokens-get", "prism-get"],
    value: (r) => ratio(r("tokens-get"), r("prism-get")),
    unit: "x",
    met: (v) => v >= 2,
  },
];

function show(value: number | null | undefined, unit: TargetSpec["unit"] | "" = ""): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "n/a";
  if (unit === "%") return `${(value * 100).toFixed(1)} %`;
  if (unit === "x") return `${value.toFixed(2)}x`;
  if (unit === "MB") return `${value.toFixed(1)} MB`;
  if (unit === "ms") return `${value.toFixed(value < 10 ? 1 : 0)} ms`;
  return value.toFixed(0);
}

/** Peak RSS of a target's processes during `run`: the sum over its processes, sampled. */
async function withRss<T>(target: Target, run: () => Promise<T>): Promise<{ result: T; peakRssMb: number | null }> {
  let peak: number | null = null;
  const sample = () => {
    let sum = 0;
    let any = false;
    for (const pid of target.pids()) {
      const rss = vmRssMb(pid);
      if (rss !== null) {
        sum += rss;
        any = true;
      }
    }
    if (any) peak = Math.max(peak ?? 0, sum);
  };
  sample();
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  try {
    const result = await run();
    sample();
    return { result, peakRssMb: peak };
  } finally {
    clearInterval(timer);
  }
}

/** CPU time (user + system) the processes have used so far, in ms, from /proc/<pid>/stat; null without /proc. */
function cpuMs(pids: number[]): number | null {
  let total = 0;
  for (const pid of pids) {
    try {
      // The fields after the command name (which may hold spaces, so it is skipped up to its ")").
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
      total += Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  }
  return (total * 1000) / CLOCK_TICKS;
}

/** The kernel's clock ticks per second (USER_HZ), in which /proc reports CPU time: 100 on Linux. */
const CLOCK_TICKS = 100;

function vmRssMb(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

function statusCodes(result: Result): Record<string, number> {
  return Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, Number(s.count)]));
}

async function measure(scenario: Scenario, target: Target): Promise<Row> {
  await preflight(scenario, target);
  if (scenario.rate !== undefined) return measureSteady(scenario, scenario.rate, target);
  const warmup = await load(scenario, target, WARMUP_SECONDS);
  const pids = target.pids();
  const cpuBefore = cpuMs(pids);
  const { result, peakRssMb } = await withRss(target, () => load(scenario, target, MEASURE_SECONDS));
  const cpuAfter = cpuMs(pids);
  return {
    id: scenario.id,
    scenario: scenario.name,
    target: scenario.target,
    kind: scenario.kind,
    rate: null,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p90Ms: result.latency.p90,
    p99Ms: result.latency.p99,
    p99_9Ms: result.latency.p99_9,
    maxMs: result.latency.max,
    requests: result.requests.total,
    non2xx: unexpected(result, scenario),
    errors: result.errors,
    timeouts: result.timeouts,
    warmupFailures: failures(warmup, scenario),
    peakRssMb,
    cpuUsPerRequest: perRequest(cpuBefore, cpuAfter, result.requests.total),
    statusCodes: statusCodes(result),
  };
}

function perRequest(cpuBefore: number | null, cpuAfter: number | null, requests: number): number | null {
  return cpuBefore === null || cpuAfter === null || requests === 0 ? null : ((cpuAfter - cpuBefore) * 1000) / requests;
}

/** A steady-rate scenario: open loop at its rate, after a warm-up at the same rate. */
async function measureSteady(scenario: Scenario, rate: number, target: Target): Promise<Row> {
  const request = steadyRequest(scenario, target);
  const warmup = await openLoop(request, rate, RATE_WARMUP_SECONDS);
  const pids = target.pids();
  const cpuBefore = cpuMs(pids);
  const { result, peakRssMb } = await withRss(target, () => openLoop(request, rate, RATE_SECONDS));
  const cpuAfter = cpuMs(pids);
  return {
    id: scenario.id,
    scenario: scenario.name,
    target: scenario.target,
    kind: scenario.kind,
    rate,
    requestsPerSecond: result.ok / RATE_SECONDS,
    p50Ms: result.p50Ms,
    p90Ms: result.p90Ms,
    p99Ms: result.p99Ms,
    p99_9Ms: result.p99_9Ms,
    maxMs: result.maxMs,
    requests: result.ok + result.failed,
    non2xx: result.failed,
    errors: 0,
    timeouts: 0,
    warmupFailures: warmup.failed,
    peakRssMb,
    cpuUsPerRequest: perRequest(cpuBefore, cpuAfter, result.ok + result.failed),
    statusCodes: result.statusCodes,
    senderLateMs: result.maxSendDelayMs,
  };
}

function pad(value: string, width: number, right = false): string {
  return right ? value.padStart(width) : value.padEnd(width);
}

function printTable(rows: Row[]): void {
  const header = [
    "scenario",
    "req/s (mean)",
    "p50 ms",
    "p90 ms",
    "p99 ms",
    "p99.9 ms",
    "max ms",
    "failed",
    "peak RSS MB",
    "CPU µs/req",
    "vs bare",
  ];
  const widths = [46, 12, 7, 7, 7, 8, 7, 6, 11, 10, 7];
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i] ?? 8, i > 0)).join("  ");
  const ms = (value: number | undefined) =>
    value === undefined || Number.isNaN(value) ? "n/a" : show(value, "ms").replace(" ms", "");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) {
    console.log(
      line([
        r.scenario,
        show(r.requestsPerSecond),
        ms(r.p50Ms),
        ms(r.p90Ms),
        ms(r.p99Ms),
        ms(r.p99_9Ms),
        ms(r.maxMs),
        String(r.non2xx + r.errors + r.timeouts + r.warmupFailures),
        r.peakRssMb === null ? "n/a" : r.peakRssMb.toFixed(1),
        r.cpuUsPerRequest === null ? "n/a" : r.cpuUsPerRequest.toFixed(0),
        r.ratioToBare === undefined ? "-" : show(r.ratioToBare, "%"),
      ]),
    );
  }
}

function readResults(file: string): BenchResults {
  return JSON.parse(readFileSync(file, "utf8")) as BenchResults;
}

async function run(): Promise<{ results: BenchResults; ok: boolean }> {
  const startedAt = new Date();
  const { scenarios, webhooks: withWebhooks } = selectScenarios(process.env.BENCH_ONLY);
  console.log(
    `bench: ${scenarios.length} scenario(s)${withWebhooks ? " and webhook delivery" : ""}; ${CONNECTIONS} connections, ` +
      `${WARMUP_SECONDS} s warm-up + ${MEASURE_SECONDS} s each; at a steady rate open loop, ${RATE_WARMUP_SECONDS} s ` +
      `warm-up + ${RATE_SECONDS} s; ${os.cpus().length} CPUs, Node ${process.version}; servers on 127.0.0.1 ` +
      "in their own processes, the load generators in this one",
  );

  const needed = new Set<TargetName>(scenarios.map((s) => s.target));
  if (withWebhooks) needed.add("payments");
  const lastUse = new Map<TargetName, number>();
  scenarios.forEach((s, i) => {
    lastUse.set(s.target, i);
  });
  const targets = new Map<TargetName, Target>();
  const startup: Partial<Record<TargetName, number>> = {};
  const startupRuns: Partial<Record<TargetName, number[]>> = {};

  async function target(name: TargetName): Promise<Target> {
    const running = targets.get(name);
    if (running) return running;
    if (name === "built" || name === "built2") {
      // Fresh starts of the production build, each on an empty store (the first start's work included:
      // schema, bootstrap key); the last one stays up for the load.
      const times: number[] = [];
      for (let i = 1; i < STARTUP_ROUNDS; i++) {
        const probe = await startTarget(name);
        times.push(probe.startupMs ?? Number.NaN);
        await probe.stop();
      }
      const started = await startTarget(name);
      times.push(started.startupMs ?? Number.NaN);
      startupRuns[name] = times;
      startup[name] = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];
      targets.set(name, started);
      return started;
    }
    const started = await startTarget(name);
    targets.set(name, started);
    return started;
  }

  try {
    // The in-process servers start first and stay up; the production builds start when their turn comes.
    for (const name of ["payments", "bare", "validated", "prism"] as const) if (needed.has(name)) await target(name);
    // A scenario that throws is reported and the others still run (summary.ts measureEach).
    const { rows, failures: scenarioFailures } = await measureEach(
      scenarios,
      async (scenario, i) => {
        const t = await target(scenario.target);
        process.stdout.write(`  ${scenario.name} ...`);
        const row = await measure(scenario, t);
        process.stdout.write(` ${show(row.requestsPerSecond)} req/s, p99 ${show(row.p99Ms, "ms")}\n`);
        if ((scenario.target === "built" || scenario.target === "built2") && lastUse.get(scenario.target) === i) {
          await t.stop();
          targets.delete(scenario.target);
        }
        return row;
      },
      async (scenario, _i, error) => {
        process.stdout.write(` failed: ${error instanceof Error ? error.message : String(error)}\n`);
        // Its server may be the cause: the next scenario on that target starts a fresh one.
        const t = targets.get(scenario.target);
        targets.delete(scenario.target);
        await t?.stop().catch(() => {});
      },
    );

    const bare = (kind: string) => rows.find((r) => r.target === "bare" && r.kind === kind);
    for (const r of rows) {
      const base = bare(r.kind);
      if (r.target !== "bare" && r.rate === null && base && base.requestsPerSecond > 0) {
        r.ratioToBare = r.requestsPerSecond / base.requestsPerSecond;
      }
    }

    if (rows.length > 0) {
      console.log("");
      printTable(rows);
      console.log(
        `\npeak RSS: the sum of the server's processes' VmRSS (/proc/<pid>/status), sampled every ${RSS_SAMPLE_MS} ms ` +
          "during the measured run; the built rows are the production server's (the others hold in-memory stores)",
      );
      console.log(
        "CPU µs/req: the server's processes' CPU time (/proc/<pid>/stat, user + system) over the measured run, per " +
          "request answered; steadier than req/s when other work shares the machine (it does not count waiting)",
      );
    }
    for (const name of ["built", "built2"] as const) {
      const times = startupRuns[name];
      if (times) {
        console.log(
          `start-up, ${name === "built" ? "1 worker" : "2 workers"}: spawn to first answer ${show(startup[name], "ms")} ` +
            `(median of ${times.length} fresh starts: ${times.map((t) => show(t, "ms")).join(", ")})`,
        );
      }
    }
    const byId = new Map(rows.map((r) => [r.id, r]));

    const targetResults: TargetResult[] = evaluateTargets(TARGETS, byId, startup);
    console.log("");
    for (const t of targetResults) {
      const verdict = t.missing
        ? `not measured (run ${t.missing.join(", ")})`
        : t.reportOnly
          ? "reported; no threshold"
          : t.met === null
            ? "not measured"
            : t.met
              ? "met"
              : "not met";
      const cpu = t.byCpu === undefined ? "" : `; by CPU per request ${show(t.byCpu, t.unit)}`;
      const detail = t.detail === undefined ? "" : `; ${t.detail}`;
      console.log(`target: ${t.target}: ${show(t.value, t.unit)} (${verdict})${cpu}${detail}`);
    }
    if (rows.length > 0)
      console.log("ratios come from this one run; absolute numbers are not comparable across runs or machines");

    let webhooks: WebhookBenchResult | null = null;
    if (withWebhooks) {
      const payments = await target("payments");
      process.stdout.write("  webhook delivery (lag at 100 events/s, then a burst) ...\n");
      if (!payments.child) throw new Error("the payments target has no IPC channel");
      webhooks = await benchWebhooks({
        url: payments.ready.url,
        key: payments.ready.key ?? "",
        merchantId: payments.ready.merchantId ?? "",
        tokenId: payments.ready.tokenId ?? "",
        child: payments.child,
      });
      console.log(
        `webhooks: ${webhooks.throughput.delivered} of ${webhooks.throughput.events} events delivered to a loopback ` +
          `receiver in ${webhooks.throughput.seconds.toFixed(2)} s: ${show(webhooks.throughput.deliveriesPerSecond)} deliveries/s`,
      );
      console.log(
        `webhooks: lag from commit to delivery at ${webhooks.lag.eventsPerSecond} events/s over ${webhooks.lag.delivered} ` +
          `events: p50 ${show(webhooks.lag.p50Ms)} ms, p99 ${show(webhooks.lag.p99Ms)} ms, max ${show(webhooks.lag.maxMs)} ms`,
      );
      for (const t of webhooks.targets) {
        console.log(`target: webhooks ${t.target}: ${show(t.value)} (${t.met ? "met" : "not met"})`);
      }
      if (!webhooks.ok) {
        console.error(
          `bench: webhooks: ${webhooks.lag.failedCharges} charges failed; delivered ${webhooks.lag.delivered} of ` +
            `${webhooks.lag.events} lag events and ${webhooks.throughput.delivered} of ${webhooks.throughput.events} burst events`,
        );
      }
    }

    for (const f of scenarioFailures) console.error(`bench: ${f.scenario}: failed, no figures: ${f.error}`);
    const failed = rows.filter((r) => r.non2xx + r.errors + r.timeouts + r.warmupFailures > 0);
    for (const r of failed) {
      console.error(
        `bench: ${r.scenario}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ` +
          `${r.warmupFailures} failed in warm-up; status codes ${JSON.stringify(r.statusCodes)}`,
      );
    }
    const stderr = [...targets.values()].flatMap((t) => (t.stderr() ? [`[${t.label}] ${t.stderr()}`] : []));
    if (stderr.length > 0) console.log(`\nserver stderr:\n${stderr.join("\n").trimEnd()}`);

    const ok = failed.length === 0 && scenarioFailures.length === 0 && (webhooks?.ok ?? true);
    return {
      ok,
      results: {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        machine: {
          cpus: os.cpus().length,
          cpuModel: os.cpus()[0]?.model,
          node: process.version,
          platform: os.platform(),
          loadAverage: os.loadavg(),
        },
        settings: {
          only: process.env.BENCH_ONLY ?? null,
          builtNodeFlags: builtNodeFlags(),
          connections: CONNECTIONS,
          rateWarmupSeconds: RATE_WARMUP_SECONDS,
          warmupSeconds: WARMUP_SECONDS,
          measureSeconds: MEASURE_SECONDS,
          rateSeconds: RATE_SECONDS,
          memory: `sum of the VmRSS of each server's processes, sampled every ${RSS_SAMPLE_MS} ms during the measured run`,
        },
        scenarios: rows,
        scenarioFailures,
        startupMs: startup,
        startupRunsMs: startupRuns,
        targets: targetResults,
        webhooks,
        ok,
      },
    };
  } finally {
    await Promise.all([...targets.values()].map((t) => t.stop()));
  }
}

async function main(argv: string[]): Promise<number> {
  const at = argv.indexOf("--compare");
  const files = at === -1 ? [] : argv.slice(at + 1).filter((a) => !a.startsWith("--"));
  if (at !== -1 && (files.length < 1 || files.length > 2)) {
    console.error("usage: npm run bench -- --compare <saved.json> [<newer.json>]");
    return 2;
  }
  if (files.length === 2) {
    // Two saved runs: no measuring, only the comparison.
    console.log(compare(readResults(files[0] as string), readResults(files[1] as string)));
    return 0;
  }
  const before = files[0] === undefined ? null : readResults(files[0]);
  const { results, ok } = await run();
  mkdirSync(RESULTS_DIR, { recursive: true });
  const text = `${JSON.stringify(results, null, 2)}\n`;
  const latest = `${RESULTS_DIR}latest.json`;
  const dated = `${RESULTS_DIR}${results.startedAt.replace(/[:.]/g, "-")}.json`;
  writeFileSync(latest, text);
  writeFileSync(dated, text);
  console.log(`results written to ${latest} and ${dated}`);
  if (before) console.log(`\n${compare(before, results)}`);
  return ok ? 0 : 1;
}

const HARD_LIMIT_MS = 30 * 60_000;
const hardLimit = setTimeout(() => {
  console.error(`bench: still running after ${HARD_LIMIT_MS / 60_000} minutes, stopping`);
  killAll();
  process.exit(1);
}, HARD_LIMIT_MS);
hardLimit.unref();

let exitCode = 1;
try {
  exitCode = await main(process.argv.slice(2));
} catch (err) {
  console.error(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
}
process.exit(exitCode);
