import cluster, { type Worker } from "node:cluster";
import { createServer, type Server } from "node:http";
import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from "prom-client";
import type { DomainObserver } from "../domain/kernel/observer.ts";
import { boundPort, isRecord } from "../guards.ts";
import type { RequestMetrics } from "../http/observability.ts";

// The operators' metrics in Prometheus's text format (docs/operating.md "Metrics"): what the HTTP layer
// and the domain report (http/observability.ts RequestMetrics, domain/kernel/observer.ts), counted with
// prom-client, plus the outbox's depth read from the store at each scrape and Node's process metrics.
// They are served on their own listen address (METRICS_HOST:METRICS_PORT), never on the API's port.
// With WORKERS > 1 each worker counts its own requests and the cluster's primary serves the sum
// (clusterMetrics below).

/** Latency buckets, in seconds: most answers take milliseconds; 10 s is the webhook timeout's default. */
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** How long events wait for their first delivery attempt, in seconds (a poll interval is 1 s by default). */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

const environment = (livemode: boolean) => (livemode ? "live" : "sandbox");

export interface Metrics {
  registry: Registry;
  requests: RequestMetrics;
  observer: DomainObserver;
  /** The metrics of this process in Prometheus's text format. */
  text(): Promise<string>;
}

export function createMetrics(deps: {
  /** The outbox's backlog (domain webhooks.depth()); read at each scrape. */
  outboxDepth?: () => Promise<{ eventsPending: number; deliveriesDue: number }>;
  /** Told when the outbox's depth could not be read (the series is left out of that scrape). */
  onDepthError?: (err: unknown) => void;
}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const duration = new Histogram({
    name: "payments_http_request_duration_seconds",
    help: "API requests by the contract's operationId and HTTP status, and how long each took to answer (its _count is the number of requests).",
    labelNames: ["operation", "status"] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const replays = new Counter({
    name: "payments_idempotent_replays_total",
    help: "Answers replayed for a repeated Idempotency-Key, by operation.",
    labelNames: ["operation"] as const,
    registers,
  });
  const refusals = new Counter({
    name: "payments_rate_limited_total",
    help: "Requests refused with 429, by the limit they exceeded (key, environment, address, payment_link, payment_address, acquirer_notifications).",
    labelNames: ["limit"] as const,
    registers,
  });
  const charges = new Counter({
    name: "payments_charge_outcomes_total",
    help: "Charges created in or moved to each status, by status and environment.",
    labelNames: ["status", "environment"] as const,
    registers,
  });
  const attempts = new Counter({
    name: "payments_webhook_attempts_total",
    help: "Webhook delivery attempts recorded, by outcome (succeeded, http_error, timeout, connection_error, ...) and environment.",
    labelNames: ["outcome", "environment"] as const,
    registers,
  });
  const failedDeliveries = new Counter({
    name: "payments_webhook_deliveries_failed_total",
    help: "Webhook deliveries that ended failed (retries exhausted, 410 Gone, a manual attempt failed, endpoint disabled or deleted), by environment.",
    labelNames: ["environment"] as const,
    registers,
  });
  const disabledEndpoints = new Counter({
    name: "payments_webhook_endpoints_disabled_total",
    help: "Webhook endpoints disabled automatically, by reason (gone: answered 410; failing: failed for the whole failure window).",
    labelNames: ["reason", "environment"] as const,
    registers,
  });
  const lag = new Histogram({
    name: "payments_webhook_delivery_lag_seconds",
    help: "Time from an event's creation to the first attempt to deliver it, by environment.",
    labelNames: ["environment"] as const,
    buckets: LAG_BUCKETS,
    registers,
  });
  const { outboxDepth } = deps;
  if (outboxDepth) {
    new Gauge({
      name: "payments_webhook_outbox_depth",
      help: "The webhook outbox's backlog: events_pending (events not yet fanned out into deliveries) and deliveries_due (deliveries due for an attempt now), counted up to 1000.",
      labelNames: ["queue"] as const,
      registers,
      // Every worker reads the same store: the cluster's figure is one reading, not a sum.
      aggregator: "max",
      async collect() {
        try {
          const depth = await outboxDepth();
          this.set({ queue: "events_pending" }, depth.eventsPending);
          this.set({ queue: "deliveries_due" }, depth.deliveriesDue);
        } catch (err) {
          this.reset();
          deps.onDepthError?.(err);
        }
      },
    });
  }

  // One child per label combination, found by a string key rather than by prom-client's label hashing
  // on every request.
  const timers = new Map<string, Histogram.Internal<"operation" | "status">>();

  return {
    registry,
    requests: {
      request(operation, status, seconds) {
        const key = `${operation} ${status}`;
        let child = timers.get(key);
        if (child === undefined) {
          child = duration.labels(operation, String(status));
          timers.set(key, child);
        }
        child.observe(seconds);
      },
      replayed: (operation) => replays.inc({ operation }),
      rateLimited: (limit) => refusals.inc({ limit }),
    },
    observer: {
      chargeStatus: (status, livemode) => charges.inc({ status, environment: environment(livemode) }),
      webhookAttempt({ outcome, livemode, lagSeconds }) {
        attempts.inc({ outcome, environment: environment(livemode) });
        if (lagSeconds !== null) lag.observe({ environment: environment(livemode) }, lagSeconds);
      },
      webhookDeliveryFailed: (livemode) => failedDeliveries.inc({ environment: environment(livemode) }),
      webhookEndpointDisabled: (reason, livemode) =>
        disabledEndpoints.inc({ reason, environment: environment(livemode) }),
    },
    text: () => registry.metrics(),
  };
}

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** A metrics listener: GET /metrics answers `text()`; anything else is a 404. */
export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/**
 * Listens on `host:port` (port 0: one the system picks) for Prometheus's scrapes. Rejects with the
 * listen error (a busy port, an address not of this machine).
 */
export function serveMetrics(options: {
  host: string;
  port: number;
  text: () => Promise<string>;
  onError?: (err: unknown) => void;
}): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end("Not found: the metrics are at GET /metrics.\n");
      return;
    }
    options.text().then(
      (body) => {
        res.writeHead(200, { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      (err: unknown) => {
        options.onError?.(err);
        res.writeHead(503, { "content-type": "text/plain; charset=utf-8" });
        res.end(`The metrics could not be gathered: ${err instanceof Error ? err.message : String(err)}\n`);
      },
    );
  });
  // A scrape is one short request: keep no idle connection from delaying a shutdown.
  server.keepAliveTimeout = 1000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      const port = boundPort(server);
      const host = options.host.includes(":") ? `[${options.host}]` : options.host;
      resolve({
        url: `http://${host}:${port}/metrics`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

// The cluster (WORKERS > 1): the primary asks each worker that listens for its metrics over the
// cluster's IPC channel and serves their aggregate. Counters and histograms are summed; the outbox
// depth, which every worker reads from the one store, is the largest reading; Node's process metrics
// are aggregated as prom-client defines for each.

const METRICS_REQUEST = "payments:metrics-request";
const METRICS_ANSWER = "payments:metrics-answer";

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];
interface MetricsAnswer {
  type: typeof METRICS_ANSWER;
  id: number;
  metrics?: MetricsJson;
  error?: string;
}

/** In a worker: answers the primary's requests for this process's metrics. Returns a function that stops. */
export function answerMetricsRequests(registry: Registry): () => void {
  const listener = (message: unknown) => {
    const request = isRecord(message) ? message : undefined;
    if (request?.type !== METRICS_REQUEST || typeof request.id !== "number") return;
    const { id } = request;
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: METRICS_ANSWER, id, metrics } satisfies MetricsAnswer),
      (err: unknown) =>
        process.send?.({ type: METRICS_ANSWER, id, error: err instanceof Error ? err.message : String(err) }),
    );
  };
  process.on("message", listener);
  return () => process.off("message", listener);
}

