import { randomBytes } from "node:crypto";
import { accessSync, chmodSync, constants, mkdirSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve as resolvePath } from "node:path";
import type { Logger } from "pino";
import { acquirerProblem, adyenInUse, payoutRailFor, processorsFor } from "./acquirers.ts";
import { answerMetricsRequests, createMetrics, type MetricsListener, serveMetrics } from "./adapters/metrics.ts";
import { loadOrCreateDevVaultKeys } from "./adapters/vault-key-file.ts";
import { createHttpWebhookSender, systemResolver } from "./adapters/webhook-sender.ts";
import { type Config, domainSettings, moneyRules, rateLimitSettings } from "./config.ts";
import { COLLECTIONS } from "./domain/collections.ts";
import { createDomain, type Domain } from "./domain/index.ts";
import type { Now } from "./domain/kernel/caller.ts";
import type { DomainLog } from "./domain/kernel/log.ts";
import type { DomainObserver } from "./domain/kernel/observer.ts";
import type { DocsOf } from "./domain/kernel/records.ts";
import type { VaultKeys } from "./domain/vault/crypto.ts";
import { parseVaultKeys } from "./domain/vault/keys.ts";
import type { Resolver } from "./domain/webhooks/ssrf.ts";
import { createApp } from "./http/app.ts";
import { requestLogWriter } from "./http/observability.ts";
import { rateLimitCollections, rateLimits } from "./http/rate-limits.ts";
import { createLogger } from "./logger.ts";
import { StartupError } from "./startup-error.ts";
import type { Store } from "./store/port.ts";
import { openSqliteStore } from "./store/sqlite.ts";

/** DATA_DIR=":memory:" runs entirely in memory (tests): an in-memory SQLite store and throwaway vault keys. */
export const IN_MEMORY = ":memory:";

/** Every collection the server stores: the domain's, and the HTTP layer's own (the rate limiters' counts). */
const STORE_COLLECTIONS = { ...COLLECTIONS, ...rateLimitCollections };
export type ServerStore = Store<DocsOf<typeof STORE_COLLECTIONS>>;

export async function openStore(config: Config): Promise<ServerStore> {
  // The transaction-misuse guard catches a programming mistake in development and tests, and costs a
  // hook on every promise where it runs (store/common.ts, txGuard): production goes without it.
  const guard = config.NODE_ENV !== "production";
  if (config.MONGODB_URI) {
    // Loaded only when used: the driver's BSON serializer allocates a 17 MB buffer as it loads, which
    // a server on SQLite would otherwise carry for nothing (docs/operating.md "Start-up and memory").
    const { openMongoStore } = await import("./store/mongodb.ts");
    return openMongoStore({
      uri: config.MONGODB_URI,
      dbName: config.MONGODB_DB,
      collections: STORE_COLLECTIONS,
      guard,
    });
  }
  const path = config.DATA_DIR === IN_MEMORY ? IN_MEMORY : join(config.DATA_DIR, "payments.sqlite");
  return openSqliteStore({ path, collections: STORE_COLLECTIONS, guard });
}

export function vaultKeysFor(config: Config): VaultKeys {
  if (config.VAULT_MASTER_KEY && config.VAULT_FINGERPRINT_KEY) {
    return parseVaultKeys({ masterKey: config.VAULT_MASTER_KEY, fingerprintKey: config.VAULT_FINGERPRINT_KEY });
  }
  // The config schema refuses production without explicit keys; development keeps generated ones under DATA_DIR.
  if (config.DATA_DIR === IN_MEMORY) {
    return parseVaultKeys({
      masterKey: randomBytes(32).toString("base64"),
      fingerprintKey: randomBytes(32).toString("base64"),
    });
  }
  return loadOrCreateDevVaultKeys(config.DATA_DIR);
}

/** What embedding code and tests may swap in the webhook delivery path. */
export interface WebhookOverrides {
  /** Resolves endpoint host names at registration and at connection time (default: the system resolver). */
  resolve?: Resolver;
  /** The retry jitter's random source. */
  random?: () => number;
}

/**
 * The domain as the configuration describes it (also used by the CLI). `baseUrl` gives the server's public
 * address (payment links' `url`); by default BASE_URL.
 */
export function domainFor(
  config: Config,
  store: ServerStore,
  now: Now = () => new Date(),
  webhooks: WebhookOverrides & { log?: DomainLog } = {},
  baseUrl: () => string = () => config.BASE_URL,
  observer?: DomainObserver,
): Domain {
  const resolve = webhooks.resolve ?? systemResolver;
  return createDomain({
    store,
    vaultKeys: vaultKeysFor(config),
    now,
    money: moneyRules(config),
    settings: domainSettings(config),
    processors: processorsFor(config),
    payoutRail: payoutRailFor(config),
    webhookSender: createHttpWebhookSender({ resolve }),
    resolve,
    random: webhooks.random,
    log: webhooks.log,
    baseUrl,
    observer,
  });
}

