import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { cardBody } from "../e2e/fixtures.ts";
import { childEnv, linesOf, SERVER_DIR, type ServerProcess, spawnServer } from "../support/process.ts";

// The Prometheus metrics (docs/operating.md "Metrics"), scraped as an operator's Prometheus would: on
// their own listen address (METRICS_PORT), never on the API's port, with one server process and with a
// cluster of two, whose primary serves the sum of both workers' counts.

const run = promisify(execFile);
const SECRET = /key_test_[0-9A-Za-z]{32}/;
const tmp = mkdtempSync(join(tmpdir(), "payments-metrics-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One request on a new connection (no keep-alive), so a cluster hands each to the next worker in turn. */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent: false,
        method: options.method ?? "GET",
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The metrics listener's address, from its "metrics listening" log line. */
async function metricsUrl(server: ServerProcess): Promise<string> {
  let url: string | undefined;
  await expect
    .poll(
      () => {
        for (const line of linesOf(server.stdout())) {
          if (!line.startsWith("{")) continue;
          const parsed = JSON.parse(line) as { msg?: string; url?: string };
          if (parsed.msg === "metrics listening") url = parsed.url;
        }
        return url;
      },
      { timeout: 30_000 },
    )
    .toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  return url as string;
}

/** The value of one series in a scrape, or undefined when the scrape has no such series. */
function sample(scrape: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of scrape.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.keys(found).length !== Object.keys(labels).length) continue;
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

const requests = (operation: string, status: number): Omit<Expected, "value"> => ({
  name: "payments_http_request_duration_seconds_count",
  labels: { operation, status: String(status) },
});

/** One series of a scrape and the value it must show. */
interface Expected {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Sends a known mix of requests and returns the count each series must show. */
async function traffic(url: string, secret: string): Promise<Expected[]> {
  const auth = { authorization: `Bearer ${secret}` };
  const merchant = await send(`${url}/v1/merchants`, { method: "POST", headers: auth, body: { name: "Metrics Ltd" } });
  expect(merchant.status).toBe(201);
  const { id } = JSON.parse(merchant.body) as { id: string };
  for (let i = 0; i < 7; i++) expect((await send(`${url}/v1/merchants/${id}`, { headers: auth })).status).toBe(200);
  for (let i = 0; i < 3; i++) {
    expect((await send(`${url}/v1/merchants/mch_000000000000000000000000`, { headers: auth })).status).toBe(404);
  }
  // Refused before the contract's validator sees them: still counted under their operation.
  for (let i = 0; i < 2; i++) expect((await send(`${url}/v1/merchants/${id}`)).status).toBe(401);
  // The same Idempotency-Key twice: one change, one replay.
  const keyed = { ...auth, "idempotency-key": randomBytes(8).toString("hex") };
  for (let i = 0; i < 2; i++) {
    const res = await send(`${url}/v1/merchants`, { method: "POST", headers: keyed, body: { name: "Once Ltd" } });
    expect(res.status).toBe(201);
  }
  // A captured card charge: one charge outcome.
  const token = await send(`${url}/v1/tokens`, { method: "POST", headers: auth, body: cardBody() });
  expect(token.status).toBe(200);
  const charge = await send(`${url}/v1/charges`, {
    method: "POST",
    headers: auth,
    body: {
      merchant_id: id,
      amount: 2500,
      currency: "USD",
      payment_method: { type: "card", token: (JSON.parse(token.body) as { id: string }).id },
    },
  });
  expect(charge.status).toBe(201);
  // Not an operation: counted, under `other`, never under its path.
  expect((await send(`${url}/no/such/page`)).status).toBe(404);
  return [
    { ...requests("createMerchant", 201), value: 3 },
    { ...requests("getMerchant", 200), value: 7 },
    { ...requests("getMerchant", 404), value: 3 },
    { ...requests("getMerchant", 401), value: 2 },
    { ...requests("createToken", 200), value: 1 },
    { ...requests("createCharge", 201), value: 1 },
    { ...requests("other", 404), value: 1 },
    { name: "payments_idempotent_replays_total", labels: { operation: "createMerchant" }, value: 1 },
    { name: "payments_charge_outcomes_total", labels: { status: "captured", environment: "sandbox" }, value: 1 },
  ];
}

async function scrape(url: string): Promise<string> {
  const res = await send(url);
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.body;
}

async function expectCounts(url: string, expected: Expected[]) {
  // A request is counted when its answer has been handed to the network, so the last one may be
  // counted a moment after its client read it: poll until every series shows its count.
  await expect
    .poll(async () => {
      const text = await scrape(url);
      return expected.map((e) => ({ ...e, value: sample(text, e.name, e.labels) }));
    })
    .toEqual(expected);
}

describe("metrics", { timeout: 90_000 }, () => {
  it("are served on their own address in production, never on the API's port, and count every request exactly", async () => {
    const env = {
      NODE_ENV: "production",
      PORT: "0",
      METRICS_PORT: "0",
      WORKERS: "1",
      DATA_DIR: join(tmp, "one"),
      VAULT_MASTER_KEY: randomBytes(32).toString("base64"),
      VAULT_FINGERPRINT_KEY: randomBytes(32).toString("base64"),
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: "1000",
    };
    const server = spawnServer(env);
    try {
      const url = await server.listening;
      const metrics = await metricsUrl(server);
      // The public port has no metrics, with or without a key.
      expect((await send(`${url}/metrics`)).status).toBe(404);
      // Production writes no secret to its log stream (stdout, no terminal here): the first key is the
      // admin CLI's, as an operator makes it (docs/operating.md "Operating the server").
      expect(server.stdout()).not.toMatch(SECRET);
      const made = await run(
        process.execPath,
        ["--import", "tsx", "src/cli.ts", "create-key", "--name", "metrics", "--scopes", "*"],
        { cwd: SERVER_DIR, env: childEnv({ ...env, LOG_LEVEL: "silent" }) },
      );
      const secret = (SECRET.exec(made.stdout) as RegExpExecArray)[0];
      expect((await send(`${url}/metrics`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(404);
      // The metrics listener serves /metrics and nothing else.
      expect((await send(metrics.replace(/\/metrics$/, "/"))).status).toBe(404);

      const expected = await traffic(url, secret);
      // The two GET /metrics on the API's port above were requests too.
      const other = expected.find((e) => e.labels.operation === "other") as Expected;
      other.value += 2;
      await expectCounts(metrics, expected);
      // The dispatcher fans every event out (there is no endpoint to deliver to): the backlog empties.
      await expect
        .poll(async () => {
          const text = await scrape(metrics);
          return ["events_pending", "deliveries_due"].map((queue) =>
            sample(text, "payments_webhook_outbox_depth", { queue }),
          );
        })
        .toEqual([0, 0]);
      const text = await scrape(metrics);
      expect(text).toMatch(/^process_cpu_seconds_total \d/m);
      expect(text).not.toContain("/v1/merchants");
    } finally {
      const exit = await server.stop("SIGTERM");
      expect(exit.code, server.stderr()).toBe(0);
    }
  });

  it("a busy METRICS_PORT stops the start with one line naming it, one process or a cluster", async () => {
    const blocker: Server = createServer();
    await new Promise<void>((done) => blocker.listen(0, "127.0.0.1", done));
    const { port } = blocker.address() as { port: number };
    try {
      for (const workers of ["1", "2"]) {
        const server = spawnServer({
          PORT: "0",
          METRICS_PORT: String(port),
          WORKERS: workers,
          DATA_DIR: join(tmp, `busy${workers}`),
        });
        const exit = await server.exited;
        expect(exit.code, server.stderr()).toBe(1);
        expect(linesOf(server.stderr())).toEqual([
          `METRICS_PORT: ${port} is already in use on 127.0.0.1; stop what holds it or set METRICS_PORT to a free port`,
        ]);
        // Nothing was started: no sandbox key was made.
        expect(server.stdout()).not.toMatch(SECRET);
      }
    } finally {
      await new Promise((done) => blocker.close(done));
    }
  });

  it("counts the requests of both workers of a cluster exactly in one scrape of the primary", async () => {
    const server = spawnServer({
      PORT: "0",
      METRICS_PORT: "0",
      WORKERS: "2",
      DATA_DIR: join(tmp, "two"),
      RATE_LIMIT_TEST_PER_SECOND: "1000",
    });
    try {
      const url = await server.listening;
      const metrics = await metricsUrl(server);
      await expect
        .poll(() => linesOf(server.stdout()).filter((l) => l.includes('"payments API listening"')).length, {
          timeout: 30_000,
        })
        .toBe(2);
      await expect.poll(() => server.stdout(), { timeout: 10_000 }).toMatch(SECRET);
      const secret = (SECRET.exec(server.stdout()) as RegExpExecArray)[0];
      const expected = await traffic(url, secret);
      // Both workers answered some of them (each connection went to the next worker in turn).
      const workers = new Set(
        linesOf(server.stdout())
          .filter((l) => l.includes('"msg":"request"'))
          .map((l) => (JSON.parse(l) as { worker?: number }).worker),
      );
      expect(workers).toEqual(new Set([1, 2]));
      await expectCounts(metrics, expected);
      // Both workers' process metrics are in the sum, the store's backlog is read once.
      const text = await scrape(metrics);
      expect(text).toMatch(/^nodejs_heap_size_total_bytes \d/m);
      expect(sample(text, "payments_webhook_outbox_depth", { queue: "deliveries_due" })).toBe(0);
    } finally {
      const exit = await server.stop("SIGTERM");
      expect(exit.code, server.stderr()).toBe(0);
    }
  });
});
