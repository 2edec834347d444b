import { type ChildProcess, execFile, type StdioOptions, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadConfig, startServer } from "@payments/server";
import Database from "better-sqlite3";
import { afterAll, beforeAll, onTestFinished } from "vitest";
import { eventually } from "./eventually.ts";
import { alive, children, SERVER_DIR } from "./process.ts";

// What the crash suites (test/crash/) share: a seeded generator, so a failing run can be reproduced with
// its CRASH_SEED; a free loopback port, so every restart of a killed server comes back on the same
// address; the kill -9 of a server's whole process group (a cluster's primary and its workers, as a
// service manager kills them); the wait until a restarted server answers; the server's built bundle,
// which every restart runs; and the two halves of every kill -9 suite's set-up: the shop made in-process
// on the data directory before the first kill (openCrashShop), and the server process that is killed and
// started again on it (crashServer).

const { BASE_URL: _vite, ...inherited } = process.env;
/** The environment a crash suite's server process inherits: Vitest's BASE_URL ("/") is no setting of the server's. */
export const inheritedEnv: NodeJS.ProcessEnv = inherited;

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface BuiltServer {
  /** The bundle's entry point: `node <main>` in server/ starts the server, as `node dist/main.js` does. */
  main: string;
  /** Deletes the build. */
  remove(): void;
}

/**
 * The production bundle of the server (`server/build.mjs --outdir`), built once for a suite file: the
 * crash suites restart the server dozens of times, and plain Node on the bundle starts it in less time
 * than tsx's loader on the sources (which transpiles and resolves some two hundred modules per start, per
 * cluster worker). It is the same code, the form production runs (docs/operating.md "Production"). Each
 * file builds its own copy, because ops/build.test.ts rebuilds server/dist while other files run; inside
 * server/node_modules, where the bundle's imports of the server's npm dependencies resolve.
 */
export async function buildServer(): Promise<BuiltServer> {
  const parent = join(SERVER_DIR, "node_modules", ".cache", "payments-crash-builds");
  mkdirSync(parent, { recursive: true });
  const outdir = mkdtempSync(join(parent, "build-"));
  await promisify(execFile)(process.execPath, ["build.mjs", "--outdir", outdir], { cwd: SERVER_DIR });
  return { main: join(outdir, "main.js"), remove: () => rmSync(outdir, { recursive: true, force: true }) };
}

/**
 * For a suite file: builds the bundle before the file's tests (buildServer) and deletes it after them.
 * Returns the entry point to start, `node <main()>` in server/.
 */
export function bundlePerFile(): () => string {
  let built: BuiltServer | undefined;
  beforeAll(async () => {
    built = await buildServer();
  });
  afterAll(() => built?.remove());
  return () => {
    if (!built) throw new Error("the server's bundle was not built: see the beforeAll hook's error");
    return built.main;
  };
}

/** A seeded generator (mulberry32): the same seed gives the same kills and the same interleavings. */
export function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A loopback port nothing listens on now (the server is restarted on it after each kill). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Whether a child process has exited (or was never started). */
export const exited = (child: ChildProcess | null) => !child || child.exitCode !== null || child.signalCode !== null;

/**
 * SIGKILL to a detached child's process group (spawned with `detached: true`: the primary and its
 * workers), and back once every process of it is gone, so the next start finds the port and the store
 * free.
 */
export async function killGroup(child: ChildProcess | null): Promise<void> {
  if (!child || exited(child)) return;
  const pid = child.pid as number;
  const group = [pid, ...children(pid)];
  const done = new Promise((r) => child.once("exit", r));
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // gone meanwhile
  }
  await done;
  await eventually(
    "the killed processes to be gone",
    () => group.filter(alive),
    (left) => left.length === 0,
  );
}

/**
 * Resolves once the server at `url` answers an authenticated list with 200 (it listens and its store is
 * open); fails when `dead()` says the process exited first, or after a minute.
 */
export async function untilAnswering(url: string, key: string, dead: () => boolean): Promise<void> {
  const headers = { authorization: `Bearer ${key}` };
  for (let i = 0; i < 1200; i++) {
    if (dead()) throw new Error("the server exited while starting");
    try {
      if ((await fetch(`${url}/v1/merchants?limit=1`, { headers })).status === 200) return;
    } catch {
      // not listening yet
    }
    await pause(50);
  }
  throw new Error("the server did not start");
}

/**
 * Kills from outside right after the server's next committed change, or after `withinMs` without one:
 * every change writes an event, so a second, read-only connection to the store file sees the commit
 * land and `kill` runs at once, while the requests around it are still in flight.
 */
export async function killAfterNextCommit(database: string, kill: () => Promise<void>, withinMs = 200): Promise<void> {
  const watcher = new Database(database, { readonly: true });
  try {
    const newest = watcher.prepare("SELECT max(rowid) FROM events").pluck();
    const before = newest.get();
    const deadline = performance.now() + withinMs;
    while (newest.get() === before && performance.now() < deadline) await new Promise((r) => setImmediate(r));
    await kill();
  } finally {
    watcher.close();
  }
}

/** What a kill -9 suite makes in-process on its data directory before the first kill (openCrashShop). */
export interface CrashShop {
  /** The key every request sends: the first start's sandbox key, or a production key with scope `*`. */
  secret: string;
  /** That key's Authorization header and a JSON Content-Type. */
  headers: Record<string, string>;
  /** POSTs `body` as JSON to `path` on the in-process server; resolves to the object it created. */
  created(path: string, body: unknown): Promise<{ id: string }>;
  merchant: { id: string };
  /** A token of the test card 4242 4242 4242 4242. */
  token: { id: string };
  /** Stops the in-process server: its store is free for the suite's server process. */
  close(): Promise<void>;
}