export interface RunningServer {
  url: string;
  server: Server;
  store: ServerStore;
  domain: Domain;
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

const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;

/** A background job's schedule; stop() ends it and resolves once a run under way has finished. */
interface Scheduled {
  stop(): Promise<void>;
}

/** Runs `job` every `ms`, skipping a turn while the previous run is still going; failures are logged. */
function every(ms: number, name: string, logger: Logger, job: () => Promise<unknown>): Scheduled {
  let current: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (current) return;
    current = job()
      .then(
        () => {},
        (err: unknown) => logger.error({ err, job: name }, "background job failed"),
      )
      .finally(() => {
        current = null;
      });
  }, ms);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await current;
    },
  };
}

function codeOf(err: unknown): string | undefined {
  return err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Where the embedded store keeps its data, as an absolute path (start-up log and errors). */
export function dataLocation(config: Config): string {
  return config.DATA_DIR === IN_MEMORY ? IN_MEMORY : resolvePath(config.DATA_DIR);
}

/** Why DATA_DIR cannot hold the store, in words; the code stays in the message for searching. */
function dataDirProblem(config: Config, err: unknown): StartupError {
  const code = codeOf(err);
  const where = dataLocation(config);
  const why =
    code === "ENOTDIR" || code === "EEXIST"
      ? "is a file, or lies under one; it must be a directory"
      : code === "EACCES" || code === "EPERM" || code === "EROFS" || code === "SQLITE_CANTOPEN"
        ? "cannot be written by this process (check its permissions, or point DATA_DIR elsewhere)"
        : code === "SQLITE_READONLY"
          ? "holds a database this process cannot write (check the permissions of the files in it)"
          : "cannot hold the embedded store";
  return new StartupError("DATA_DIR", `${where} ${why} (${code ?? messageOf(err)})`, { cause: err });
}

/** Whether anything is kept under DATA_DIR: the SQLite store, or development's generated vault keys. */
const usesDataDir = (config: Config) =>
  config.DATA_DIR !== IN_MEMORY && (!config.MONGODB_URI || !(config.VAULT_MASTER_KEY && config.VAULT_FINGERPRINT_KEY));

/**
 * DATA_DIR holds card fingerprints, key digests, sealed card data and (in development) the vault keys,
 * so it is readable by its owner only (docs/operating.md "Configuration"). A directory the server
 * makes is made so (0700); an existing one that other users may read, write or enter is narrowed to
 * its owner's permissions. One this process cannot narrow (another user's), or a directory shared on
 * purpose (the sticky bit, as on /tmp), is refused with one line saying why, rather than used as it
 * is. Returns the mode the directory had when it was narrowed, else null.
 */
export function privateDataDir(config: Config): number | null {
  if (!usesDataDir(config)) return null;
  const dir = dataLocation(config);
  let mode: number;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    mode = statSync(dir).mode & 0o7777;
  } catch (err) {
    throw dataDirProblem(config, err);
  }
  if (process.platform === "win32" || (mode & 0o077) === 0) return null;
  const shown = mode.toString(8).padStart(3, "0");
  if ((mode & 0o1000) !== 0) {
    throw new StartupError(
      "DATA_DIR",
      `${dir} is a directory shared with other users (mode ${shown}, sticky): give the server a directory of its own, such as a new one inside it`,
    );
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw dataDirProblem(config, err);
  }
  try {
    chmodSync(dir, mode & 0o700);
  } catch (err) {
    throw new StartupError(
      "DATA_DIR",
      `${dir} is open to other users (mode ${shown}) and this process cannot make it owner-only (it is not the directory's owner): run chmod 700 on it as its owner, or point DATA_DIR elsewhere (${codeOf(err) ?? messageOf(err)})`,
      { cause: err },
    );
  }
  return mode;
}

/** openStore, with failures as StartupErrors naming DATA_DIR or MONGODB_URI (the server and the CLI). */
export async function openConfiguredStore(config: Config): Promise<ServerStore> {
  try {
    return await openStore(config);
  } catch (err) {
    if (!config.MONGODB_URI) throw dataDirProblem(config, err);
    // The URI may hold a password, so only the driver's reason is shown, never the URI.
    throw new StartupError("MONGODB_URI", `cannot use MongoDB: ${messageOf(err)}`, { cause: err });
  }
}

