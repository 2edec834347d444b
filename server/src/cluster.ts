import cluster, { type Worker } from "node:cluster";
import type { Logger } from "pino";
import { clusterMetrics, serveMetrics } from "./adapters/metrics.ts";

// WORKERS > 1 (docs/operating.md "Production"): `npm start` becomes a Node cluster primary that runs no server
// itself and forks WORKERS server processes sharing the port (the primary accepts connections and
// hands them out in turn) and the store. Everything a server does at once with others is already safe
// on one store: background jobs and the webhook dispatcher claim their work there, rate-limit counts
// and Idempotency-Keys live there, and the first start's sandbox key is claimed once per store.
//
// - Start: one worker first, the others once it listens, so a setting that stops a start (a busy PORT,
//   an unusable DATA_DIR) is reported once, by that worker, and the primary exits with its code.
// - A worker that dies later is replaced (logged), at most once a second.
// - SIGTERM or SIGINT: each worker is asked to drain (a message, so a Ctrl-C that the terminal also
//   sends to every worker is not taken as a second signal) and the primary exits once all have: 0
//   when every worker stopped cleanly. A second signal kills the workers and exits 1.
// - Metrics (METRICS_PORT): the primary serves them, summed over the workers that listen
//   (adapters/metrics.ts clusterMetrics), so one scrape sees the whole cluster.

/** Primary → worker: drain and exit, as on SIGTERM. */
export const SHUTDOWN_MESSAGE = "payments:shutdown";

const RESPAWN_DELAY_MS = 1000;

export function runPrimary(options: {
  workers: number;
  logger: Logger;
  shutdownTimeoutSeconds: number;
  /** Where to serve the cluster's metrics; none: not served. */
  metrics?: { host: string; port: number; problem: (err: unknown) => unknown } | undefined;
}): void {
  const { workers, logger } = options;
  let stopping = false;
  let started = false;
  /** Whether a worker stopped uncleanly during the shutdown (a crash replaced earlier does not count). */
  let failed = false;
  // Tracked here rather than read from cluster.workers, which keeps a worker until both its exit and
  // its disconnect have been seen, in either order.
  const running = new Set<Worker>();
  const live = () => [...running];
  /** Workers that have listened: only they can hear the shutdown message (see the signal handler). */
  const listening = new Set<Worker>();
  /** Workers stopped while still starting: they served nothing, so how they exit is no failure. */
  const abandoned = new Set<Worker>();

  function fork(): Worker {
    const worker = cluster.fork();
    running.add(worker);
    worker.once("listening", () => listening.add(worker));
    worker.on("exit", (code, signal) => exited(worker, code, signal));
    return worker;
  }

  function exited(worker: Worker, code: number | null, signal: string | null): void {
    running.delete(worker);
    if (stopping) {
      if (code !== 0 && !abandoned.has(worker)) failed = true;
      if (live().length === 0) {
        logger.info({ clean: !failed }, "stopped");
        process.exit(failed ? 1 : 0);
      }
      return;
    }
    if (!started) {
      // The first start failed: the worker has said why; nothing to retry.
      stopping = true;
      for (const other of live()) other.kill("SIGKILL");
      process.exit(code ?? 1);
    }
    logger.warn({ worker: worker.id, code, signal }, "worker exited; starting another");
    setTimeout(() => {
      if (!stopping) fork();
    }, RESPAWN_DELAY_MS).unref();
  }

  function startWorkers(): void {
    const first = fork();
    first.once("listening", () => {
      started = true;
      if (stopping) return;
      for (let i = 1; i < workers; i++) fork();
      logger.info({ workers }, "cluster started");
    });
  }

  if (options.metrics) {
    // The metrics' address first: a busy METRICS_PORT stops the start before any worker runs.
    const { host, port, problem } = options.metrics;
    serveMetrics({
      host,
      port,
      text: clusterMetrics(() => live().filter((w) => listening.has(w))),
      onError: (err) => logger.warn({ err }, "metrics: a scrape failed"),
    }).then(
      (listener) => {
        logger.info({ url: listener.url }, "metrics listening");
        if (!stopping) startWorkers();
      },
      (err: unknown) => {
        // Like a worker's start-up failure: one line naming the setting, and nothing left running.
        const reason = problem(err);
        console.error(reason instanceof Error ? reason.message : String(reason));
        process.exit(1);
      },
    );
  } else {
    startWorkers();
  }

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stopping) {
        logger.warn({ signal }, "second signal: stopping the workers without waiting");
        for (const worker of live()) worker.kill("SIGKILL");
        process.exit(1);
      }
      stopping = true;
      logger.info({ signal, workers: live().length }, "shutting down the workers");
      if (live().length === 0) process.exit(failed ? 1 : 0);
      for (const worker of live()) {
        if (listening.has(worker) && worker.isConnected()) {
          worker.send(SHUTDOWN_MESSAGE);
        } else {
          // Still starting (a worker forked a moment ago is loading its modules and has no message
          // listener yet, so a message would be lost and it would go on to serve): SIGTERM, which it
          // drains on if its handler is installed, and which otherwise ends it before it served anything.
          if (!listening.has(worker)) abandoned.add(worker);
          worker.kill("SIGTERM");
        }
      }
      // Each worker cuts what is left after SHUTDOWN_TIMEOUT_SECONDS; one that still has not exited a
      // while after that is stuck.
      setTimeout(
        () => {
          logger.warn({ workers: live().length }, "workers still running after the shutdown timeout: killing them");
          for (const worker of live()) worker.kill("SIGKILL");
          process.exit(1);
        },
        (options.shutdownTimeoutSeconds + 5) * 1000,
      ).unref();
    });
  }
}