/**
 * Starts the server in-process with `settings` (on the suite's DATA_DIR, PORT 0) and makes a merchant
 * named `merchant` and a card token with the key `key` names: `bootstrap`, the sandbox key the first start
 * creates, or `live`, a production key with scope `*` (for the suites whose charges reach a production
 * acquirer). The caller makes anything else it needs with `created`, then `close()`s it.
 */
export async function openCrashShop(
  settings: Record<string, string>,
  options: { key: "bootstrap" | "live"; merchant: string },
): Promise<CrashShop> {
  const setup = await startServer({ config: loadConfig({ ...settings, PORT: "0" }) });
  const secret =
    options.key === "live"
      ? (await setup.domain.serviceKeys.issue(true, { name: "crash", scopes: ["*"] })).secret
      : setup.bootstrapSecret;
  if (!secret) throw new Error(`the in-process server on ${settings.DATA_DIR} made no sandbox key: is its store new?`);
  const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
  const created = async (path: string, body: unknown) =>
    // cast: the set-up reads only the id of what it created; the suites' assertions read their stores.
    (await (await fetch(`${setup.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) })).json()) as {
      id: string;
    };
  const merchant = await created("/v1/merchants", { name: options.merchant });
  const token = await created("/v1/tokens", { card: "4242424242424242", holder: "Ada", exp_month: 12, exp_year: 2031 });
  return { secret, headers, created, merchant, token, close: () => setup.close() };
}

/**
 * The settings of the suites that kill a server around its calls to a production acquirer (acquirer-crash,
 * adyen-crash): one process; a dead request's key (and its intent) may be taken over one second after it
 * was claimed, and the recovery job looks every second (the documented bound is their sum); no production
 * rate limit stands in the way of their batches.
 */
export const ACQUIRER_RECOVERY_SETTINGS = {
  WORKERS: "1",
  IDEMPOTENCY_LOCK_SECONDS: "1",
  JOBS_INTERVAL_SECONDS: "1",
  RATE_LIMIT_LIVE_PER_SECOND: "100000",
};

/** The server process a kill -9 suite kills and starts again on one port and one data directory. */
export interface CrashServer {
  /** Its address: the same after every restart. */
  url: string;
  /** Whether the last started process has exited (or none was started). */
  dead(): boolean;
  /** The last started process's id, which is its process group's id too. */
  pid(): number | undefined;
  /**
   * Kills whatever is left of the last start (with WORKERS=2 a worker that killed itself leaves the
   * primary and the other worker serving), starts the bundle again with `env` added to the suite's
   * settings, and resolves once it answers.
   */
  start(env?: Record<string, string>): Promise<void>;
  /**
   * start(), and with `commits` the server kills itself right after its commits-th committed change,
   * before answering (TEST_CRASH_AFTER_COMMITS): the moment between "stored" and "answered".
   */
  startCrashingAfter(commits?: number): Promise<void>;
  /** SIGKILL to the whole process group, back once every process of it is gone (killGroup). */
  kill(): Promise<void>;
}

/**
 * The server's bundle (`main`, from bundlePerFile) as a process on a free loopback port, in a process
 * group of its own (so a kill takes a cluster's primary and its workers together, as a service manager's
 * does), in development mode with `env` (DATA_DIR, WORKERS and the suite's other settings); `secret` is
 * the key it is asked with until it answers (untilAnswering). To be called inside a test: the process is
 * killed when the test ends, so a failing run leaves no server behind.
 */
export async function crashServer(options: {
  main: () => string;
  secret: string;
  env: Record<string, string>;
  /** Where the process's output goes; by default nowhere. */
  stdio?: StdioOptions;
}): Promise<CrashServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const dead = () => exited(child);
  const kill = () => killGroup(child);
  onTestFinished(kill);
  const start = async (env: Record<string, string> = {}) => {
    await kill();
    child = spawn(process.execPath, [options.main()], {
      cwd: SERVER_DIR,
      detached: true,
      env: { ...inheritedEnv, NODE_ENV: "development", ...options.env, ...env, PORT: String(port) },
      stdio: options.stdio ?? "ignore",
    });
    await untilAnswering(url, options.secret, dead);
  };
  return {
    url,
    dead,
    pid: () => child?.pid,
    kill,
    start,
    startCrashingAfter: (commits) => start(commits ? { TEST_CRASH_AFTER_COMMITS: String(commits) } : {}),
  };
}

/**
 * The server of the suites that kill it while the same keys are retried (idempotency-crash,
 * disputes-crash): crashServer on the shop's data directory (`settings`, as openCrashShop had them) with
 * `workers` processes, asked with the shop's key. A retry may take over a dead request's key one second
 * after it was claimed, and no sandbox rate limit stands in the way of their streams of requests.
 */
export function retryingCrashServer(options: {
  main: () => string;
  shop: Pick<CrashShop, "secret">;
  settings: Record<string, string>;
  workers: number;
}): Promise<CrashServer> {
  return crashServer({
    main: options.main,
    secret: options.shop.secret,
    env: {
      ...options.settings,
      WORKERS: String(options.workers),
      IDEMPOTENCY_LOCK_SECONDS: "1",
      RATE_LIMIT_TEST_PER_SECOND: "100000",
    },
  });
}