function configuredDomain(
  config: Config,
  store: ServerStore,
  now: Now,
  webhooks: Parameters<typeof domainFor>[3] = {},
  baseUrl?: () => string,
  observer?: DomainObserver,
): Domain {
  try {
    return domainFor(config, store, now, webhooks, baseUrl, observer);
  } catch (err) {
    if (config.VAULT_MASTER_KEY) throw new StartupError("VAULT_MASTER_KEY", messageOf(err), { cause: err });
    if (codeOf(err)) throw dataDirProblem(config, err);
    throw new StartupError("DATA_DIR", `${dataLocation(config)}/vault-keys.json: ${messageOf(err)}`, { cause: err });
  }
}

function listenProblem(config: Config, err: unknown): unknown {
  const code = codeOf(err);
  if (code === "EADDRINUSE") {
    return new StartupError(
      "PORT",
      `${config.PORT} is already in use on ${config.HOST}; stop what holds it or set PORT to a free port`,
      { cause: err },
    );
  }
  if (code === "EACCES") {
    return new StartupError("PORT", `${config.PORT} needs privileges this process lacks; use a port above 1023`, {
      cause: err,
    });
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return new StartupError("HOST", `${config.HOST} is not an address of this machine (${code})`, { cause: err });
  }
  return err;
}

/** A metrics listener that cannot start, as a StartupError naming the setting to change. */
export function metricsListenProblem(config: Pick<Config, "METRICS_PORT" | "METRICS_HOST">, err: unknown): unknown {
  const code = codeOf(err);
  if (code === "EADDRINUSE") {
    return new StartupError(
      "METRICS_PORT",
      `${config.METRICS_PORT} is already in use on ${config.METRICS_HOST}; stop what holds it or set METRICS_PORT to a free port`,
      { cause: err },
    );
  }
  if (code === "EACCES") {
    return new StartupError(
      "METRICS_PORT",
      `${config.METRICS_PORT} needs privileges this process lacks; use a port above 1023`,
      {
        cause: err,
      },
    );
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return new StartupError("METRICS_HOST", `${config.METRICS_HOST} is not an address of this machine (${code})`, {
      cause: err,
    });
  }
  return err;
}

/**
 * Graceful shutdown: readiness turns 503 and the server stops accepting connections; requests under
 * way finish (each connection closes once idle) and so do background-job runs under way, for at most
 * `timeoutMs`; then whatever is left is cut, and `after` (flush the request log, close the store) runs.
 */
async function drainAndClose(options: {
  server: Server;
  jobs: Scheduled[];
  timeoutMs: number;
  logger: Logger;
  before: () => void;
  after: () => Promise<void>;
}): Promise<void> {
  const { server, logger } = options;
  options.before();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // server.close() closes the idle keep-alive connections once; a busy one becomes idle when its
  // response is sent, so look again until none is left.
  const sweep = setInterval(() => server.closeIdleConnections(), 25);
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    Promise.all([closed, ...options.jobs.map((job) => job.stop())]).then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), options.timeoutMs);
    }),
  ]);
  clearInterval(sweep);
  clearTimeout(timer);
  if (!drained) {
    logger.warn({ timeout_ms: options.timeoutMs }, "shutdown timeout: cutting the requests still under way");
    server.closeAllConnections();
    await closed;
  }
  await options.after();
}

/**
 * Opens the store, binds the port, and only then creates the first start's sandbox key: a start that
 * cannot listen leaves the store as it found it, so the next start still makes (and prints) the key.
 */
