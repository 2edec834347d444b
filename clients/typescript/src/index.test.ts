import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  createPaymentsClient,
  MAX_RETRY_AFTER_MS,
  PaymentsApiError,
  type PaymentsClientOptions,
  type Problem,
  unwrap,
} from "./index.ts";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** Answers request n (0-based) with `script[n]`, or the last entry once the script runs out. */
type Step = (res: ServerResponse, req: IncomingMessage) => void;

const servers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A real HTTP server on 127.0.0.1 and a port the OS picks, recording every request. */
async function serve(...script: Step[]): Promise<{ baseUrl: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const n = seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const step = script[Math.min(n, script.length) - 1];
      if (!step) throw new Error("serve() needs at least one step");
      step(res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push({
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  });
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, seen };
}

const merchant = {
  id: "mch_4fQx9ZkT2mB7rLp1WcYd8sNa",
  object: "merchant",
  name: "Acme",
  status: "active",
  metadata: {},
  livemode: false,
  created_at: "2026-11-21T10:15:30Z",
  updated_at: "2026-11-21T10:15:30Z",
};

function problem(status: number, code: Problem["code"]): Problem {
  return { type: `https://docs.payments.dev/errors/${code}`, title: code, status, code, request_id: "req_body" };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Step =>
  (res) => {
    const problemBody = status >= 400;
    res.writeHead(status, {
      "Content-Type": problemBody ? "application/problem+json" : "application/json",
      "Request-Id": "req_header",
      ...headers,
    });
    res.end(JSON.stringify(body));
  };

/** Drops the connection without an answer: fetch sees a network error. */
const reset: Step = (_res, req) => req.socket.destroy();

/** Records the delays instead of waiting them, so retry tests assert delays without timing anything. */
function options(baseUrl: string, extra: Partial<PaymentsClientOptions> = {}) {
  const delays: number[] = [];
  const opts: PaymentsClientOptions = {
    apiKey: "key_test_abc",
    baseUrl,
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    ...extra,
  };
  return { opts, delays };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const create = { name: "Acme", status: "active" } as const;

describe("createPaymentsClient", () => {
  it("sends the key as a bearer token and no Idempotency-Key on GET", async () => {
    const { baseUrl, seen } = await serve(json(200, merchant));
    const client = createPaymentsClient(options(baseUrl).opts);
    const { data } = await client.GET("/v1/merchants/{id}", { params: { path: { id: merchant.id } } });
    expect(data).toEqual(merchant);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url).toBe(`/v1/merchants/${merchant.id}`);
    expect(seen[0]?.headers.authorization).toBe("Bearer key_test_abc");
    expect(seen[0]?.headers["idempotency-key"]).toBeUndefined();
  });

  it("sends given headers in place of a key (a console session) and no Authorization then", async () => {
    const { baseUrl, seen } = await serve(json(200, merchant), json(201, merchant));
    const client = createPaymentsClient({ baseUrl, headers: { "X-CSRF-Token": "csrf" }, maxRetries: 0 });
    await client.GET("/v1/merchants/{id}", { params: { path: { id: merchant.id } } });
    await client.POST("/v1/merchants", { body: create });
    expect(seen.map((s) => s.headers["x-csrf-token"])).toEqual(["csrf", "csrf"]);
    expect(seen.map((s) => s.headers.authorization)).toEqual([undefined, undefined]);
    expect(seen[1]?.headers["idempotency-key"]).toMatch(UUID);
  });

  it("adds a fresh Idempotency-Key to each POST", async () => {
    const { baseUrl, seen } = await serve(json(201, merchant));
    const client = createPaymentsClient(options(baseUrl).opts);
    await client.POST("/v1/merchants", { body: create });
    await client.POST("/v1/merchants", { body: create });
    const keys = seen.map((s) => s.headers["idempotency-key"]);
    expect(keys[0]).toMatch(UUID);
    expect(keys[1]).toMatch(UUID);
    expect(keys[0]).not.toBe(keys[1]);
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual(create);
  });

  it("keeps the caller's Idempotency-Key", async () => {
    const { baseUrl, seen } = await serve(json(201, merchant));
    const client = createPaymentsClient(options(baseUrl).opts);
    await client.POST("/v1/merchants", { params: { header: { "Idempotency-Key": "order-42" } }, body: create });
    expect(seen[0]?.headers["idempotency-key"]).toBe("order-42");
  });

  it("uses the idempotencyKey generator", async () => {
    const { baseUrl, seen } = await serve(json(201, merchant));
    const client = createPaymentsClient(options(baseUrl, { idempotencyKey: () => "generated-1" }).opts);
    await client.POST("/v1/merchants", { body: create });
    expect(seen[0]?.headers["idempotency-key"]).toBe("generated-1");
  });

  it.each([
    [503, "internal_error"],
    [429, "rate_limited"],
    [409, "idempotency_request_in_progress"],
  ] as const)("retries a %i with the same key and body, then succeeds", async (status, code) => {
    const { baseUrl, seen } = await serve(json(status, problem(status, code)), json(201, merchant));
    const { opts, delays } = options(baseUrl);
    const client = createPaymentsClient(opts);
    const { data, error } = await client.POST("/v1/merchants", { body: create });
    expect(error).toBeUndefined();
    expect(data).toEqual(merchant);
    expect(seen).toHaveLength(2);
    expect(seen[0]?.headers["idempotency-key"]).toMatch(UUID);
    expect(seen[1]?.headers["idempotency-key"]).toBe(seen[0]?.headers["idempotency-key"]);
    expect(seen[1]?.body).toBe(seen[0]?.body);
    // Full jitter: random() · min(8 s, 500 ms · 2ⁿ), with random() fixed at 0.5.
    expect(delays).toEqual([250]);
  });

  it.each(["merchant_inactive", "invalid_state_transition", "idempotency_replay_unavailable"] as const)(
    "does not retry a 409 %s: it is final",
    async (code) => {
      const { baseUrl, seen } = await serve(json(409, problem(409, code)), json(201, merchant));
      const { opts, delays } = options(baseUrl);
      const client = createPaymentsClient(opts);
      const { data, error } = await client.POST("/v1/merchants", { body: create });
      expect(data).toBeUndefined();
      expect(error).toEqual(problem(409, code));
      expect(seen).toHaveLength(1);
      expect(delays).toEqual([]);
    },
  );

  it("gives up after maxRetries and returns the last problem, keeping one key throughout", async () => {
    const { baseUrl, seen } = await serve(json(503, problem(503, "internal_error")));
    const { opts, delays } = options(baseUrl, { random: () => 0.999 });
    const client = createPaymentsClient(opts);
    const { data, error, response } = await client.POST("/v1/merchants", { body: create });
    expect(data).toBeUndefined();
    expect(response.status).toBe(503);
    expect(error).toEqual(problem(503, "internal_error"));
    expect(seen).toHaveLength(3);
    expect(seen[0]?.headers["idempotency-key"]).toMatch(UUID);
    expect(new Set(seen.map((s) => s.headers["idempotency-key"])).size).toBe(1);
    expect(delays).toEqual([499, 999]);
  });

  it("honours maxRetries", async () => {
    const { baseUrl, seen } = await serve(json(429, problem(429, "rate_limited")));
    const client = createPaymentsClient(options(baseUrl, { maxRetries: 4 }).opts);
    await client.GET("/v1/merchants");
    expect(seen).toHaveLength(5);
    const none = await serve(json(429, problem(429, "rate_limited")));
    await createPaymentsClient(options(none.baseUrl, { maxRetries: 0 }).opts).GET("/v1/merchants");
    expect(none.seen).toHaveLength(1);
  });

  it("retries a dropped connection with the same key", async () => {
    const { baseUrl, seen } = await serve(reset, json(201, merchant));
    const { opts, delays } = options(baseUrl);
    const { data } = await createPaymentsClient(opts).POST("/v1/merchants", { body: create });
    expect(data).toEqual(merchant);
    expect(seen).toHaveLength(2);
    expect(seen[0]?.headers["idempotency-key"]).toMatch(UUID);
    expect(seen[1]?.headers["idempotency-key"]).toBe(seen[0]?.headers["idempotency-key"]);
    expect(delays).toEqual([250]);
  });

  it("rejects with the network error once the retries are spent", async () => {
    const { baseUrl, seen } = await serve(reset);
    const client = createPaymentsClient(options(baseUrl).opts);
    await expect(client.GET("/v1/merchants")).rejects.toBeInstanceOf(TypeError);
    expect(seen).toHaveLength(3);
  });

  it("retries an attempt that exceeds timeoutMs", async () => {
    // The first request is never answered; closeAllConnections() in afterEach ends it.
    const { baseUrl, seen } = await serve(() => {}, json(200, merchant));
    const client = createPaymentsClient(options(baseUrl, { timeoutMs: 100 }).opts);
    const { data } = await client.GET("/v1/merchants/{id}", { params: { path: { id: merchant.id } } });
    expect(data).toEqual(merchant);
    expect(seen).toHaveLength(2);
  });

  it("does not retry when the caller aborts", async () => {
    let arrived: () => void = () => {};
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const { baseUrl, seen } = await serve(() => arrived());
    const controller = new AbortController();
    const call = createPaymentsClient(options(baseUrl).opts).GET("/v1/merchants", { signal: controller.signal });
    await arrival;
    controller.abort();
    await expect(call).rejects.toThrow();
    expect(seen).toHaveLength(1);
  });

  it.each([
    ["3", 3_000],
    ["0", 0],
    ["3600", MAX_RETRY_AFTER_MS],
  ])("waits Retry-After: %s seconds (%i ms)", async (header, expected) => {
    const { baseUrl } = await serve(
      json(429, problem(429, "rate_limited"), { "Retry-After": header }),
      json(200, merchant),
    );
    const { opts, delays } = options(baseUrl);
    await createPaymentsClient(opts).GET("/v1/merchants/{id}", { params: { path: { id: merchant.id } } });
    expect(delays).toEqual([expected]);
  });

  it("waits until a Retry-After HTTP date", async () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    const { baseUrl } = await serve(
      json(503, problem(503, "internal_error"), { "Retry-After": "Sat, 21 Nov 2026 10:00:07 GMT" }),
      json(200, merchant),
    );
    const { opts, delays } = options(baseUrl, { now: () => now });
    await createPaymentsClient(opts).GET("/v1/merchants/{id}", { params: { path: { id: merchant.id } } });
    expect(delays).toEqual([7_000]);
  });

  it("falls back to backoff when Retry-After is unreadable", async () => {
    const { baseUrl } = await serve(
      json(503, problem(503, "internal_error"), { "Retry-After": "soon" }),
      json(200, {}),
    );
    const { opts, delays } = options(baseUrl);
    await createPaymentsClient(opts).GET("/v1/merchants");
    expect(delays).toEqual([250]);
  });

  it.each([
    [400, "invalid_request"],
    [404, "not_found"],
    [422, "idempotency_key_reused"],
  ] as const)("does not retry a %i and types its problem", async (status, code) => {
    const { baseUrl, seen } = await serve(json(status, problem(status, code)));
    const { opts, delays } = options(baseUrl);
    const { data, error } = await createPaymentsClient(opts).POST("/v1/merchants", { body: create });
    expect(seen).toHaveLength(1);
    expect(delays).toEqual([]);
    expect(data).toBeUndefined();
    // `error` is typed as the problem: its fields are reachable without casts.
    expect(error?.code).toBe(code);
    expect(error?.status).toBe(status);
  });
});

