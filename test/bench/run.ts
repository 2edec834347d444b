// `npm run bench` (README 'Benchmark'): autocannon against the real payments server and, in the same run, a
// bare Express 5 app as the baseline; results are quoted as ratios to the baseline, because absolute
// numbers move between runs and machines (the README quotes one run on the project's machine).
//
// A second baseline, Express 5 + express-openapi-validator on the same document with the server's
// validator options and handlers that do no work, shows the ceiling this stack allows: what is left
// between it and bare Express is the validator's own cost, which no change to the server can remove.
//
// Each server runs in its own child process (./targets/*.ts), so the memory figure is the server's
// own: its VmRSS read from /proc/<pid>/status every 100 ms during a measured run (the peak is kept;
// VmHWM, the process's lifetime high-water mark, is reported at the end). autocannon runs in this
// process, on the same cores, as the README's figures were measured.
//
// Webhook delivery (./webhooks.ts) runs last, against the same payments server process: deliveries/s
// to a receiver on 127.0.0.1, and the lag from an event's commit to its delivery at 100 events/s.
// BENCH_ONLY=webhooks runs that part alone (a quick look while working on the dispatcher).
//
// A benchmark, not a test: it exits 1 only when a request failed (a non-2xx answer, a connection
// error or a timeout, in the warm-up or the measured run) or a webhook was not delivered, never because
// of a ratio or a target.

import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import autocannon, { type Options, type Result } from "autocannon";
import { chargeBody, evaluationBody, type ReadyMessage, TOKEN_BODY } from "./targets/protocol.ts";
import { benchWebhooks, type WebhookBenchResult } from "./webhooks.ts";

/** The README's figures were taken with 50 connections; keep that so ratios stay comparable. */
const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const MEASURE_SECONDS = 8;
const RSS_SAMPLE_MS = 100;
const START_TIMEOUT_MS = 60_000;
/** Ten scenarios of 10 s each, the webhook runs and start-up; anything past this is a hang. */
const HARD_LIMIT_MS = 340_000;
const ONLY_WEBHOOKS = process.env.BENCH_ONLY === "webhooks";
/** The issue's targets: POST /v1/tokens and POST /v1/charges against bare Express's JSON POST. */
const TARGETS = [
  { scenario: "POST /v1/tokens", ratio: 0.6 },
  { scenario: "POST /v1/charges", ratio: 0.4 },
] as const;
/** Each payments scenario and the validator-only scenario that is its ceiling. */
const CEILINGS = [
  { server: "POST /v1/tokens", ceiling: "Express + validator POST /v1/tokens" },
  { server: "GET /v1/tokens/{id}", ceiling: "Express + validator GET /v1/tokens/{id}" },
] as const;

const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));
const TSX = import.meta.resolve("tsx");

type Kind = "GET" | "POST";
type TargetName = "payments" | "bare" | "validated";

interface Target {
  name: TargetName;
  label: string;
  child: ChildProcess;
  ready: ReadyMessage;
  stderr: string[];
}

interface Scenario {
  name: string;
  target: TargetName;
  kind: Kind;
  options: (target: Target) => Omit<Options, "url" | "connections" | "duration"> & { path: string };
}

interface Row {
  scenario: string;
  target: TargetName;
  kind: Kind;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  warmupFailures: number;
  peakRssMb: number | null;
  statusCodes: Record<string, number>;
  ratioToBare?: number;
}

const children: ChildProcess[] = [];

function stopChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
}

const hardLimit = setTimeout(() => {
  console.error(`bench: still running after ${HARD_LIMIT_MS / 1000} s, stopping`);
  stopChildren();
  process.exit(1);
}, HARD_LIMIT_MS);
hardLimit.unref();

