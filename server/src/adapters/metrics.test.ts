import { existsSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createMetrics, METRICS_CONTENT_TYPE, type MetricsListener, serveMetrics } from "./metrics.ts";

// The metrics adapter (docs/operating.md "Metrics"): what the HTTP layer and the domain report becomes
// Prometheus series with bounded labels, and the listener serves them at GET /metrics alone.

/** The value of one series in Prometheus's text format, or undefined when there is no such series. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.keys(found).length !== Object.keys(labels).length) continue;
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

const listeners: MetricsListener[] = [];
afterEach(async () => {
  for (const l of listeners.splice(0)) await l.close();
});

function get(url: string, method = "GET"): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"], body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("request metrics", () => {
  it("count each request in its operation's and status's histogram, with its latency", async () => {
    const m = createMetrics({});
    m.requests.request("getCharge", 200, 0.003);
    m.requests.request("getCharge", 200, 0.2);
    m.requests.request("getCharge", 404, 0.001);
    m.requests.request("createCharge", 201, 4);
    const text = await m.text();
    const name = "payments_http_request_duration_seconds";
    expect(sample(text, `${name}_count`, { operation: "getCharge", status: "200" })).toBe(2);
    expect(sample(text, `${name}_sum`, { operation: "getCharge", status: "200" })).toBeCloseTo(0.203, 9);
    expect(sample(text, `${name}_count`, { operation: "getCharge", status: "404" })).toBe(1);
    expect(sample(text, `${name}_count`, { operation: "createCharge", status: "201" })).toBe(1);
    // Buckets are cumulative: 3 ms is under 5 ms, 200 ms is not.
    expect(sample(text, `${name}_bucket`, { operation: "getCharge", status: "200", le: "0.005" })).toBe(1);
    expect(sample(text, `${name}_bucket`, { operation: "getCharge", status: "200", le: "0.25" })).toBe(2);
    expect(sample(text, `${name}_bucket`, { operation: "createCharge", status: "201", le: "2.5" })).toBe(0);
    expect(sample(text, `${name}_bucket`, { operation: "createCharge", status: "201", le: "+Inf" })).toBe(1);
  });

  it("count replays by operation and 429s by limit", async () => {
    const m = createMetrics({});
    m.requests.replayed("createCharge");
    m.requests.replayed("createCharge");
    m.requests.replayed("createRefund");
    m.requests.rateLimited("key");
    m.requests.rateLimited("payment_address");
    m.requests.rateLimited("key");
    const text = await m.text();
    expect(sample(text, "payments_idempotent_replays_total", { operation: "createCharge" })).toBe(2);
    expect(sample(text, "payments_idempotent_replays_total", { operation: "createRefund" })).toBe(1);
    expect(sample(text, "payments_rate_limited_total", { limit: "key" })).toBe(2);
    expect(sample(text, "payments_rate_limited_total", { limit: "payment_address" })).toBe(1);
  });

  it("include Node's process metrics", async () => {
    const text = await createMetrics({}).text();
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
  });
});

describe("domain observer", () => {
  it("counts charge outcomes by status and environment", async () => {
    const m = createMetrics({});
    m.observer.chargeStatus("captured", false);
    m.observer.chargeStatus("captured", true);
    m.observer.chargeStatus("captured", true);
    m.observer.chargeStatus("declined", true);
    const text = await m.text();
    const name = "payments_charge_outcomes_total";
    expect(sample(text, name, { status: "captured", environment: "sandbox" })).toBe(1);
    expect(sample(text, name, { status: "captured", environment: "live" })).toBe(2);
    expect(sample(text, name, { status: "declined", environment: "live" })).toBe(1);
    expect(sample(text, name, { status: "declined", environment: "sandbox" })).toBeUndefined();
  });

  it("counts webhook attempts by outcome, the lag of first attempts only, failures and disabled endpoints", async () => {
    const m = createMetrics({});
    m.observer.webhookAttempt({ outcome: "succeeded", livemode: true, lagSeconds: 0.02 });
    m.observer.webhookAttempt({ outcome: "timeout", livemode: true, lagSeconds: 3 });
    m.observer.webhookAttempt({ outcome: "http_error", livemode: true, lagSeconds: null });
    m.observer.webhookAttempt({ outcome: "http_error", livemode: false, lagSeconds: null });
    m.observer.webhookDeliveryFailed(true);
    m.observer.webhookEndpointDisabled("gone", false);
    m.observer.webhookEndpointDisabled("failing", true);
    const text = await m.text();
    const attempts = "payments_webhook_attempts_total";
    expect(sample(text, attempts, { outcome: "succeeded", environment: "live" })).toBe(1);
    expect(sample(text, attempts, { outcome: "timeout", environment: "live" })).toBe(1);
    expect(sample(text, attempts, { outcome: "http_error", environment: "live" })).toBe(1);
    expect(sample(text, attempts, { outcome: "http_error", environment: "sandbox" })).toBe(1);
    const lag = "payments_webhook_delivery_lag_seconds";
    expect(sample(text, `${lag}_count`, { environment: "live" })).toBe(2);
    expect(sample(text, `${lag}_sum`, { environment: "live" })).toBeCloseTo(3.02, 9);
    expect(sample(text, `${lag}_bucket`, { environment: "live", le: "0.05" })).toBe(1);
    expect(sample(text, `${lag}_count`, { environment: "sandbox" })).toBeUndefined();
    expect(sample(text, "payments_webhook_deliveries_failed_total", { environment: "live" })).toBe(1);
    const disabled = "payments_webhook_endpoints_disabled_total";
    expect(sample(text, disabled, { reason: "gone", environment: "sandbox" })).toBe(1);
    expect(sample(text, disabled, { reason: "failing", environment: "live" })).toBe(1);
  });

  it("reads the outbox's depth at each scrape, and leaves it out when the store cannot say", async () => {
    let depth = { eventsPending: 3, deliveriesDue: 7 };
    let failing = false;
    const errors: unknown[] = [];
    const m = createMetrics({
      outboxDepth: async () => {
        if (failing) throw new Error("store unavailable");
        return depth;
      },
      onDepthError: (err) => errors.push(err),
    });
    const name = "payments_webhook_outbox_depth";
    let text = await m.text();
    expect(sample(text, name, { queue: "events_pending" })).toBe(3);
    expect(sample(text, name, { queue: "deliveries_due" })).toBe(7);
    depth = { eventsPending: 0, deliveriesDue: 1 };
    text = await m.text();
    expect(sample(text, name, { queue: "events_pending" })).toBe(0);
    expect(sample(text, name, { queue: "deliveries_due" })).toBe(1);
    failing = true;
    text = await m.text();
    expect(sample(text, name, { queue: "deliveries_due" })).toBeUndefined();
    expect(errors).toEqual([new Error("store unavailable")]);
  });
});

describe("metrics listener", () => {
  it("serves GET and HEAD /metrics in Prometheus's text format, and nothing else", async () => {
    const m = createMetrics({});
    m.requests.request("listCharges", 200, 0.01);
    const listener = await serveMetrics({ host: "127.0.0.1", port: 0, text: m.text });
    listeners.push(listener);
    expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const scraped = await get(`${listener.url}?debug=1`);
    expect(scraped.status).toBe(200);
    expect(scraped.type).toBe(METRICS_CONTENT_TYPE);
    expect(
      sample(scraped.body, "payments_http_request_duration_seconds_count", { operation: "listCharges", status: "200" }),
    ).toBe(1);
    const head = await get(listener.url, "HEAD");
    expect(head).toMatchObject({ status: 200, body: "" });
    for (const [path, method] of [
      ["/", "GET"],
      ["/metrics/x", "GET"],
      ["/metrics", "POST"],
    ] as const) {
      expect((await get(listener.url.replace("/metrics", path), method)).status).toBe(404);
    }
  });

  it("answers 503 when the metrics cannot be gathered, and reports why", async () => {
    const errors: unknown[] = [];
    const listener = await serveMetrics({
      host: "127.0.0.1",
      port: 0,
      text: () => Promise.reject(new Error("worker 2 did not send its metrics within 3000 ms")),
      onError: (err) => errors.push(err),
    });
    listeners.push(listener);
    const res = await get(listener.url);
    expect(res.status).toBe(503);
    expect(res.body).toContain("worker 2 did not send its metrics");
    expect(errors).toHaveLength(1);
  });

  it("refuses a port already in use", async () => {
    const first = await serveMetrics({ host: "127.0.0.1", port: 0, text: async () => "" });
    listeners.push(first);
    const port = Number(new URL(first.url).port);
    await expect(serveMetrics({ host: "127.0.0.1", port, text: async () => "" })).rejects.toMatchObject({
      code: "EADDRINUSE",
    });
  });
});

describe("the Grafana dashboard (deploy/grafana-dashboard.json)", () => {
  // The repository's root: the nearest folder above with deploy/ (two up from here, more from the copy
  // of server/ that a mutation run tests in).
  let root = new URL("../../", import.meta.url);
  while (!existsSync(new URL("deploy/grafana-dashboard.json", root)) && root.pathname !== "/") {
    root = new URL("../", root);
  }

  it("queries only series the server exports", async () => {
    const dashboard = JSON.parse(readFileSync(new URL("deploy/grafana-dashboard.json", root), "utf8")) as {
      panels: { targets: { expr: string }[] }[];
    };
    const queried = new Set(
      dashboard.panels.flatMap((p) =>
        p.targets.flatMap((t) => [...t.expr.matchAll(/\b((?:payments|process|nodejs)_\w+)/g)].map((m) => m[1])),
      ),
    );
    expect(queried.size).toBeGreaterThan(10);
    // Every labelled series exists once something was counted in it.
    const m = createMetrics({ outboxDepth: async () => ({ eventsPending: 0, deliveriesDue: 0 }) });
    m.requests.request("getCharge", 200, 0.01);
    m.requests.replayed("createCharge");
    m.requests.rateLimited("key");
    m.observer.chargeStatus("captured", true);
    m.observer.webhookAttempt({ outcome: "succeeded", livemode: true, lagSeconds: 1 });
    m.observer.webhookDeliveryFailed(true);
    m.observer.webhookEndpointDisabled("gone", true);
    const exported = new Set([...(await m.text()).matchAll(/^(\w+)[{ ]/gm)].map((x) => x[1]));
    expect([...queried].filter((name) => !exported.has(name))).toEqual([]);
  });
});
