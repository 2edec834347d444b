import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { childEnv, linesOf, SERVER_DIR, type ServerProcess, spawnServer } from "../support/process.ts";

// Rate limits hold across processes (docs/api.md "Rate limits"): with WORKERS=2, and with two server
// processes on one store, a flood gets no more than 110 % of each configured limit per window, and not
// less than 90 % of it before it is refused: the production and sandbox per-key limits (set lower here,
// see LIVE_PER_SECOND) and the per-address limits of keyless requests (60 per minute) and of the payment
// page (10 per minute) at their defaults. Every request opens a connection of its own, so the cluster
// hands them to the workers in turn; with two processes the flood alternates between them.
//
// A window's grants are counted from the client's side: a request sent and answered within one window
// was decided in it; one in flight across a window's edge may belong to either side, so it is counted
// for both windows when checking the upper bound, and for neither when checking the lower one. The
// few requests in flight at once keep that uncertainty under 10 % of each limit.

const SECRET = /key_test_[0-9A-Za-z]{32}/;
const tmp = mkdtempSync(join(tmpdir(), "payments-rate-limits-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Sample {
  sent: number;
  received: number;
  status: number;
}

/** One request on a connection of its own; resolves with the status. */
function send(url: string, method: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(method === "POST" ? "{}" : undefined);
  });
}

/**
 * Requests from `concurrency` loops, each taking the next target in turn, until `done` says so.
 * Returns every request's send and answer times and status.
 */
async function flood(options: {
  targets: string[];
  path: string;
  method?: string;
  headers?: Record<string, string>;
  concurrency: number;
  done: (samples: Sample[], started: number) => boolean;
}): Promise<Sample[]> {
  const samples: Sample[] = [];
  const started = Date.now();
  let next = 0;
  const loop = async () => {
    while (!options.done(samples, started)) {
      const target = options.targets[next++ % options.targets.length] as string;
      const sent = Date.now();
      const status = await send(`${target}${options.path}`, options.method ?? "GET", {
        "content-type": "application/json",
        ...options.headers,
      });
      samples.push({ sent, received: Date.now(), status });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  return samples;
}

interface WindowCount {
  window: number;
  /** Granted requests sent and answered within the window. */
  certain: number;
  /** Granted requests in flight across the window's start, or its end. */
  edgeIn: number;
  edgeOut: number;
  /** A refusal (429) sent and answered within the window: its quota was spent. */
  refused: boolean;
}

/** The flood's grants per window, as far as the client can tell (see the top of this file). */
function perWindow(samples: Sample[], windowMs: number): WindowCount[] {
  const windows = new Map<number, WindowCount>();
  const at = (window: number) => {
    let count = windows.get(window);
    if (!count) {
      count = { window, certain: 0, edgeIn: 0, edgeOut: 0, refused: false };
      windows.set(window, count);
    }
    return count;
  };
  for (const s of samples) {
    const from = Math.floor(s.sent / windowMs);
    const to = Math.floor(s.received / windowMs);
    if (s.status === 429) {
      if (from === to) at(from).refused = true;
      continue;
    }
    if (from === to) {
      at(from).certain++;
    } else {
      at(from).edgeOut++;
      at(to).edgeIn++;
    }
  }
  return [...windows.values()].sort((a, b) => a.window - b.window);
}

/**
 * Asserts that no window granted more than 110 % of `limit`, and that every window whose quota ran out
 * granted at least 90 % of it.
 */
function expectWithinTenPercent(what: string, samples: Sample[], windowMs: number, limit: number): WindowCount[] {
  const counts = perWindow(samples, windowMs);
  const table = JSON.stringify(counts);
  expect(
    samples.filter((s) => s.status === 429).length,
    `${what}: the flood was refused at all (${table})`,
  ).toBeGreaterThan(0);
  for (const c of counts) {
    expect(
      c.certain + c.edgeIn + c.edgeOut,
      `${what}: at most 110 % of ${limit} in a window (${table})`,
    ).toBeLessThanOrEqual(Math.floor(limit * 1.1));
    if (c.refused) {
      expect(
        c.certain + c.edgeIn,
        `${what}: at least 90 % of ${limit} before refusing (${table})`,
      ).toBeGreaterThanOrEqual(Math.ceil(limit * 0.9));
    }
  }
  return counts;
}

const run = promisify(execFile);

/** A production key made with the admin CLI on the server's store, as an operator makes one. */
async function productionKey(dataDir: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "src/cli.ts", "create-key", "--name", "flood", "--scopes", "*", "--live"],
    { cwd: SERVER_DIR, env: childEnv({ DATA_DIR: dataDir, LOG_LEVEL: "silent" }) },
  );
  const secret = /key_live_[0-9A-Za-z]{32}/.exec(stdout)?.[0];
  if (!secret) throw new Error(`the CLI printed no production key:\n${stdout}`);
  return secret;
}

/**
 * A process's first requests load code and compile the contract's schemas, a second or more on a busy
 * machine: a few requests per target with a key of their own, so the flood measures the limits only.
 */
