import { mkdtempSync, rmSync } from "node:fs";
import { get } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alive, children, linesOf, spawnServer } from "../support/process.ts";

// One server per core (docs/operating.md "Production", WORKERS): `npm start` with WORKERS=2 is a cluster primary
// with two server processes on one port and one store. Run here with WORKERS set explicitly (the
// default is one per core in production only); every log line of a worker carries its `worker` id,
// which is how these tests see which process answered. A busy port, the first start's key and a clean
// stop with WORKERS=2 are in startup.test.ts, which runs them with WORKERS=1 and 2.

const SECRET = /key_test_[0-9A-Za-z]{32}/g;
const tmp = mkdtempSync(join(tmpdir(), "payments-workers-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A GET on a new connection (no keep-alive), so the cluster hands each to the next worker in turn. */
function getOnce(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
  });
}

/** The parsed JSON log lines of a process's stdout. */
function logLines(stdout: string): Record<string, unknown>[] {
  return linesOf(stdout)
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("WORKERS=2", { timeout: 90_000 }, () => {
  it("answers from both workers on one port and one store, makes one sandbox key, and stops both on SIGTERM", async () => {
    const server = spawnServer({ PORT: "0", DATA_DIR: join(tmp, "data"), WORKERS: "2" });
    let workerPids: number[] = [];
    try {
      const url = await server.listening;
      await expect
        .poll(() => logLines(server.stdout()).filter((l) => l.msg === "payments API listening").length, {
          timeout: 30_000,
        })
        .toBe(2);
      const listening = logLines(server.stdout()).filter((l) => l.msg === "payments API listening");
      expect(new Set(listening.map((l) => l.worker))).toEqual(new Set([1, 2]));
      expect(new Set(listening.map((l) => l.url))).toEqual(new Set([url]));
      // The first start's key is made once for the store, by one worker.
      await expect.poll(() => server.stdout(), { timeout: 10_000 }).toMatch(SECRET);
      const secrets = new Set(server.stdout().match(SECRET));
      expect(secrets.size).toBe(1);
      const [secret] = [...secrets] as [string];
      const auth = { authorization: `Bearer ${secret}` };

      // A merchant made through one worker is read through both (one store).
      const created = await fetch(`${url}/v1/merchants`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ name: "Two Workers Ltd" }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      for (let i = 0; i < 8; i++) {
        const res = await getOnce(`${url}/v1/merchants/${id}`, auth);
        expect(res.status).toBe(200);
        expect(JSON.parse(res.body)).toMatchObject({ id, name: "Two Workers Ltd" });
      }
      await expect
        .poll(
          () =>
            new Set(
              logLines(server.stdout())
                .filter((l) => l.msg === "request" && l.path === `/v1/merchants/${id}`)
                .map((l) => l.worker),
            ),
          { timeout: 10_000 },
        )
        .toEqual(new Set([1, 2]));
      workerPids = children(server.child.pid as number);
      expect(workerPids).toHaveLength(2);
    } finally {
      const exit = await server.stop("SIGTERM");
      expect(exit.code, server.stderr()).toBe(0);
    }
    const lines = logLines(server.stdout());
    expect(new Set(lines.filter((l) => l.msg === "stopped" && l.worker !== undefined).map((l) => l.worker))).toEqual(
      new Set([1, 2]),
    );
    for (const pid of workerPids) expect(alive(pid)).toBe(false);
  });

  it("replaces a worker that dies, and drains each worker once when the whole group gets SIGTERM", async () => {
    const server = spawnServer({
      PORT: "0",
      DATA_DIR: join(tmp, "respawn"),
      WORKERS: "2",
      SHUTDOWN_TIMEOUT_SECONDS: "2",
    });
    const listening = () => logLines(server.stdout()).filter((l) => l.msg === "payments API listening");
    try {
      const url = await server.listening;
      await expect.poll(() => listening().length, { timeout: 30_000 }).toBe(2);
      const primary = server.child.pid as number;
      const [victim] = children(primary);
      expect(victim).toBeDefined();
      process.kill(victim as number, "SIGKILL");
      // A third worker takes its place, on the same port.
      await expect.poll(() => listening().map((l) => l.worker), { timeout: 30_000 }).toContain(3);
      expect(listening().find((l) => l.worker === 3)?.url).toBe(url);
      await expect.poll(() => children(primary).length, { timeout: 10_000 }).toBe(2);
      expect((await getOnce(`${url}/healthz`)).status).toBe(200);

      // A service manager stopping the unit signals every process of it (systemd's default
      // KillMode=control-group): the workers hear SIGTERM and then the primary's request, and must
      // take it as one shutdown, not as a second signal that cuts the drain.
      // A request whose body never comes keeps one worker draining until SHUTDOWN_TIMEOUT_SECONDS, long
      // after the primary's request has arrived too. Its 100 Continue says a worker has it.
      const pending = connect(Number(new URL(url).port), "127.0.0.1");
      pending.on("error", () => {});
      const cut = new Promise<void>((done) => pending.once("close", () => done()));
      const continued = new Promise<string>((done) => pending.once("data", (chunk) => done(String(chunk))));
      pending.write(
        "POST /v1/merchants HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          "Content-Length: 100\r\nExpect: 100-continue\r\n\r\n",
      );
      expect(await continued).toMatch(/^HTTP\/1\.1 100 Continue/);
      const pids = [primary, ...children(primary)];
      for (const pid of pids) process.kill(pid, "SIGTERM");
      const exit = await server.exited;
      expect(exit.code, server.stdout() + server.stderr()).toBe(0);
      const lines = logLines(server.stdout());
      expect(lines.filter((l) => String(l.msg).startsWith("second signal"))).toEqual([]);
      expect(new Set(lines.filter((l) => l.msg === "stopped" && l.worker !== undefined).map((l) => l.worker))).toEqual(
        new Set([2, 3]),
      );
      for (const pid of pids) expect(alive(pid)).toBe(false);
      await cut;
    } finally {
      await server.stop("SIGKILL");
    }
  });

  it("stops cleanly on SIGTERM while the other workers are still starting", async () => {
    // The first worker listens before the primary forks the second, which then needs a second or more
    // to load: a shutdown in that window must still end every process, and with 0.
    const server = spawnServer({ PORT: "0", DATA_DIR: join(tmp, "early"), WORKERS: "2" });
    try {
      const url = await server.listening;
      expect((await getOnce(`${url}/healthz`)).status).toBe(200);
      const exit = await server.stop();
      expect(exit.code, server.stdout() + server.stderr()).toBe(0);
    } finally {
      await server.stop("SIGKILL");
    }
  });
});
