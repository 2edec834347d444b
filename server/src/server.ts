import type { Server } from "node:http";
import type { Logger } from "pino";
import { acquirerProblem, adyenInUse } from "./acquirers.ts";
import { answerMetricsRequests, createMetrics, type Metrics, serveMetrics } from "./adapters/metrics.ts";
import type { Config } from "./config.ts";
import type { Domain } from "./domain/index.ts";
import type { Now } from "./domain/kernel/caller.ts";
import { createLogger } from "./logger.ts";
import { createSandboxHost, type SandboxHosting } from "./sandboxes/host.ts";
import { dataLocation, privateDataDir } from "./startup/data-dir.ts";
import { domainFor, type WebhookOverrides } from "./startup/domain.ts";
import { drain } from "./startup/drain.ts";
import { assembleHttp } from "./startup/http.ts";
import { type Scheduled, startJobs } from "./startup/jobs.ts";
import { closeServer, listen, metricsListenProblem } from "./startup/listen.ts";
import { ResourceStack } from "./startup/resource-stack.ts";
import { openConfiguredStore, type ServerStore } from "./startup/store.ts";

// The composition root: what `npm start` (main.ts), the sandbox and the tests start. Each piece lives in
// startup/ (the data directory, the store, the domain's wiring, the listeners, the jobs, the drain);
// this file puts them together in order, and says for each what closes it (a ResourceStack), so that a
// start that fails at any step closes everything the steps before it opened, and a graceful close
// closes the same list.

export { IN_MEMORY } from "./startup/data-dir.ts";
export type { WebhookOverrides } from "./startup/domain.ts";
export { openStore, type ServerStore } from "./startup/store.ts";

export interface RunningServer {
  url: string;
  server: Server;
  store: ServerStore;
  domain: Domain;
  /** The sandboxes on demand open in this process (server/src/sandboxes/host.ts). */
  sandboxes: SandboxHosting;
  /**
   * Where this server's metrics are served (METRICS_PORT), or null: not collected, or (in a cluster's
   * worker) served by the primary.
   */
  metricsUrl: string | null;
  /** The secret of the sandbox key created on this start, when the store was empty; otherwise null. */
  bootstrapSecret: string | null;
  /**
   * Graceful: readiness turns 503, no new connections; requests and job runs under way finish (for at
   * most SHUTDOWN_TIMEOUT_SECONDS), then the request log is flushed and the store closed.
   */
  close(): Promise<void>;
}

/** The steps of a start, in order; each opens something that the start's resource stack then closes. */
export const STARTUP_STEPS = [
  "store",
  "domain",
  "ledger",
  "http",
  "listen",
  "metrics",
  "bootstrap",
  "jobs",
  "dispatcher",
] as const;
export type StartupStep = (typeof STARTUP_STEPS)[number];

/** What a start has opened so far (startServer's `afterStep`). */
export interface Opened {
  store?: ServerStore;
  domain?: Domain;
  server?: Server;
  metricsUrl?: string;
  jobs?: Scheduled[];
}

export interface StartOptions {
  config: Config;
  logger?: Logger;
  now?: Now;
  webhooks?: WebhookOverrides;
  /**
   * Who serves the metrics when METRICS_PORT is set: this server on its own listener (default), or the
   * cluster's primary, which asks each worker for its own (cluster.ts; WORKERS > 1).
   */
  metricsServedBy?: "self" | "primary";
  /**
   * Whether a first start on an empty store makes the sandbox key with scope `*` (default true). main.ts
   * says no where its secret could only be written to the log stream (production without a terminal):
   * the first key is then made with the admin CLI, which shows it on the operator's terminal.
   */
  bootstrapKey?: boolean;
  /**
   * Called after each step with what is open so far; a throw fails the start there (tests prove with it
   * that a failure at any step closes everything opened before it: startup/startup.test.ts).
   */
  afterStep?: (step: StartupStep, opened: Opened) => void | Promise<void>;
}

/** The metrics (METRICS_PORT): collected only when something serves them. */
function metricsFor(config: Config, logger: Logger, depth: () => ReturnType<Domain["webhooks"]["depth"]>) {
  if (config.METRICS_PORT === undefined) return null;
  return createMetrics({
    outboxDepth: depth,
    onDepthError: (err) => logger.warn({ err }, "metrics: could not read the webhook outbox's depth"),
  });
}

/** Serves the metrics on METRICS_HOST:METRICS_PORT, or answers the cluster primary's requests for them. */
async function serveMetricsFor(
  options: StartOptions,
  metrics: Metrics,
  stack: ResourceStack,
  logger: Logger,
): Promise<string | null> {
  const { config } = options;
  if (options.metricsServedBy === "primary") {
    stack.defer("answering the primary's metrics requests", answerMetricsRequests(metrics.registry));
    return null;
  }
  const listener = await serveMetrics({
    host: config.METRICS_HOST,
    port: config.METRICS_PORT ?? 0,
    text: metrics.text,
    onError: (err) => logger.warn({ err }, "metrics: a scrape failed"),
  }).catch((err: unknown) => {
    throw metricsListenProblem(config, err);
  });
  // Closed after the drain (close() empties the stack once the API server has drained), so the last
  // requests are counted.
  stack.defer("the metrics listener", () => listener.close());
  logger.info({ url: listener.url }, "metrics listening");
  return listener.url;
}

