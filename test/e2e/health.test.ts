import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.ts";

// The health probes (spec/resources/health.tsp: getLiveness, getReadiness) and GET /: public, and
// kept out of the request log, which a load balancer's polling would otherwise fill.

describe("health probes and the home page", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it("answers liveness without a key and without touching the store", async () => {
    const store = server.running.store;
    const { get, ready } = store;
    store.get = () => Promise.reject(new Error("the store must not be asked"));
    store.ready = () => Promise.reject(new Error("the store must not be asked"));
    try {
      const res = await fetch(`${server.url}/healthz`);
      expect(res.status).toBe(200);
      expect(res.headers.get("request-id")).toMatch(/^req_/);
      expect(await res.json()).toEqual({ status: "ok" });
    } finally {
      store.get = get;
      store.ready = ready;
    }
  });

  it("answers readiness 200 while the store answers", async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", checks: { store: "ok" } });
  });

  it("answers readiness 503 (a problem) when the store fails or does not answer in time", async () => {
    // Readiness asks the store whether it takes writes (store/port.ts StoreReadiness).
    const store = server.running.store;
    const ready = store.ready;
    try {
      store.ready = () => Promise.reject(new Error("connection reset by 10.0.0.7"));
      const failing = await fetch(`${server.url}/readyz`);
      expect(failing.status).toBe(503);
      expect(failing.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const problem = (await failing.json()) as { code: string; detail: string };
      expect(problem).toMatchObject({ code: "service_unavailable", status: 503 });
      expect(problem.detail).not.toContain("10.0.0.7"); // the driver's words go to the log only

      store.ready = () => new Promise(() => {});
      const hanging = await fetch(`${server.url}/readyz`);
      expect(hanging.status).toBe(503);
      expect(await hanging.json()).toMatchObject({ detail: "The store did not answer within 2 seconds." });
    } finally {
      store.ready = ready;
    }
  });

  it("keeps health requests out of the request log", async () => {
    for (let i = 0; i < 3; i++) {
      await (await fetch(`${server.url}/healthz`)).body?.cancel();
      await (await fetch(`${server.url}/readyz`)).body?.cancel();
    }
    // An ordinary request, whose record shows that the log is being written.
    const marker = await fetch(`${server.url}/v1/merchants?limit=1`, {
      headers: { authorization: `Bearer ${server.sandboxKey}` },
    });
    const requestId = marker.headers.get("request-id") ?? "";
    await marker.body?.cancel();
    await expect.poll(() => server.running.store.get("request_log", requestId), { timeout: 5_000 }).not.toBeNull();
    const logged = await server.running.store.findAll("request_log", {}, 100);
    expect(logged.map((r) => r.path).filter((p) => p === "/healthz" || p === "/readyz")).toEqual([]);
  });

  it("answers GET / with where to go: the API, the reference, the console and the probes", async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      api: "/v1",
      docs: "/docs",
      console: "/console",
      health: { liveness: "/healthz", readiness: "/readyz" },
    });
  });
});
