import { describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.ts";

// Graceful shutdown (RunningServer.close, what SIGTERM runs): no new connections, readiness 503,
// requests and background-job runs under way finish, and only then is the store closed; whatever is
// still running after SHUTDOWN_TIMEOUT_SECONDS is cut.

/** A promise and the function that settles it. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** Records when the store is closed, in the same list as the events the test cares about. */
function recordStoreClose(server: TestServer, order: string[]) {
  const store = server.running.store;
  const close = store.close.bind(store);
  store.close = async () => {
    order.push("store closed");
    await close();
  };
}

describe("graceful shutdown", () => {
  it("lets a slow request finish, refuses new connections, and closes the store last", async () => {
    const server = await startTestServer({ SHUTDOWN_TIMEOUT_SECONDS: "30" });
    const order: string[] = [];
    recordStoreClose(server, order);
    const entered = gate();
    const release = gate();
    const merchants = server.running.domain.merchants;
    const list = merchants.list;
    merchants.list = async (...args: Parameters<typeof list>) => {
      entered.open();
      await release.opened;
      return list(...args);
    };

    server.running.server.on("request", (_req, res) => {
      res.on("finish", () => order.push(`response sent ${res.statusCode}`));
    });

    const slow = fetch(`${server.url}/v1/merchants`, {
      headers: { authorization: `Bearer ${server.sandboxKey}` },
    }).then((res) => res.json());
    await entered.opened;
    const closing = server.close().then(() => order.push("close resolved"));

    // While draining: readiness says no, and nothing new gets in.
    await expect(server.running.domain.health.ready()).rejects.toMatchObject({ code: "service_unavailable" });
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    expect(order).toEqual([]);

    release.open();
    expect(await slow).toMatchObject({ object: "list" });
    await closing;
    expect(order).toEqual(["response sent 200", "store closed", "close resolved"]);
  });

  it("waits for a background-job run under way before closing the store", async () => {
    const server = await startTestServer({ JOBS_INTERVAL_SECONDS: "1", SHUTDOWN_TIMEOUT_SECONDS: "30" });
    const order: string[] = [];
    recordStoreClose(server, order);
    const entered = gate();
    const release = gate();
    const jobs = server.running.domain.jobs;
    const expire = jobs.expire;
    jobs.expire = async () => {
      entered.open();
      await release.opened;
      const result = await expire();
      order.push("job run finished");
      return result;
    };
    await entered.opened; // the next scheduled run, within a second
    const stoppedListening = new Promise((resolve) => server.running.server.once("close", resolve));
    const closing = server.close();
    await stoppedListening;
    // Everything else close() does runs in memory here: a close that did not wait for the job would
    // have reached the store within these turns of the event loop.
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    release.open();
    await closing;
    expect(order).toEqual(["job run finished", "store closed"]);
  });

  it("cuts what is still running once SHUTDOWN_TIMEOUT_SECONDS is over (here at once), and still closes", async () => {
    const server = await startTestServer({ SHUTDOWN_TIMEOUT_SECONDS: "0" });
    const order: string[] = [];
    recordStoreClose(server, order);
    const entered = gate();
    server.running.domain.merchants.list = async () => {
      entered.open();
      return new Promise(() => {}); // never answers
    };
    const stuck = fetch(`${server.url}/v1/merchants`, { headers: { authorization: `Bearer ${server.sandboxKey}` } });
    await entered.opened;
    await server.close();
    await expect(stuck).rejects.toThrow();
    expect(order).toEqual(["store closed"]);
  });
});
