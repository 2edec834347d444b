// An open-loop sender for the benchmark's steady-rate scenarios (./scenarios.ts, `openRate`): requests
// go out at fixed times, `rate` a second, whether or not earlier ones have been answered, as independent
// clients send them; each latency is counted from the time the request was due, so a server that stalls
// is charged for every request that waited behind the stall (no coordinated omission). A closed-loop
// generator (autocannon, a fixed set of connections each waiting for its answer) sends less while the
// server is slow and so hides exactly the stalls this measures.
//
// It runs in the bench's process, on the same cores as the server, with keep-alive connections opened
// as needed (one per request in flight).

import { Agent, request } from "node:http";

export interface OpenLoopRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
}

export interface OpenLoopResult {
  rate: number;
  seconds: number;
  /** Requests answered 2xx, and every other outcome: another status, a connection error, no answer in time. */
  ok: number;
  failed: number;
  statusCodes: Record<string, number>;
  /** Of the answered requests, from the time each was due to its last byte, in ms. */
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p99_9Ms: number;
  maxMs: number;
  /** How late the sender itself sent, at its worst (a busy bench process delays its own timers). */
  maxSendDelayMs: number;
  /** Connections open at the end: how many requests were in flight at once at the worst. */
  connections: number;
  /**
   * Each answered request's window on the machine's monotonic clock, in µs (the clock V8's CPU
   * profiles use): from when it was due to its last byte. Only when asked (`windows: true`), for
   * `npm run bench:stalls`, which lines them up with the server's profile.
   */
  windows?: { dueUs: number; endUs: number }[];
}

/** performance.now() (ms from this process's start) → the machine's monotonic clock in µs. */
function monotonicUs(): (nowMs: number) => number {
  const offsetUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
  return (nowMs) => offsetUs + nowMs * 1000;
}

/** A request not answered within this is a failure (and the run still ends on time). */
const TIMEOUT_MS = 10_000;

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** Sends `req` `rate` times a second for `seconds`, then waits for the last answers. */
export async function openLoop(
  req: OpenLoopRequest,
  rate: number,
  seconds: number,
  options: { windows?: boolean } = {},
): Promise<OpenLoopResult> {
  const url = new URL(req.url);
  const toUs = monotonicUs();
  const windows: { dueUs: number; endUs: number }[] | undefined = options.windows ? [] : undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const total = Math.round(rate * seconds);
  const latencies = new Float64Array(total);
  const statusCodes: Record<string, number> = {};
  let answered = 0;
  let ok = 0;
  let failed = 0;
  let maxSendDelayMs = 0;
  const interval = 1000 / rate;
  const body = req.body === undefined ? undefined : Buffer.from(req.body);
  const headers = body ? { ...req.headers, "Content-Length": String(body.length) } : req.headers;

  const send = (due: number) =>
    new Promise<void>((resolve) => {
      let settled = false;
      const finish = (status: string, success: boolean) => {
        if (settled) return;
        settled = true;
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        if (success) {
          const end = performance.now();
          latencies[answered++] = end - due;
          windows?.push({ dueUs: toUs(due), endUs: toUs(end) });
          ok++;
        } else {
          failed++;
        }
        resolve();
      };
      const r = request(
        { agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: req.method, headers },
        (res) => {
          res.on("data", () => {});
          res.on("end", () => {
            const status = res.statusCode ?? 0;
            finish(String(status), status >= 200 && status < 300);
          });
          res.on("error", (err: NodeJS.ErrnoException) => finish(`error ${err.code ?? err.message}`, false));
        },
      );
      r.setTimeout(TIMEOUT_MS, () => {
        r.destroy();
        finish("timeout", false);
      });
      // Counted by cause (ECONNRESET, ...), so a failure says what it was.
      r.on("error", (err: NodeJS.ErrnoException) => finish(`error ${err.code ?? err.message}`, false));
      r.end(body);
    });

  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  let next = 0;
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      // Every request whose time has come goes out now, late ones included: their latency still
      // counts from when they were due.
      while (next < total && start + next * interval <= now) {
        const due = start + next * interval;
        maxSendDelayMs = Math.max(maxSendDelayMs, now - due);
        inFlight.push(send(due));
        next++;
      }
      if (next >= total) return done();
      setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    tick();
  });
  await Promise.all(inFlight);
  const connections = Object.values(agent.freeSockets).reduce((n, list) => n + (list?.length ?? 0), 0);
  agent.destroy();
  const sorted = latencies.subarray(0, answered).sort();
  return {
    rate,
    seconds,
    ok,
    failed,
    statusCodes,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    p99_9Ms: percentile(sorted, 99.9),
    maxMs: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
    maxSendDelayMs,
    connections,
    ...(windows ? { windows } : {}),
  };
}