/**
 * Opens the store, binds the port, and only then creates the first start's sandbox key: a start that
 * cannot listen leaves the store as it found it, so the next start still makes (and prints) the key.
 * A start that fails closes, in reverse order, everything it had opened.
 */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);
  const now = options.now ?? (() => new Date());
  const refused = acquirerProblem(config);
  if (refused) throw refused;
  if (config.PRODUCTION_ACQUIRER === "simulator") {
    logger.warn(
      { setting: "PRODUCTION_ACQUIRER" },
      "production payments go through the simulator: no money moves, every card is approved unless it is a test card; for demos and tests only",
    );
  }
  const adyen = adyenInUse(config);
  if (adyen) logger.info(adyen, "payments go through Adyen where an environment's acquirer is adyen");
  const narrowed = privateDataDir(config);
  if (narrowed !== null) {
    logger.warn(
      { data_dir: dataLocation(config), was: narrowed.toString(8).padStart(3, "0"), now: "700" },
      "DATA_DIR was open to other users: made it owner-only",
    );
  }

  return ResourceStack.unwindOnFailure(async (stack) => {
    const opened: Opened = {};
    const done = async (step: StartupStep) => options.afterStep?.(step, opened);

    const store = await openConfiguredStore(config);
    stack.defer("the store", () => store.close());
    opened.store = store;
    await done("store");

    // BASE_URL on port 0 (PORT=0 and no BASE_URL: tests) is no address anyone can open: once the server
    // listens, the address it listens on takes its place.
    let publicUrl = config.BASE_URL;
    // The outbox depth reads the domain, which needs the metrics' observer first: hence the getter.
    let domain: Domain | undefined;
    const metrics = metricsFor(config, logger, () =>
      domain ? domain.webhooks.depth() : Promise.reject(new Error("not started")),
    );
    // Sandboxes on demand: each a store and domain of its own, opened on its first request and closed
    // (before the account's store) with the server.
    const sandboxes = createSandboxHost({
      config,
      logger,
      now,
      publicUrl: () => publicUrl,
      ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    });
    stack.defer("the sandboxes on demand", () => sandboxes.close());
    domain = domainFor(config, store, now, { ...options.webhooks, log: logger }, () => publicUrl, metrics?.observer, {
      sandboxHost: sandboxes,
    });
    const { dispatcher, sender } = domain.webhooks;
    stack.defer("the webhook sender", () => sender.close?.());
    opened.domain = domain;
    await done("domain");

    // A database written before double entry gets its postings before anything reads or moves money.
    const upgraded = await domain.ledger.upgrade();
    if (upgraded > 0) logger.info({ postings: upgraded }, "ledger: single-entry history brought up to double entry");
    await done("ledger");

    // Request-log records are written in batches, and rate-limit quota is leased from the store; both
    // are flushed (what is left written, the leases under way waited for) before the store closes.
    const { app, limits } = assembleHttp(
      stack,
      { config, domain, store, logger, now, publicUrl: () => publicUrl, owner: "the" },
      {
        front: sandboxes.router(domain.sandboxes),
        validation: sandboxes.validation(domain.serviceKeys),
        ...(metrics ? { metrics: metrics.requests } : {}),
      },
    );
    await done("http");

    const { server, url } = await listen(config, app);
    stack.defer("the API server", () => closeServer(server));
    if (new URL(config.BASE_URL).port === "0") publicUrl = url;
    opened.server = server;
    await done("listen");

    const metricsUrl = metrics ? await serveMetricsFor(options, metrics, stack, logger) : null;
    if (metricsUrl) opened.metricsUrl = metricsUrl;
    await done("metrics");

    // On first start with an empty store, one sandbox key with scope `*`, shown once (README "Quick start").
    const bootstrapSecret =
      options.bootstrapKey === false ? null : ((await domain.serviceKeys.bootstrap())?.secret ?? null);
    await done("bootstrap");

    const jobs = startJobs(config, domain, limits, logger);
    // A graceful close waits for the runs under way in its drain, within SHUTDOWN_TIMEOUT_SECONDS; here
    // the schedules only end, so a run stuck past that limit does not hold the store open.
    stack.defer("the background jobs", () => {
      for (const job of jobs) void job.stop();
    });
    opened.jobs = jobs;
    await done("jobs");

    // The webhook dispatcher: woken by this instance's commits, polling for the rest (domain/webhooks).
    // Stopped first on close: attempts under way finish and are recorded before the store closes.
    // Stopped even when not started here: a sandbox clock's advance may have attempts of its own under way.
    stack.defer("the webhook dispatcher", () => dispatcher.stop());
    if (config.WEBHOOK_DISPATCHER) dispatcher.start();
    await done("dispatcher");

    const running = domain;
    let closing: Promise<void> | null = null;
    return {
      url,
      server,
      store,
      domain,
      sandboxes,
      metricsUrl,
      bootstrapSecret,
      close() {
        closing ??= (async () => {
          running.health.drain();
          // Open event streams end now, so their connections close with the others.
          running.events.closeStreams();
          await drain({ server, jobs, timeoutMs: config.SHUTDOWN_TIMEOUT_SECONDS * 1000, logger });
          await stack.disposeAsync();
        })();
        return closing;
      },
    };
  });
}
