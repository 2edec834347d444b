// The server process's body, loaded by main.ts once the V8 heap is sized (heap-at-start.ts has run by
// then: importing it here only reads what it decided).

import cluster from "node:cluster";
import { runPrimary, SHUTDOWN_MESSAGE } from "./cluster.ts";
import { compileCacheNote, flushCompileCache } from "./compile-cache.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { loadEnvFile } from "./env-file.ts";
import { heapNote } from "./heap-at-start.ts";
import { createLogger } from "./logger.ts";
import { type RunningServer, startServer } from "./server.ts";
import { dataLocation } from "./startup/data-dir.ts";
import { metricsListenProblem } from "./startup/listen.ts";
import { StartupError } from "./startup-error.ts";

// `npm start`: reads the configuration, opens the store, serves the API. On the very first start
// (empty store) it prints a sandbox key with scope `*`, once.

let config: ReturnType<typeof loadConfig>;
let envFile: string | null = null;
try {
  envFile = loadEnvFile();
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}

// A secret is never written to the log stream (logs are shipped and kept: docs/operating.md "Operating the server").
// The first start's sandbox key is shown once on stdout, which in development is a person's terminal;
// in production stdout is the JSON log stream unless a person started the server on a terminal, so
// there the key is made only when stdout is one, and otherwise with the admin CLI (README "Quick start").
const showsSecrets = config.NODE_ENV !== "production" || process.stdout.isTTY === true;

// WORKERS > 1: this process is the cluster's primary and forks the server processes (cluster.ts);
// each of them runs the rest of this file, logging its worker id on every line.
const clustered = config.WORKERS > 1;
const logger = createLogger(config.LOG_LEVEL, undefined, {
  format: config.LOG_FORMAT,
  ...(clustered && cluster.worker ? { base: { worker: cluster.worker.id } } : {}),
});
logger.info({ heap: heapNote }, "V8 heap");
logger.info({ compile_cache: compileCacheNote() }, "compile cache");
if (clustered && cluster.isPrimary) {
  runPrimary({
    workers: config.WORKERS,
    logger,
    shutdownTimeoutSeconds: config.SHUTDOWN_TIMEOUT_SECONDS,
    metrics:
      config.METRICS_PORT === undefined
        ? undefined
        : { host: config.METRICS_HOST, port: config.METRICS_PORT, problem: (err) => metricsListenProblem(config, err) },
  });
} else {
  await serve();
}

async function serve(): Promise<void> {
  let running: RunningServer;
  let closing = false;
  // A worker hears from the primary from the start: a shutdown asked for while it is still starting is
  // carried out as soon as it has started.
  let requested: string | null = null;
  let onShutdown = (signal: string) => {
    requested ??= signal;
  };
  if (clustered && cluster.isWorker) {
    // The primary coordinates: it asks every worker to drain on SIGTERM or SIGINT, and kills them on a
    // second signal. A worker can hear of one shutdown several times (a Ctrl-C or a service manager
    // signals the whole process group, then the primary's message arrives): it drains once and lets
    // the rest pass. A Ctrl-C is left to the primary's message.
    const request = (why: string) => {
      if (!closing) onShutdown(why);
    };
    process.on("SIGINT", () => {});
    process.on("SIGTERM", () => request("SIGTERM"));
    process.on("message", (message) => {
      if (message === SHUTDOWN_MESSAGE) request("primary");
    });
    // The primary is gone (killed): no connection reaches this worker any more.
    process.on("disconnect", () => request("disconnect"));
  }
  try {
    // In a cluster, the primary serves the metrics of every worker (cluster.ts).
    running = await startServer({
      config,
      logger,
      metricsServedBy: clustered ? "primary" : "self",
      bootstrapKey: showsSecrets,
    });
  } catch (err) {
    // A setting the operator must change: one line naming it, no stack trace (a bug still gets one).
    if (err instanceof StartupError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  // Graceful shutdown (SIGTERM from an orchestrator, Ctrl-C): drain for at most SHUTDOWN_TIMEOUT_SECONDS,
  // then exit 0. A second signal while draining exits at once. Installed before anything announces
  // that the server is up, so a signal sent as soon as the log says "listening" is always handled.
  const shutDown = (signal: string) => {
    if (closing) {
      logger.warn({ signal }, "second signal: exiting without waiting");
      process.exit(1);
    }
    closing = true;
    logger.info({ signal, timeout_seconds: config.SHUTDOWN_TIMEOUT_SECONDS }, "shutting down");
    running.close().then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  onShutdown = shutDown;
  if (!(clustered && cluster.isWorker)) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => shutDown(signal));
  }

  const storage = config.MONGODB_URI ? `MongoDB database ${config.MONGODB_DB}` : `SQLite in ${dataLocation(config)}`;
  // Which code runs: the built JavaScript (dist/, production) or the TypeScript sources (through tsx).
  const code = import.meta.url.endsWith(".ts") ? "source" : "dist";
  logger.info({ url: running.url, storage, mode: config.NODE_ENV, code, env_file: envFile }, "payments API listening");
  // The code compiled so far, written beside the build now: a process killed later never writes it (compile-cache.ts).
  flushCompileCache();
  if (requested) shutDown(requested);
  if (!showsSecrets && running.bootstrapSecret === null && (await running.domain.serviceKeys.none())) {
    logger.info(
      "no service key exists yet, and none was made: its secret would go to the log stream. Make the first one with the admin CLI, which shows it on your terminal: node server/dist/cli.js create-key --name first --scopes '*'",
    );
  }

  if (running.bootstrapSecret) {
    // Printed to stdout once and never stored in clear; only its SHA-256 digest is kept.
    process.stdout.write(
      [
        "",
        "  A sandbox service key with scope * was created on this first start. It is shown only now:",
        "",
        `    ${running.bootstrapSecret}`,
        "",
        `  Try: curl -H "Authorization: Bearer ${running.bootstrapSecret}" ${running.url}/v1/merchants`,
        config.CONSOLE_ENABLED
          ? `  or sign in with it at ${running.url}/console (the API reference is at ${running.url}/docs).`
          : `  The API reference is at ${running.url}/docs.`,
        "",
        "",
      ].join("\n"),
    );
  }
}