describe("unwrap and PaymentsApiError", () => {
  it("returns the data of a success", async () => {
    const { baseUrl } = await serve(json(201, merchant));
    const created = unwrap(await createPaymentsClient(options(baseUrl).opts).POST("/v1/merchants", { body: create }));
    expect(created.id).toBe(merchant.id);
  });

  it("throws the problem with status and request id", async () => {
    const { baseUrl } = await serve(json(404, { ...problem(404, "not_found"), detail: "No merchant mch_x." }));
    const client = createPaymentsClient(options(baseUrl).opts);
    const result = await client.GET("/v1/merchants/{id}", { params: { path: { id: "mch_x" } } });
    let thrown: unknown;
    try {
      unwrap(result);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(PaymentsApiError);
    const error = thrown as PaymentsApiError;
    expect(error.status).toBe(404);
    expect(error.code).toBe("not_found");
    expect(error.problem?.detail).toBe("No merchant mch_x.");
    expect(error.requestId).toBe("req_header");
    expect(error.message).toBe("404 not_found: No merchant mch_x.");
  });

  it("takes the request id from the problem when the header is absent, and survives a non-problem body", async () => {
    const noHeader = await serve((res) => {
      res.writeHead(404, { "Content-Type": "application/problem+json" });
      res.end(JSON.stringify(problem(404, "not_found")));
    });
    const result = await createPaymentsClient(options(noHeader.baseUrl).opts).GET("/v1/merchants");
    expect(() => unwrap(result)).toThrow(expect.objectContaining({ requestId: "req_body" }));

    const html = await serve((res) => {
      res.writeHead(502, { "Content-Type": "text/html" });
      res.end("<h1>Bad gateway</h1>");
    });
    const gateway = await createPaymentsClient(options(html.baseUrl, { maxRetries: 0 }).opts).GET("/v1/merchants");
    expect(() => unwrap(gateway)).toThrow(
      expect.objectContaining({ name: "PaymentsApiError", status: 502, problem: undefined, requestId: undefined }),
    );
  });
});
