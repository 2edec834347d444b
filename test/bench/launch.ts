// Starting the benchmark's servers (./scenarios.ts, TargetName), each in its own process so the load
// generator's own allocations are never counted in a server's memory:
//
// - `payments`, `bare`, `validated`: ./targets/*.ts bundled into plain JavaScript (./bundle.ts: no
//   tsx at run time, as in production), reporting over IPC once they listen.
// - `prism`: the sandbox mock, as the suites run it (../support/prism.ts).
// - `built`, `built2`: the production build, `node server/dist/main.js` with NODE_ENV=production on a
//   SQLite file in WAL mode (what an operator runs), with WORKERS=1 and WORKERS=2; the time from the
//   spawn to the first answer of GET /healthz is its start-up time, and the load starts once every
//   worker listens. Rate limits are raised (the bench
//   sends thousands of requests a second with one key); everything else is production's default.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ADYEN_TEST_CREDENTIALS } from "../support/adyen-stand-in/index.ts";
import { startPrism } from "../support/prism.ts";
import { SERVER_DIR } from "../support/process.ts";
import { bundleTarget } from "./bundle.ts";
import type { TargetName } from "./scenarios.ts";
import { type ReadyMessage, TOKEN_BODY } from "./targets/protocol.ts";

const START_TIMEOUT_MS = 60_000;

export interface Target {
  name: TargetName;
  label: string;
  ready: ReadyMessage;
  /** The processes whose memory is the server's: the main process and, with workers, each worker. */
  pids(): number[];
  /** The IPC child (payments target only: the webhook run talks to it). */
  child?: ChildProcess;
  /** Start-up time of the production build: from the spawn to the first answered request. */
  startupMs?: number;
  /** The production build's fresh directory (its store is under `data/`): bench:growth weighs it. */
  dataDir?: string;
  stderr(): string;
  /** The production build's stdout so far (its JSON log, and V8's `--trace-gc` lines when asked for). */
  stdout?(): string;
  stop(): Promise<void>;
}

const LABELS: Record<TargetName, string> = {
  payments: "payments server (NODE_ENV=production, REQUEST_LOG=true, LOG_LEVEL=info, in-memory store)",
  bare: "bare Express 5",
  validated: "Express 5 + express-openapi-validator",
  prism: "Prism mock (npm run mock)",
  built: "payments server, production build, WORKERS=1 (SQLite file, WAL)",
  built2: "payments server, production build, WORKERS=2 (SQLite file, WAL)",
  adyen:
    "payments server, production build, WORKERS=1, PRODUCTION_ACQUIRER=adyen against the Adyen stand-in (in a process of its own, answering at once)",
  echo: "bare node:http echo",
};

const FILES: Partial<Record<TargetName, string>> = {
  payments: "./targets/payments-server.ts",
  bare: "./targets/bare-express.ts",
  validated: "./targets/validated-express.ts",
  echo: "./targets/echo.ts",
};

/** Every server process started, so a bench that must give up can end them all (killAll). */
const started = new Set<ChildProcess>();