export async function startServer(options: {
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
}): Promise<RunningServer> {
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
  const store = await openConfiguredStore(config);
  try {
    // BASE_URL on port 0 (PORT=0 and no BASE_URL: tests) is no address anyone can open: once the server
    // listens, the address it listens on takes its place.
    let publicUrl = config.BASE_URL;
    // The metrics (METRICS_PORT): collected only when something serves them. The outbox depth reads the
    // domain, which needs the metrics' observer first: hence the getter.
    let outboxDepth: (() => Promise<{ eventsPending: number; deliveriesDue: number }>) | undefined;
    const metrics =
      config.METRICS_PORT === undefined
        ? null
        : createMetrics({
            outboxDepth: () => (outboxDepth ? outboxDepth() : Promise.reject(new Error("not started"))),
            onDepthError: (err) => logger.warn({ err }, "metrics: could not read the webhook outbox's depth"),
          });
    const domain = configuredDomain(
      config,
      store,
      now,
      { ...options.webhooks, log: logger },
      () => publicUrl,
      metrics?.observer,
    );
    outboxDepth = () => domain.webhooks.depth();
    // A database written before double entry gets its postings before anything reads or moves money.
    const upgraded = await domain.ledger.upgrade();
    if (upgraded > 0) logger.info({ postings: upgraded }, "ledger: single-entry history brought up to double entry");

    // Request-log records are written in batches, and rate-limit quota is leased from the store;
    // close() writes what is left of the first and waits for the leases under way before the store closes.
    const requestLog = requestLogWriter({ store, logger });
    const limits = rateLimits({ store, now, logger, settings: rateLimitSettings(config) });
    const app = createApp({
      config,
      domain,
      store,
      logger,
      now,
      requestLog,
      limits,
      publicUrl: () => publicUrl,
      ...(metrics ? { metrics: metrics.requests } : {}),
    });
    const server = await new Promise<Server>((resolve, reject) => {
      // A request must arrive whole within REQUEST_TIMEOUT_SECONDS (its headers within
      // HEADERS_TIMEOUT_SECONDS), checked every second, so slow senders cannot hold connections open.
      const s = createServer(
        {
          requestTimeout: config.REQUEST_TIMEOUT_SECONDS * 1000,
          headersTimeout: config.HEADERS_TIMEOUT_SECONDS * 1000,
          connectionsCheckingInterval: 1000,
        },
        app,
      );
      s.listen(config.PORT, config.HOST);
      s.once("listening", () => resolve(s));
      s.once("error", (err) => reject(listenProblem(config, err)));
    });
    const { port } = server.address() as AddressInfo;
    const url = `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}`;
    if (new URL(config.BASE_URL).port === "0") publicUrl = url;

    let metricsListener: MetricsListener | null = null;
    let stopAnswering: (() => void) | null = null;
    if (metrics && config.METRICS_PORT !== undefined) {
      if (options.metricsServedBy === "primary") {
        stopAnswering = answerMetricsRequests(metrics.registry);
      } else {
        try {
          metricsListener = await serveMetrics({
            host: config.METRICS_HOST,
            port: config.METRICS_PORT,
            text: metrics.text,
            onError: (err) => logger.warn({ err }, "metrics: a scrape failed"),
          });
        } catch (err) {
          await new Promise<void>((resolve) => server.close(() => resolve()));
          throw metricsListenProblem(config, err);
        }
        logger.info({ url: metricsListener.url }, "metrics listening");
      }
    }

    let bootstrapSecret: string | null;
    try {
      // On first start with an empty store, one sandbox key with scope `*`, shown once (README "Quick start").
      bootstrapSecret =
        options.bootstrapKey === false ? null : ((await domain.serviceKeys.bootstrap())?.secret ?? null);
    } catch (err) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await metricsListener?.close();
      throw err;
    }

    // Background jobs. Each pass is safe on several instances at once (every change in it is
    // conditional); a pass still running when the next is due is not started twice.
    const jobs = [
      every(config.JOBS_INTERVAL_SECONDS * 1000, "charge jobs", logger, () =>
        Promise.all([
          domain.jobs.recoverIntents(),
          domain.jobs.expire(),
          domain.jobs.expireReviews(),
          domain.jobs.settle(),
        ]),
      ),
      every(config.JOBS_INTERVAL_SECONDS * 1000, "payout job", logger, () => domain.jobs.payouts()),
      every(config.JOBS_INTERVAL_SECONDS * 1000, "dispute jobs", logger, () =>
        Promise.all([domain.jobs.openScheduledDisputes(), domain.jobs.expireDisputes()]),
      ),
      every(HOUSEKEEPING_INTERVAL_MS, "retention sweep", logger, () =>
        Promise.all([
          domain.jobs.sweepIdempotency(),
          domain.jobs.sweepRequestLog(),
          domain.jobs.sweepEvents(),
          domain.jobs.sweepFraudCounters(),
          domain.jobs.sweepWebhookLog(),
          domain.jobs.sweepConsoleSessions(),
          domain.jobs.sweepStreamLeases(),
          limits.sweep(),
        ]),
      ),
    ];
    // The webhook dispatcher: woken by this instance's commits, polling for the rest (domain/webhooks).
    const { dispatcher, sender } = domain.webhooks;
    if (config.WEBHOOK_DISPATCHER) dispatcher.start();

    let closing: Promise<void> | null = null;
    return {
      url,
      server,
      store,
      domain,
      metricsUrl: metricsListener?.url ?? null,
      bootstrapSecret,
      close() {
        closing ??= drainAndClose({
          server,
          jobs,
          timeoutMs: config.SHUTDOWN_TIMEOUT_SECONDS * 1000,
          logger,
          before: () => {
            domain.health.drain();
            // Open event streams end now, so their connections close with the others.
            domain.events.closeStreams();
          },
          after: async () => {
            // Attempts under way finish and are recorded before the store closes.
            await dispatcher.stop();
            sender.close?.();
            await Promise.all([requestLog.close(), limits.flush()]);
            // Scraped until the end of the drain, so the last requests are counted.
            stopAnswering?.();
            await metricsListener?.close();
            await store.close();
          },
        });
        return closing;
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
