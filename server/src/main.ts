import { ConfigError, loadConfig } from "./config.ts";
import { loadEnvFile } from "./env-file.ts";
import { createLogger } from "./logger.ts";
import { dataLocation, type RunningServer, StartupError, startServer } from "./server.ts";

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

const logger = createLogger(config.LOG_LEVEL, undefined, { format: config.LOG_FORMAT });
let running: RunningServer;
try {
  running = await startServer({ config, logger });
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
let closing = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
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
  });
}

const storage = config.MONGODB_URI ? `MongoDB database ${config.MONGODB_DB}` : `SQLite in ${dataLocation(config)}`;
// Which code runs: the built JavaScript (dist/, production) or the TypeScript sources (through tsx).
const code = import.meta.url.endsWith(".ts") ? "source" : "dist";
logger.info({ url: running.url, storage, mode: config.NODE_ENV, code, env_file: envFile }, "payments API listening");

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