/** SIGKILLs every server still running (the bench's hard time limit). */
export function killAll(): void {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

function track(child: ChildProcess): ChildProcess {
  started.add(child);
  child.once("exit", () => started.delete(child));
  return child;
}

/**
 * A started target's ready message (its address, on loopback), or its stderr if it exits first; the
 * stderr it writes, then and after, is collected into `stderr`.
 */
async function readyOf(child: ChildProcess, label: string, stderr: string[] = []): Promise<ReadyMessage> {
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
  const ready = await new Promise<ReadyMessage>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${label} did not start within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.once("message", (message: ReadyMessage) => {
      clearTimeout(timer);
      resolve(message);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code ?? signal}) before listening:\n${stderr.join("")}`));
    });
  });
  assertLoopback(label, ready.url);
  return ready;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** A ./targets/*.ts server, bundled into plain JavaScript (./bundle.ts) and run with node. */
export async function startScriptTarget(name: "payments" | "bare" | "validated" | "echo"): Promise<Target> {
  const label = LABELS[name];
  const path = await bundleTarget(fileURLToPath(new URL(FILES[name] as string, import.meta.url)), name);
  const child = track(
    spawn(process.execPath, [path], {
      // stdout (the payments server's request log lines) is discarded, as a log shipper would take it.
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      env: { ...process.env, NODE_ENV: "test" },
    }),
  );
  const stderr: string[] = [];
  const ready = await readyOf(child, label, stderr);
  return {
    name,
    label,
    ready,
    child,
    pids: () => (child.pid === undefined ? [] : [child.pid]),
    stderr: () => stderr.join(""),
    stop: () => stopChild(child),
  };
}

function assertLoopback(label: string, url: string): void {
  if (new URL(url).hostname !== "127.0.0.1") throw new Error(`${label} listens on ${url}, not on loopback`);
}

/** The token id of the document's GET /v1/tokens/{id} example is not needed: Prism answers any id. */
const MOCK_TOKEN_ID = "tok_4fQx9ZkT2mB7rLp1WcYd8sNa";

export async function startPrismTarget(): Promise<Target> {
  const prism = await startPrism();
  return {
    name: "prism",
    label: LABELS.prism,
    ready: { type: "ready", url: prism.url, key: `key_test_${"0".repeat(32)}`, tokenId: MOCK_TOKEN_ID },
    // Prism runs in its own process group; its memory is not one of the figures.
    pids: () => [],
    stderr: () => "",
    stop: () => prism.stop(),
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

let built = false;

/** `npm run build -w @payments/server`, once per bench run, so the measured build is the current code. */
export function buildServer(): void {
  if (built || process.env.BENCH_BUILT_DIR) return;
  execFileSync(process.execPath, ["build.mjs"], { cwd: SERVER_DIR, stdio: ["ignore", "ignore", "inherit"] });
  built = true;
}

/** The children of a process (its workers), from /proc; empty where /proc is not available. */
export function childPids(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
}

async function post(url: string, key: string, path: string, body: unknown, status: number): Promise<{ id: string }> {
  const send = () =>
    fetch(`${url}${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  let res: Response;
  try {
    res = await send();
  } catch (error) {
    // fetch pools keep-alive connections per origin: a server started on the port of one stopped before
    // (the start-up probes, freePort) can meet a connection to the dead one ("other side closed"), which
    // the pool then drops. Nothing reached a server, so the fixture is asked for once more.
    if (!(error instanceof TypeError)) throw error;
    res = await send();
  }
  if (res.status !== status)
    throw new Error(`creating the ${path} fixture answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { id: string };
}

/**
 * BENCH_BUILT_DIR: another build of the server to run instead of building dist/ (a directory inside
 * server/, where Node finds its dependencies: `node build.mjs --outdir node_modules/.bench-before` on the
 * commit before a change), so two versions are measured back to back the same way (`npm run bench:cpu`).
 */
export function builtDir(): string {
  return process.env.BENCH_BUILT_DIR ?? "dist";
}

/**
 * BENCH_NODE_FLAGS: node flags for the production build's runs (space-separated), to measure a setting
 * against the default in the same way (docs/operating.md "Start-up and memory": `--max-old-space-size=96`).
 */
export function builtNodeFlags(): string[] {
  return (process.env.BENCH_NODE_FLAGS ?? "").split(/\s+/).filter((flag) => flag !== "");
}

/** What the server's start-up log says about its heap (heap.ts's reason), from its log. */
export function heapNote(log: string): string {
  for (const line of log.split("\n")) {
    if (!line.startsWith("{") || !line.includes("heap")) continue;
    try {
      const entry: unknown = JSON.parse(line);
      if (typeof entry === "object" && entry !== null && "heap" in entry) return String(entry.heap);
    } catch {
      // a line of --trace-gc's that starts like JSON: not the one
    }
  }
  return "(not in the log)";
}

/**
 * The production build with `workers` workers on a fresh data directory. Its log (one JSON line per
 * request, as in production) goes to a file, not through this process, so reading it costs the load
 * generator nothing; the first start's sandbox key is read from there.
 */
export async function startBuiltTarget(
  name: "built" | "built2" | "adyen",
  /** Flags for node before the script (`--cpu-prof` for bench:profile). */
  nodeArgs: string[] = [],
  /** Settings besides the bench's own (bench:heap's METRICS_PORT). */
  settings: Record<string, string> = {},
): Promise<Target> {
  buildServer();
  const dist = builtDir();
  const workers = name === "built2" ? 2 : 1;
  const label = LABELS[name];
  const dataDir = mkdtempSync(join(tmpdir(), "payments-bench-"));
  const logFile = join(dataDir, "stdout.log");
  const errFile = join(dataDir, "stderr.log");
  const out = openSync(logFile, "a");
  const err = openSync(errFile, "a");
  const port = await freePort();
  const started = performance.now();
  const env = {
    PATH: process.env.PATH ?? "",
    NODE_ENV: "production",
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: join(dataDir, "data"),
    WORKERS: String(workers),
    VAULT_MASTER_KEY: Buffer.alloc(32, 1).toString("base64"),
    VAULT_FINGERPRINT_KEY: Buffer.alloc(32, 2).toString("base64"),
    RATE_LIMIT_TEST_PER_SECOND: "1000000",
    RATE_LIMIT_LIVE_PER_SECOND: "1000000",
    // The bench's production charges go through the simulator (unset: 503 acquirer_not_configured).
    PRODUCTION_ACQUIRER: "simulator",
    // No .env of the developer's: INIT_CWD points at the fresh directory.
    INIT_CWD: dataDir,
    ...settings,
  };
  const child = track(
    spawn(process.execPath, [...nodeArgs, `${dist}/main.js`], { cwd: SERVER_DIR, stdio: ["ignore", out, err], env }),
  );
  closeSync(out);
  closeSync(err);
  const url = `http://127.0.0.1:${port}`;
  const stderr = () => (existsSync(errFile) ? readFileSync(errFile, "utf8") : "");
  let startupMs: number | undefined;
  while (startupMs === undefined) {
    if (child.exitCode !== null) throw new Error(`${label} exited (${child.exitCode}) before answering:\n${stderr()}`);
    if (performance.now() - started > START_TIMEOUT_MS) {
      child.kill("SIGKILL");
      throw new Error(`${label} did not answer within ${START_TIMEOUT_MS} ms:\n${stderr()}`);
    }
    try {
      const res = await fetch(`${url}/healthz`);
      await res.body?.cancel();
      if (res.status === 200) startupMs = performance.now() - started;
    } catch {
      // not listening yet
    }
    if (startupMs === undefined) await new Promise((r) => setTimeout(r, 5));
  }
  // In production the server prints no sandbox key unless stdout is a terminal (server/src/main.ts,
  // showsSecrets), and the bench's is a file: the key is made with the admin CLI, as an operator does.
  const sandboxKey = execFileSync(
    process.execPath,
    [`${dist}/cli.js`, "create-key", "--name", "bench", "--scopes", "*"],
    {
      cwd: SERVER_DIR,
      env,
      encoding: "utf8",
    },
  );
  const key = /key_test_[0-9A-Za-z]{32}/.exec(sandboxKey)?.[0];
  if (key === undefined) throw new Error(`${label}: the admin CLI printed no sandbox key:\n${sandboxKey}`);
  // With several workers the first answers before the others have started (the primary forks them once
  // it listens): wait for every one, so no start-up work falls into a measured run.
  const listening = () => readFileSync(logFile, "utf8").split("payments API listening").length - 1;
  while (listening() < workers) {
    if (child.exitCode !== null) throw new Error(`${label} exited (${child.exitCode}) while starting:\n${stderr()}`);
    if (performance.now() - started > START_TIMEOUT_MS) {
      child.kill("SIGKILL");
      throw new Error(`${label}: ${listening()} of ${workers} workers listening after ${START_TIMEOUT_MS} ms`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const token = await post(url, key, "/v1/tokens", TOKEN_BODY, 200);
  const merchant = await post(url, key, "/v1/merchants", { name: "Bench Merchant" }, 201);
  // A production key, made the way an operator makes one (the admin CLI, on the running server's
  // store), and production fixtures: the steady-rate scenarios charge in production, as users do.
  const created = execFileSync(
    process.execPath,
    [`${dist}/cli.js`, "create-key", "--name", "bench", "--scopes", "*", "--live"],
    { cwd: SERVER_DIR, env, encoding: "utf8" },
  );
  const liveKey = /key_live_[0-9A-Za-z]{32}/.exec(created)?.[0];
  if (liveKey === undefined) throw new Error(`${label}: the admin CLI printed no production key:\n${created}`);
  const liveToken = await post(url, liveKey, "/v1/tokens", TOKEN_BODY, 200);
  const liveMerchant = await post(url, liveKey, "/v1/merchants", { name: "Bench Merchant" }, 201);
  const pid = child.pid as number;
  return {
    name,
    label,
    ready: {
      type: "ready",
      url,
      key,
      tokenId: token.id,
      merchantId: merchant.id,
      live: { key: liveKey, tokenId: liveToken.id, merchantId: liveMerchant.id },
    },
    pids: () => [pid, ...childPids(pid)],
    startupMs,
    dataDir,
    stderr,
    stdout: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
    async stop() {
      await stopChild(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The production build charging production through the Adyen connector (PRODUCTION_ACQUIRER=adyen)
 * against the Adyen stand-in (test/support/adyen-stand-in) in a process of its own (./targets/adyen-
 * stand-in.ts) without Prism, so it answers at once and its CPU is not the server's, nor taken from the
 * load generator: what the server spends per charge over the simulator path is the connector's (issue 36,
 * "Overhead over the acquirer").
 */
export async function startAdyenTarget(
  /** Flags for node before the script (`--cpu-prof` for bench:profile). */
  nodeArgs: string[] = builtNodeFlags(),
): Promise<Target> {
  const standIn = await startStandInProcess();
  try {
    const target = await startBuiltTarget("adyen", nodeArgs, {
      PRODUCTION_ACQUIRER: "adyen",
      ADYEN_ENVIRONMENT: "test",
      ADYEN_API_KEY: ADYEN_TEST_CREDENTIALS.apiKey,
      ADYEN_MERCHANT_ACCOUNT: ADYEN_TEST_CREDENTIALS.merchantAccount,
      ADYEN_HMAC_KEYS: ADYEN_TEST_CREDENTIALS.hmacKey,
      ADYEN_CHECKOUT_URL: standIn.url,
      ADYEN_PAYOUT_URL: standIn.url,
      ADYEN_DISPUTES_URL: standIn.url,
    });
    return {
      ...target,
      async stop() {
        await target.stop();
        await standIn.stop();
      },
    };
  } catch (error) {
    await standIn.stop();
    throw error;
  }
}

/** The Adyen stand-in, bundled and run in its own process (./targets/adyen-stand-in.ts). */
async function startStandInProcess(): Promise<{ url: string; stop(): Promise<void> }> {
  const label = "Adyen stand-in";
  const path = await bundleTarget(
    fileURLToPath(new URL("./targets/adyen-stand-in.ts", import.meta.url)),
    "adyen-stand-in",
  );
  const child = track(
    spawn(process.execPath, [path], {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      env: {
        PATH: process.env.PATH ?? "",
        BENCH_ADYEN_API_KEY: ADYEN_TEST_CREDENTIALS.apiKey,
        BENCH_ADYEN_MERCHANT_ACCOUNT: ADYEN_TEST_CREDENTIALS.merchantAccount,
        BENCH_ADYEN_HMAC_KEY: ADYEN_TEST_CREDENTIALS.hmacKey,
      },
    }),
  );
  const ready = await readyOf(child, label);
  return { url: ready.url, stop: () => stopChild(child) };
}

export async function startTarget(name: TargetName): Promise<Target> {
  if (name === "prism") return startPrismTarget();
  if (name === "adyen") return startAdyenTarget();
  if (name === "built" || name === "built2") return startBuiltTarget(name, builtNodeFlags());
  return startScriptTarget(name);
}
