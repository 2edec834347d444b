import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The server as an operator runs it: a child process started like `npm start` (tsx on the sources)
// or like production (node on the built output), on loopback, with the settings given and nothing
// else from the developer's environment that could change the outcome.

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const SERVER_DIR = resolve(ROOT, "server");

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited (never rejects). */
  exited: Promise<Exit>;
  /** Resolves with the URL of the "payments API listening" log line; rejects if the process exits first. */
  listening: Promise<string>;
  /** Sends a signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * The environment a child gets: PATH and what Node needs, plus `env`. The developer's own settings
 * (a MONGODB_URI, a DATA_DIR, Vite's BASE_URL) and npm's INIT_CWD (which points the server at a
 * `.env` file) are left out, so only what the test says applies.
 */
export function childEnv(env: Record<string, string>): Record<string, string> {
  const keep = ["PATH", "HOME", "TMPDIR", "LANG", "SYSTEMROOT"];
  const base: Record<string, string> = {};
  for (const name of keep) {
    const value = process.env[name];
    if (value !== undefined) base[name] = value;
  }
  // An empty directory for INIT_CWD, so no developer's `.env` is read unless a test gives one.
  noEnvFileDir ??= mkdtempSync(join(tmpdir(), "payments-no-env-"));
  return { ...base, NODE_ENV: "test", HOST: "127.0.0.1", LOG_LEVEL: "info", INIT_CWD: noEnvFileDir, ...env };
}

let noEnvFileDir: string | undefined;

export interface SpawnOptions {
  /**
   * `tsx` runs src/main.ts with tsx's loader (`node --import tsx`, one process); `built` runs dist/main.js with plain node; `launcher` runs
   * start.mjs, which is what `npm start` runs (it picks one of the two by NODE_ENV).
   */
  mode?: "tsx" | "built" | "launcher";
  /** Working directory; default server/ (where `npm start` runs). */
  cwd?: string;
  /** Run as this user and group (tests that need a user without root's file access). */
  uid?: number;
  gid?: number;
}

export function spawnServer(env: Record<string, string>, options: SpawnOptions = {}): ServerProcess {
  const mode = options.mode ?? "tsx";
  const [command, args] =
    mode === "tsx"
      ? [process.execPath, ["--import", "tsx", "src/main.ts"]]
      : [process.execPath, [resolve(SERVER_DIR, mode === "built" ? "dist/main.js" : "start.mjs")]];
  const child = spawn(command, args, {
    cwd: options.cwd ?? SERVER_DIR,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid ?? options.uid }),
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<Exit>((done) => {
    child.once("exit", (code, signal) => done({ code, signal }));
    // The process could not be started at all (a missing or unreadable binary): say so as its stderr.
    child.once("error", (error) => {
      err += `could not start ${command}: ${error.message}\n`;
      done({ code: -1, signal: null });
    });
  });
  const listening = new Promise<string>((done, fail) => {
    const look = () => {
      for (const line of out.split("\n")) {
        if (!line.startsWith("{")) continue;
        try {
          const parsed = JSON.parse(line) as { msg?: string; url?: string };
          if (parsed.msg === "payments API listening" && parsed.url) {
            child.stdout?.off("data", look);
            done(parsed.url);
            return;
          }
        } catch {
          // not a log line
        }
      }
    };
    child.stdout?.on("data", look);
    void exited.then((exit) => fail(new Error(`server exited (${JSON.stringify(exit)}) before listening:\n${err}`)));
  });
  listening.catch(() => {}); // a test that expects an early exit never awaits it
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    listening,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** The lines of a stream's text that are not empty. */
export const linesOf = (text: string) => text.split("\n").filter((line) => line.trim() !== "");

/** The ids of a process's children (a cluster primary's workers), from /proc. */
export function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether a process of this id is still running (signal 0 checks without signalling). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
