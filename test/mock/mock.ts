import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createNetServer, Socket } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "@payments/server";
import { createStatelessFront, DomainError } from "@payments/server/front";
import type { Request, Response } from "express";
import { writeMockDocument } from "./document.mjs";

// The sandbox mock (`npm run mock`, and the suites through ../support/prism.ts): the server's own front
// (server/src/http/front.ts createStatelessFront: key shape, the contract's validation and problems,
// body bounds, malformed JSON, unknown routes and trailing slashes, unknown query parameters, the
// card-number and secret rules) in front of Prism, which gives the success answers (the contract's
// examples). A request the front refuses never reaches Prism, so every error the mock gives is the
// server's, in its words; what passes is forwarded to Prism on a loopback port of its own.
//
// Prism runs without `--errors`: everything it would refuse the front has refused first (with the
// server's answer, not Prism's canned example), so Prism only picks the example. An answer of Prism's
// own (a `Prefer` asking for an example the operation does not document) is never passed on as it is:
// its stoplight.io problem becomes a problem of this API, answered by the front (forward below).

const LOOPBACK = "127.0.0.1";
const START_TIMEOUT_MS = 30_000;
/** The server's default BODY_LIMIT_BYTES (server/src/config.ts), so the mock bounds bodies alike. */
const BODY_LIMIT_BYTES = 100 * 1024;

export interface RunningMock {
  /** Where clients reach the mock. */
  url: string;
  stop(): Promise<void>;
}

export interface MockOptions {
  /** Where the mock listens (default 127.0.0.1) and on which port (0: a free one). */
  host?: string;
  port?: number;
  /** The address clients reach it at (problem `type`s, the examples' links); default from host and port. */
  baseUrl?: string;
  /** pino level of the front's request lines (default silent). */
  logLevel?: string;
  /** Where Prism's own output goes: kept (the tests) or shown (`npm run mock`). */
  prismOutput?: "keep" | "inherit";
}

/** Headers of Prism's answer that are about its connection, not the answer, or Prism's own diagnostics. */
const NOT_FORWARDED = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "sl-violations"]);

/** The request headers Prism reads: which example (`Prefer`), the key (for its security check), media types. */
const FORWARDED = ["prefer", "accept", "idempotency-key", "last-event-id"];

export async function startMock(options: MockOptions = {}): Promise<RunningMock> {
  const host = options.host ?? LOOPBACK;
  const port = options.port ?? (await freePort(host));
  const reachable = host === "0.0.0.0" ? LOOPBACK : host === "::" ? "::1" : host;
  const baseUrl = options.baseUrl ?? `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
  const prism = await startPrismProcess(baseUrl, options.prismOutput ?? "keep");
  const logger = createLogger(options.logLevel ?? "silent", undefined, {
    format: options.logLevel && options.logLevel !== "silent" ? "pretty" : "json",
  });
  const app = createStatelessFront({
    logger,
    publicUrl: () => baseUrl,
    bodyLimitBytes: BODY_LIMIT_BYTES,
    pass: (req, res, next) => {
      forward(prism.url, req, res).catch(next);
    },
  });
  const server = createServer(app);
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolveListen());
    });
  } catch (error) {
    await prism.stop();
    throw error;
  }
  return {
    url: baseUrl,
    async stop() {
      await closeServer(server);
      await prism.stop();
    },
  };
}

/** Sends a request the front let through to Prism, and its answer back (Prism's own problems rewritten). */
async function forward(prismUrl: string, req: Request, res: Response): Promise<void> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = req.headers[name];
    if (typeof value === "string") headers[name] = value;
  }
  // The front has taken the key (any case of `Bearer`, as the server does); Prism's check wants `Bearer`.
  const secret = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
  if (secret !== undefined) headers.authorization = `Bearer ${secret}`;
  // What the front read (`{}` for an empty body; nothing where the operation takes none), as JSON.
  const body = req.body === undefined ? undefined : JSON.stringify(req.body);
  if (body !== undefined) headers["content-type"] = "application/json";
  const answer = await fetch(new URL(req.originalUrl, prismUrl), { method: req.method, headers, body });
  const text = Buffer.from(await answer.arrayBuffer());
  const own = prismOwnProblem(answer, text);
  if (own !== undefined) {
    // A `Prefer` Prism cannot serve is the caller's mistake: 400 naming it (every operation documents
    // 400). Anything else is the mock's: the front answers it as the server answers a bug (500).
    if (typeof req.headers.prefer !== "string") throw new Error(`Prism could not answer: ${own}`);
    const message = `names no example or status this operation documents (${own.slice(0, 200)})`;
    throw new DomainError("invalid_request", `\`Prefer\` ${message}: name a documented one, or send no \`Prefer\`.`, {
      param: "Prefer",
      errors: [{ param: "Prefer", message }],
    });
  }
  res.status(answer.status);
  for (const [name, value] of answer.headers) {
    if (!NOT_FORWARDED.has(name.toLowerCase())) res.setHeader(name, value);
  }
  res.end(text);
}

/** Prism's own problem (its `type` on stoplight.io), in its words; undefined for an answer of the contract's. */
function prismOwnProblem(answer: globalThis.Response, text: Buffer): string | undefined {
  if (!/problem\+json/.test(answer.headers.get("content-type") ?? "")) return undefined;
  let parsed: { type?: unknown; title?: unknown; detail?: unknown };
  try {
    parsed = JSON.parse(text.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof parsed.type !== "string" || !parsed.type.includes("stoplight.io")) return undefined;
  return [parsed.title, parsed.detail].filter((w) => typeof w === "string" && w).join(": ") || "no words";
}

interface PrismProcess {
  url: string;
  stop(): Promise<void>;
}

/** Prism on a free loopback port, serving the contract as the mock at `baseUrl` serves it (./document.mjs). */
async function startPrismProcess(baseUrl: string, output: "keep" | "inherit"): Promise<PrismProcess> {
  const port = await freePort(LOOPBACK);
  const document = writeMockDocument(baseUrl);
  const child = spawn(prismBin(), ["mock", "-h", LOOPBACK, "-p", String(port), document.path], {
    // Its own process group, so stop() ends Prism and anything it started with one signal.
    detached: true,
    stdio: output === "inherit" ? ["ignore", "inherit", "inherit"] : ["ignore", "pipe", "pipe"],
  });
  // Keep the tail of its output for the error message, and keep the pipes drained so Prism never blocks.
  let kept = "";
  const keep = (chunk: Buffer) => {
    kept = (kept + chunk.toString("utf8")).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  child.once("exit", () => document.remove());
  try {
    await waitForPort(port, child);
  } catch (error) {
    if (child.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, "SIGKILL");
    throw new Error(`Prism did not start: ${(error as Error).message}\n${kept}`);
  }
  return {
    url: `http://${LOOPBACK}:${port}`,
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

function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    server.close(() => resolveClose());
    server.closeAllConnections();
  });
}

/** A port that was free a moment ago: listen on port 0, note the port, close. */
export function freePort(host = LOOPBACK): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createNetServer();
    server.once("error", reject);
    server.listen(0, host, () => {
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
    socket.connect(port, LOOPBACK);
  });
}
