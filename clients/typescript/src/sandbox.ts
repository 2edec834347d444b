/**
 * A sandbox of your own for a test run: `startSandbox()` starts the payments server on an in-memory store
 * on a free loopback port, as a child process, and resolves with its URL and a sandbox key with scope
 * `*`; `stop()` ends it and everything in it. Each call is a fresh, empty sandbox, so test files that run
 * in parallel never see each other's objects, events or clock.
 *
 * The server is not part of this package (it is a private workspace with a native dependency): the
 * sandbox runs from a clone of the payments repository in which `npm ci` has run, named by `repository`
 * or PAYMENTS_REPOSITORY. Its standard input stays open while the sandbox runs: if this process dies, the
 * sandbox sees its input end and stops too.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export interface StartSandboxOptions {
  /** The payments repository's clone; default the PAYMENTS_REPOSITORY environment variable. */
  repository?: string;
  /**
   * Run the production build (`server/dist/sandbox.js`, made by `npm run build` in the clone), which
   * starts faster than the sources (through tsx, the default).
   */
  built?: boolean;
  /** Gives up when the sandbox has not answered after this long; default 60 s (a busy machine). */
  timeoutMs?: number;
}

export interface RunningSandbox {
  /** The API's base address, e.g. `http://127.0.0.1:41234`: give it to the client as `baseUrl`. */
  url: string;
  /** A sandbox key with scope `*`. */
  key: string;
  /** The sandbox process's id. */
  pid: number;
  /** Stops the sandbox; resolves once its process has exited. */
  stop(): Promise<void>;
}

export class SandboxStartError extends Error {
  override readonly name = "SandboxStartError";
}

export function startSandbox(options: StartSandboxOptions = {}): Promise<RunningSandbox> {
  const repository = options.repository ?? process.env.PAYMENTS_REPOSITORY;
  if (!repository) {
    return Promise.reject(
      new SandboxStartError(
        "Name the payments repository's clone: startSandbox({ repository }) or PAYMENTS_REPOSITORY.",
      ),
    );
  }
  const serverDir = resolve(repository, "server");
  const built = join(serverDir, "dist", "sandbox.js");
  const source = join(serverDir, "src", "sandbox-main.ts");
  if (options.built && !existsSync(built)) {
    return Promise.reject(new SandboxStartError(`${built} does not exist: run \`npm run build\` in ${repository}.`));
  }
  if (!options.built && !existsSync(source)) {
    return Promise.reject(
      new SandboxStartError(`${repository} is not a clone of the payments repository (no ${source}).`),
    );
  }
  // `--import tsx` resolves from the working directory: the clone's server, whose node_modules has tsx.
  const args = options.built ? [built] : ["--import", "tsx", source];
  const child = spawn(process.execPath, [...args, "--stop-on-stdin-end"], {
    cwd: serverDir,
    stdio: ["pipe", "pipe", "pipe"],
    // Only what Node needs: nothing of this process's settings (a MONGODB_URI, say) reaches the server.
    env: Object.fromEntries(
      ["PATH", "HOME", "TMPDIR", "LANG"].flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])),
    ),
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  let output = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });

  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new SandboxStartError(`The sandbox did not start within ${options.timeoutMs ?? 60_000} ms.\n${output}`));
    }, options.timeoutMs ?? 60_000);
    let line = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      line += chunk;
      const end = line.indexOf("\n");
      if (end < 0) return;
      clearTimeout(timer);
      child.stdout.removeAllListeners("data");
      child.stdout.resume();
      const { url, key } = JSON.parse(line.slice(0, end)) as { url: string; key: string };
      let stopping: Promise<void> | undefined;
      resolveStart({
        url,
        key,
        pid: child.pid ?? 0,
        stop() {
          stopping ??= (async () => {
            child.stdin.end();
            const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
            await exited;
            clearTimeout(killer);
          })();
          return stopping;
        },
      });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new SandboxStartError(`The sandbox exited (code ${code}) before it started.\n${output}`));
    });
  });
}