async function startTarget(name: TargetName, label: string, file: string): Promise<Target> {
  const path = fileURLToPath(new URL(file, import.meta.url));
  const child = spawn(process.execPath, ["--import", TSX, path], {
    stdio: ["ignore", "inherit", "pipe", "ipc"],
    env: { ...process.env, NODE_ENV: "test" },
  });
  children.push(child);
  const stderr: string[] = [];
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
  const ready = await new Promise<ReadyMessage>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${label} did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    child.once("message", (message: ReadyMessage) => {
      clearTimeout(timer);
      resolve(message);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code ?? signal}) before listening:\n${stderr.join("")}`));
    });
  });
  const url = new URL(ready.url);
  if (url.hostname !== "127.0.0.1") throw new Error(`${label} listens on ${ready.url}, not on loopback`);
  return { name, label, child, ready, stderr };
}

/** kB fields of /proc/<pid>/status, in MB; null where /proc is not available. */
function procStatus(pid: number | undefined): { rssMb: number | null; hwmMb: number | null } {
  const file = `/proc/${pid}/status`;
  if (pid === undefined || !existsSync(file)) return { rssMb: null, hwmMb: null };
  const text = readFileSync(file, "utf8");
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text);
    return match ? Number(match[1]) / 1024 : null;
  };
  return { rssMb: field("VmRSS"), hwmMb: field("VmHWM") };
}

function failures(result: Result): number {
  return result.non2xx + result.errors + result.timeouts;
}

function statusCodes(result: Result): Record<string, number> {
  return Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, Number(s.count)]));
}

/** One request through fetch first, so a wrong setup fails at once with the server's answer. */
async function preflight(scenario: Scenario, target: Target): Promise<void> {
  const options = scenario.options(target);
  const request = options.requests?.[0]?.setupRequest?.({ ...options }, {}) ?? options;
  const res = await fetch(`${target.ready.url}${options.path}`, {
    method: request.method ?? "GET",
    headers: request.headers ?? {},
    body: request.body ?? null,
  });
  if (res.status < 200 || res.status > 299) {
    throw new Error(`${scenario.name}: preflight answered ${res.status}: ${await res.text()}`);
  }
}

async function measure(scenario: Scenario, target: Target): Promise<Row> {
  await preflight(scenario, target);
  const options = { ...scenario.options(target), connections: CONNECTIONS, timeout: 10 };
  const url = `${target.ready.url}${options.path}`;

  const warmup = await autocannon({ ...options, url, duration: WARMUP_SECONDS });

  let peakRssMb: number | null = null;
  const sample = () => {
    const { rssMb } = procStatus(target.child.pid);
    if (rssMb !== null) peakRssMb = Math.max(peakRssMb ?? 0, rssMb);
  };
  sample();
  const sampler = setInterval(sample, RSS_SAMPLE_MS);
  let result: Result;
  try {
    result = await autocannon({ ...options, url, duration: MEASURE_SECONDS });
  } finally {
    clearInterval(sampler);
  }
  sample();

  return {
    scenario: scenario.name,
    target: scenario.target,
    kind: scenario.kind,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    warmupFailures: failures(warmup),
    peakRssMb,
    statusCodes: statusCodes(result),
  };
}

function json(body: unknown): string {
  return JSON.stringify(body);
}

function auth(target: Target): Record<string, string> {
  return { Authorization: `Bearer ${target.ready.key}`, "Content-Type": "application/json" };
}

const SCENARIOS: Scenario[] = [
  {
    name: "bare Express GET /bare",
    target: "bare",
    kind: "GET",
    options: () => ({ path: "/bare", method: "GET" }),
  },
  {
    name: "GET /v1/tokens/{id}",
    target: "payments",
    kind: "GET",
    options: (t) => ({ path: `/v1/tokens/${t.ready.tokenId}`, method: "GET", headers: auth(t) }),
  },
  {
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
    name: "Express + validator GET /v1/tokens/{id}",
    target: "validated",
    kind: "GET",
    options: (t) => ({ path: `/v1/tokens/${t.ready.tokenId}`, method: "GET", headers: auth(t) }),
  },
  {
    // The same request as POST /v1/tokens below, validated and authorized (by a handler that accepts
    // any key) the same way, answered with a fixed token.
    name: "Express + validator POST /v1/tokens",
    target: "validated",
    kind: "POST",
    options: (t) => ({ path: "/v1/tokens", method: "POST", headers: auth(t), body: json(TOKEN_BODY) }),
  },
  {
    // Every request tokenizes the card: a new token (encryption, fingerprint, insert) each time.
    name: "POST /v1/tokens",
    target: "payments",
    kind: "POST",
    options: (t) => ({ path: "/v1/tokens", method: "POST", headers: auth(t), body: json(TOKEN_BODY) }),
  },
  {
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
    // A card charge captured at once on the same merchant and token each time: the charge, its ledger
    // entries, the balance and the events, in one store transaction per request.
    name: "POST /v1/charges",
    target: "payments",
    kind: "POST",
    options: (t) => ({
      path: "/v1/charges",
      method: "POST",
      headers: auth(t),
      body: json(chargeBody(t.ready.merchantId ?? "", t.ready.tokenId ?? "")),
    }),
  },
  {
    // A fraud evaluation of a prospective transaction on the prepared merchant and token, with a
    // customer IP address: settings, one list lookup over every list, the velocity counts read, the
    // merchant's history, then the evaluation and its `fraud.evaluated` event in one transaction.
    name: "POST /v1/fraud/evaluations",
    target: "payments",
    kind: "POST",
    options: (t) => ({
      path: "/v1/fraud/evaluations",
      method: "POST",
      headers: auth(t),
      body: json(evaluationBody(t.ready.merchantId ?? "", t.ready.tokenId ?? "")),
    }),
  },
];

function pad(value: string, width: number, right = false): string {
  return right ? value.padStart(width) : value.padEnd(width);
}

function fixed(value: number | null | undefined, digits = 0): string {
  return value === null || value === undefined ? "n/a" : value.toFixed(digits);
}

function printTable(rows: Row[]): void {
  const header = ["scenario", "req/s (mean)", "p50 ms", "p99 ms", "non-2xx", "errors", "peak RSS MB", "vs bare"];
  const widths = [40, 13, 7, 7, 8, 7, 12, 8];
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i] ?? 8, i > 0)).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) {
    console.log(
      line([
        r.scenario,
        fixed(r.requestsPerSecond),
        fixed(r.p50Ms),
        fixed(r.p99Ms),
        String(r.non2xx),
        String(r.errors + r.timeouts),
        fixed(r.peakRssMb, 1),
        r.ratioToBare === undefined ? "-" : `${fixed(r.ratioToBare * 100)} %`,
      ]),
    );
  }
}

async function main(): Promise<number> {
  const startedAt = new Date();
  console.log(
    `bench: ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${MEASURE_SECONDS} s per scenario, ` +
      `${os.cpus().length} CPUs, Node ${process.version}; servers on 127.0.0.1 in child processes`,
  );
  const targets = new Map<TargetName, Target>();
  targets.set(
    "payments",
    await startTarget(
      "payments",
      "payments server (VALIDATE_RESPONSES=false, REQUEST_LOG=true, in-memory store)",
      "./targets/payments-server.ts",
    ),
  );
  if (!ONLY_WEBHOOKS) {
    targets.set("bare", await startTarget("bare", "bare Express 5", "./targets/bare-express.ts"));
    targets.set(
      "validated",
      await startTarget("validated", "Express 5 + express-openapi-validator", "./targets/validated-express.ts"),
    );
  }

  const rows: Row[] = [];
  for (const scenario of ONLY_WEBHOOKS ? [] : SCENARIOS) {
    const target = targets.get(scenario.target);
    if (!target) throw new Error(`no target ${scenario.target}`);
    process.stdout.write(`  ${scenario.name} ...`);
    const row = await measure(scenario, target);
    process.stdout.write(` ${fixed(row.requestsPerSecond)} req/s\n`);
    rows.push(row);
  }

  const bare = (kind: Kind) => rows.find((r) => r.target === "bare" && r.kind === kind);
  for (const r of rows) {
    const base = bare(r.kind);
    if (r.target !== "bare" && base && base.requestsPerSecond > 0) {
      r.ratioToBare = r.requestsPerSecond / base.requestsPerSecond;
    }
  }
  const memory = Object.fromEntries(
    [...targets.values()].map((t) => [t.name, { label: t.label, vmHwmMb: procStatus(t.child.pid).hwmMb }]),
  );

  // The HTTP scenarios' summary (skipped when only the webhook part ran).
  const say = ONLY_WEBHOOKS ? () => {} : console.log;
  say("");
  if (!ONLY_WEBHOOKS) printTable(rows);
  say("");
  say(
    "peak RSS: the server process's VmRSS (/proc/<pid>/status) sampled every " +
      `${RSS_SAMPLE_MS} ms during the measured run; lifetime VmHWM: ` +
      Object.values(memory)
        .map((m) => `${m.label.split(" (")[0]} ${fixed(m.vmHwmMb, 1)} MB`)
        .join(", "),
  );

  say(
    "every server runs under tsx's loader, whose own thread is part of each RSS: compare them, " +
      "do not read either as a production figure",
  );

  const ratioOf = (scenario: string) => rows.find((r) => r.scenario === scenario)?.ratioToBare;
  const targetResults = TARGETS.map((t) => {
    const ratio = ratioOf(t.scenario);
    return {
      target: `${t.scenario} >= ${t.ratio * 100} % of bare Express POST`,
      ratio: ratio ?? null,
      met: (ratio ?? 0) >= t.ratio,
    };
  });
  for (const [i, t] of TARGETS.entries()) {
    const result = targetResults[i];
    say(
      `target: ${t.scenario} ≥ ${t.ratio * 100} % of bare Express POST: ` +
        `${fixed((result?.ratio ?? Number.NaN) * 100)} % (${result?.met ? "met" : "not met"})`,
    );
  }
  const ceilings = CEILINGS.map((c) => {
    const ceiling = rows.find((r) => r.scenario === c.ceiling);
    const server = rows.find((r) => r.scenario === c.server);
    return {
      scenario: c.server,
      ceilingToBare: ceiling?.ratioToBare ?? null,
      serverToCeiling: ceiling && server ? server.requestsPerSecond / ceiling.requestsPerSecond : null,
    };
  });
  for (const c of ceilings) {
    say(
      `ceiling: Express + express-openapi-validator alone answers ${c.scenario} at ` +
        `${fixed((c.ceilingToBare ?? Number.NaN) * 100)} % of bare Express; the payments server reaches ` +
        `${fixed((c.serverToCeiling ?? Number.NaN) * 100)} % of that`,
    );
  }
  const plain = rows.find((r) => r.scenario === "POST /v1/merchants");
  const keyed = rows.find((r) => r.scenario === "POST /v1/merchants + Idempotency-Key");
  const idempotencyRatio = plain && keyed ? keyed.requestsPerSecond / plain.requestsPerSecond : undefined;
  say(
    `Idempotency-Key cost: POST /v1/merchants with a fresh key runs at ${fixed((idempotencyRatio ?? Number.NaN) * 100)} % ` +
      "of the same request without one",
  );
  say("ratios come from this one run; absolute numbers are not comparable across runs or machines");

  const payments = targets.get("payments");
  if (!payments) throw new Error("no payments target");
  process.stdout.write("  webhook delivery (lag at 100 events/s, then a burst) ...\n");
  const webhooks: WebhookBenchResult = await benchWebhooks({
    url: payments.ready.url,
    key: payments.ready.key ?? "",
    merchantId: payments.ready.merchantId ?? "",
    tokenId: payments.ready.tokenId ?? "",
    child: payments.child,
  });
  console.log(
    `webhooks: ${webhooks.throughput.delivered} of ${webhooks.throughput.events} events delivered to a loopback ` +
      `receiver in ${fixed(webhooks.throughput.seconds, 2)} s: ${fixed(webhooks.throughput.deliveriesPerSecond)} deliveries/s`,
  );
  console.log(
    `webhooks: lag from commit to delivery at ${webhooks.lag.eventsPerSecond} events/s over ${webhooks.lag.delivered} ` +
      `events: p50 ${fixed(webhooks.lag.p50Ms)} ms, p99 ${fixed(webhooks.lag.p99Ms)} ms, max ${fixed(webhooks.lag.maxMs)} ms`,
  );
  for (const t of webhooks.targets) {
    console.log(`target: webhooks ${t.target}: ${fixed(t.value)} (${t.met ? "met" : "not met"})`);
  }

  const failed = rows.filter((r) => r.non2xx + r.errors + r.timeouts + r.warmupFailures > 0);
  if (!webhooks.ok) {
    console.error(
      `bench: webhooks: ${webhooks.lag.failedCharges} charges failed; delivered ${webhooks.lag.delivered} of ` +
        `${webhooks.lag.events} lag events and ${webhooks.throughput.delivered} of ${webhooks.throughput.events} burst events`,
    );
  }
  for (const r of failed) {
    console.error(
      `bench: ${r.scenario}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ` +
        `${r.warmupFailures} failed in warm-up; status codes ${JSON.stringify(r.statusCodes)}`,
    );
  }
  const stderr = [...targets.values()].flatMap((t) => (t.stderr.length ? [`[${t.label}] ${t.stderr.join("")}`] : []));
  if (stderr.length > 0) console.log(`\nserver stderr:\n${stderr.join("\n").trimEnd()}`);

  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = `${RESULTS_DIR}latest.json`;
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        machine: {
          cpus: os.cpus().length,
          cpuModel: os.cpus()[0]?.model,
          node: process.version,
          platform: os.platform(),
        },
        settings: {
          connections: CONNECTIONS,
          warmupSeconds: WARMUP_SECONDS,
          measureSeconds: MEASURE_SECONDS,
          paymentsServer: { VALIDATE_RESPONSES: "false", REQUEST_LOG: "true", store: "in-memory SQLite" },
          validatedExpress: "express-openapi-validator with the server's options, fixed answers, no store",
          memory: `VmRSS of each server's own process sampled every ${RSS_SAMPLE_MS} ms during the measured run`,
        },
        scenarios: rows,
        memory,
        targets: targetResults,
        ceilings,
        idempotencyKeyRatio: idempotencyRatio ?? null,
        webhooks,
        ok: failed.length === 0 && webhooks.ok,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`results written to ${file}`);
  return failed.length === 0 && webhooks.ok ? 0 : 1;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  stopChildren();
}
process.exit(exitCode);
