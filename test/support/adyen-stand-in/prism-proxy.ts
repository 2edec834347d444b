import { spawn } from "node:child_process";
import { createServer, Socket } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { prismBin } from "../../mock/mock.ts";

// Prism's validating proxy in front of the Adyen stand-in: `prism proxy --errors <Adyen document> <stand-in>`.
// Prism checks each request against the document (a violation is refused with 422 and never reaches the
// stand-in), forwards it, and checks the answer (a violation becomes a 500). Every violation, either way,
// is also written to Prism's log, which this keeps and counts: a suite asserts the count is 0.

const HOST = "127.0.0.1";
const START_TIMEOUT_MS = 60_000;
const CONTRACT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../../server/src/adapters/adyen/contract");

/** Adyen's trimmed documents (server/src/adapters/adyen/contract/, from spec/scripts/adyen.mjs). */
export const ADYEN_DOCUMENTS = {
  checkout: resolve(CONTRACT_DIR, "checkout.json"),
  payouts: resolve(CONTRACT_DIR, "payouts.json"),
  disputes: resolve(CONTRACT_DIR, "disputes.json"),
  webhooks: resolve(CONTRACT_DIR, "webhooks.json"),
} as const;

export interface RunningProxy {
  url: string;
  /** Prism's log lines reporting a refused request or answer (violations, failed security). */
  violations(): string[];
  stop(): Promise<void>;
}

export async function startPrismProxy(document: string, upstream: string): Promise<RunningProxy> {
  const port = await freePort();
  const child = spawn(prismBin(), ["proxy", "-h", HOST, "-p", String(port), "--errors", document, upstream], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const keep = (chunk: Buffer) => {
    log += chunk.toString("utf8");
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
      throw new Error(`Prism proxy did not start\n${log.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://${HOST}:${port}`,
    violations: () =>
      log
        .split("\n")
        .filter((line) => /VIOLATIONS|UNPROCESSABLE_ENTITY|UNAUTHORIZED|violation|✖/i.test(line))
        // A request the caller abandoned (a time-out the test injected) is not a contract violation.
        .filter((line) => !/socket hang up|ECONNRESET|aborted/i.test(line)),
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