async function warmUp(targets: string[], sandboxKey: string): Promise<void> {
  const created = await fetch(`${targets[0]}/v1/service_keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${sandboxKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "warm-up", scopes: ["merchants"] }),
  });
  const { secret } = (await created.json()) as { secret: string };
  for (let i = 0; i < 4 * targets.length; i++) {
    expect(
      await send(`${targets[i % targets.length]}/v1/merchants?limit=1`, "GET", { authorization: `Bearer ${secret}` }),
    ).toBe(200);
  }
}

/**
 * The per-key limits this suite sets: a flood must outrun them on a busy two-core machine, one
 * request in flight at a time (see the top of this file), and they stay high enough that 10 % is at
 * least two requests. The per-address limits keep their defaults.
 */
const LIVE_PER_SECOND = 40;
const TEST_PER_SECOND = 20;

/** Floods every limit through `targets` (all on one store). */
async function floodEveryLimit(targets: string[], sandboxKey: string, liveKey: string) {
  await warmUp(targets, sandboxKey);
  // Per-second windows: until two windows have refused a request (their quota was spent), or 30 s.
  const twoSpentWindows = (samples: Sample[], started: number) =>
    perWindow(samples, 1000).filter((w) => w.refused).length >= 2 || Date.now() - started > 30_000;
  const live = await flood({
    targets,
    path: "/v1/merchants?limit=1",
    headers: { authorization: `Bearer ${liveKey}` },
    concurrency: 2,
    done: twoSpentWindows,
  });
  expectWithinTenPercent(`a production key (${LIVE_PER_SECOND} per second)`, live, 1000, LIVE_PER_SECOND);
  const sandbox = await flood({
    targets,
    path: "/v1/merchants?limit=1",
    headers: { authorization: `Bearer ${sandboxKey}` },
    concurrency: 1,
    done: twoSpentWindows,
  });
  expectWithinTenPercent(`a sandbox key (${TEST_PER_SECOND} per second)`, sandbox, 1000, TEST_PER_SECOND);
  // Per-minute windows, at their defaults: three times the limit.
  const enough = (n: number) => (samples: Sample[]) => samples.length >= n;
  const keyless = await flood({ targets, path: "/v1/merchants", concurrency: 3, done: enough(180) });
  expectWithinTenPercent("requests without a key (60 per minute per address)", keyless, 60_000, 60);
  const pay = await flood({
    targets,
    path: "/v1/payment_links/plink_0AbCdEfGhIjKlMnOpQrStUvW/pay",
    method: "POST",
    concurrency: 1,
    done: enough(30),
  });
  expectWithinTenPercent("payment-page payments (10 per minute per address)", pay, 60_000, 10);
}

/** The settings of every server in this suite. */
const LIMITS = {
  RATE_LIMIT_LIVE_PER_SECOND: String(LIVE_PER_SECOND),
  RATE_LIMIT_TEST_PER_SECOND: String(TEST_PER_SECOND),
};

/** The JSON log lines of a process's stdout. */
const logLines = (stdout: string) =>
  linesOf(stdout)
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("a flood across processes on one store", { timeout: 120_000 }, () => {
  it("gets each limit within 10 % with WORKERS=2", async () => {
    const dataDir = join(tmp, "workers");
    const server = spawnServer({ PORT: "0", DATA_DIR: dataDir, WORKERS: "2", ...LIMITS });
    try {
      const url = await server.listening;
      await expect.poll(() => server.stdout(), { timeout: 30_000 }).toMatch(SECRET);
      await expect
        .poll(() => logLines(server.stdout()).filter((l) => l.msg === "payments API listening").length, {
          timeout: 30_000,
        })
        .toBe(2);
      const sandboxKey = SECRET.exec(server.stdout())?.[0] as string;
      await floodEveryLimit([url], sandboxKey, await productionKey(dataDir));
      // Both workers answered the flood.
      const workers = new Set(
        logLines(server.stdout())
          .filter((l) => l.msg === "request" && l.status === 429)
          .map((l) => l.worker),
      );
      expect(workers).toEqual(new Set([1, 2]));
    } finally {
      expect((await server.stop()).code, server.stderr()).toBe(0);
    }
  });

  it("gets each limit within 10 % from two server processes on one DATA_DIR", async () => {
    const dataDir = join(tmp, "instances");
    const servers: ServerProcess[] = [spawnServer({ PORT: "0", DATA_DIR: dataDir, ...LIMITS })];
    try {
      const first = await (servers[0] as ServerProcess).listening;
      await expect.poll(() => servers[0]?.stdout(), { timeout: 30_000 }).toMatch(SECRET);
      const sandboxKey = SECRET.exec(servers[0]?.stdout() ?? "")?.[0] as string;
      servers.push(spawnServer({ PORT: "0", DATA_DIR: dataDir, ...LIMITS }));
      const second = await (servers[1] as ServerProcess).listening;
      await floodEveryLimit([first, second], sandboxKey, await productionKey(dataDir));
      for (const server of servers) {
        expect(logLines(server.stdout()).some((l) => l.msg === "request" && l.status === 429)).toBe(true);
      }
    } finally {
      for (const server of servers) expect((await server.stop()).code, server.stderr()).toBe(0);
    }
  });
});
