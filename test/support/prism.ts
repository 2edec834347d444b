import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { mockBaseUrl, writeMockDocument } from "../mock/document.mjs";

// The Prism sandbox mock as the suites run it: its own bin (not npx, so killing it stops it), on
// 127.0.0.1 and a free port, with `--errors` so that a request the document does not allow is refused
// instead of mocked, serving the contract with problem `type` links to its own address
// (../mock/document.mjs) — as `npm run mock` runs it for QA. The installed Prism is patched to answer a
// schema-invalid request with the operation's 400, as the server does (patches/README.md).

const HOST = "127.0.0.1";
const START_TIMEOUT_MS = 30_000;

export interface RunningPrism {
  url: string;
  stop(): Promise<void>;
}

export async function startPrism(): Promise<RunningPrism> {
  const port = await freePort();
  const url = mockBaseUrl(HOST, port);
  const document = writeMockDocument(url);
  const child = spawn(prismBin(), ["mock", "-h", HOST, "-p", String(port), "--errors", document.path], {
    // Its own process group, so stop() ends Prism and anything it started with one signal.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Keep the tail of its output for the error message, and keep the pipes drained so Prism never blocks.
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  child.once("exit", () => document.remove());
  try {
    await waitForPort(port, child);
  } catch (error) {
    if (child.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, "SIGKILL");
    throw new Error(`Prism did not start: ${(error as Error).message}\n${output}`);
  }
  return {
    url,
    async stop() {
      if (!child.pid || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      process.kill(-child.pid, "SIGTERM");
      const timer = setTimeout(() => process.kill(-(child.pid as number), "SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A port that was free a moment ago: listen on port 0, note the port, close. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolvePort(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Prism's bin from test/node_modules or the repository root's node_modules (npm workspaces hoist it there). */
export function prismBin(): string {
  const testDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const candidates = [resolve(testDir, "node_modules/.bin/prism"), resolve(testDir, "../node_modules/.bin/prism")];
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error(`Prism is not installed (looked at ${candidates.join(", ")}); run npm install`);
  return found;
}

/** Resolves once the port accepts a connection; rejects if Prism exits first or the time runs out. */
async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`it exited (${child.exitCode ?? child.signalCode})`);
    }
    if (await accepts(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} not open after ${START_TIMEOUT_MS} ms`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolveAccepts) => {
    const socket = new Socket();
    socket.once("connect", () => {
      socket.destroy();
      resolveAccepts(true);
    });
    socket.once("error", () => {
      socket.destroy();
      resolveAccepts(false);
    });
    socket.connect(port, HOST);
  });
}