/**
 * In the primary: the workers' metrics, summed. `workers` are the workers to ask (those that listen).
 * Rejects when one of them does not answer within `timeoutMs` or fails to gather its metrics: a scrape
 * with a worker missing would look to Prometheus like counters going back, so it fails whole instead.
 */
export function clusterMetrics(workers: () => Worker[], timeoutMs = 3000): () => Promise<string> {
  let next = 0;
  const pending = new Map<number, (answer: MetricsAnswer) => void>();
  cluster.on("message", (_worker, message: unknown) => {
    const answer = isRecord(message) ? message : undefined;
    if (answer?.type !== METRICS_ANSWER || typeof answer.id !== "number") return;
    // A message of this type is a worker's own answer (answerMetricsRequests above builds it, `satisfies
    // MetricsAnswer`), which the cluster's IPC channel carries as JSON, unchanged: hence the cast.
    pending.get(answer.id)?.(answer as unknown as MetricsAnswer);
  });

  function ask(worker: Worker): Promise<MetricsJson> {
    const id = ++next;
    return new Promise<MetricsJson>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`worker ${worker.id} did not send its metrics within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, (answer) => {
        clearTimeout(timer);
        pending.delete(id);
        if (answer.metrics) resolve(answer.metrics);
        else
          reject(new Error(`worker ${worker.id} could not gather its metrics: ${answer.error ?? "no reason given"}`));
      });
      worker.send({ type: METRICS_REQUEST, id });
    });
  }

  return async () => {
    const asked = workers().filter((w) => w.isConnected());
    const answers = await Promise.all(asked.map(ask));
    return AggregatorRegistry.aggregate(answers).metrics();
  };
}
