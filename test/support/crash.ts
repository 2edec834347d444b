import { type ChildProcess, execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterAll, beforeAll } from "vitest";
import { eventually } from "./eventually.ts";
import { alive, children, SERVER_DIR } from "./process.ts";

// What the crash suites (test/crash/) share: a seeded generator, so a failing run can be reproduced with
// its CRASH_SEED; a free loopback port, so every restart of a killed server comes back on the same
// address; the kill -9 of a server's whole process group (a cluster's primary and its workers, as a
// service manager kills them); the wait until a restarted server answers; and the server's built bundle,
// which every restart runs.

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
