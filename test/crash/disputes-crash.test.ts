import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig, openStore, startServer, verifyLedger } from "@payments/server";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { eventually } from "../support/eventually.ts";
import { alive, children } from "../support/process.ts";

// A dispute's money across kill -9 (issue 31): the server runs as its own process on a file-backed SQLite
// store and kills itself right after its n-th committed change, before answering
// (TEST_CRASH_AFTER_COMMITS), while chargebacks are opened (POST /v1/sandbox/charges/{id}/dispute: the
// amount and fee withdrawn) and decided (POST /v1/sandbox/disputes/{id}/resolve: won gives the amount
// back), each with an Idempotency-Key. After each restart every unanswered request is retried with its
// key until it gets an answer. Then: one dispute per charge, exactly one `dispute` and one `fee` posting
// per dispute and one `dispute_reversal` per won one (0 double movements), every request succeeded, and
// `ledger verify` reports 0 differences.

const KILLS = Number(process.env.CRASH_KILLS ?? 6);
const FEE = 1500;
let seed = Number(process.env.CRASH_SEED ?? 20261127);
function random(): number {
  // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../server");
const dataDir = mkdtempSync(join(tmpdir(), "payments-dispute-crash-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const { BASE_URL: _vite, ...env } = process.env;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}
interface Op {
  kind: "open" | "resolve";
  key: string;
  path: string;
  body: Record<string, unknown>;
  answer?: Answer;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe("a dispute's money across kill -9", { timeout: 600_000 }, () => {
  it(`moves no money twice across ${KILLS} crashes while disputes are opened and decided`, async () => {
    const config = { PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "silent", DISPUTE_FEES: JSON.stringify({ USD: FEE }) };
    // Set up in-process on the same data directory: the bootstrap key, a merchant and captured charges.
    const setup = await startServer({ config: loadConfig(config) });
    const headers = { authorization: `Bearer ${setup.bootstrapSecret}`, "content-type": "application/json" };
    const created = async (path: string, body: unknown) =>
      (await (await fetch(`${setup.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) })).json()) as {
        id: string;
      };
    const merchant = await created("/v1/merchants", { name: "Disputed shop" });
    const token = await created("/v1/tokens", {
      card: "4242424242424242",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    const charges: string[] = [];
    for (let i = 0; i < 4 * KILLS; i++) {
      const charge = await created("/v1/charges", {
        merchant_id: merchant.id,
        amount: 1000 + i,
        currency: "USD",
        payment_method: { type: "card", token: token.id },
      });
      charges.push(charge.id);
    }
    await setup.close();

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let child: ChildProcess | null = null;
    const dead = () => child === null || child.exitCode !== null || child.signalCode !== null;
    async function kill() {
      const c = child as ChildProcess | null;
      if (!c || dead()) return;
      const pid = c.pid as number;
      const group = [pid, ...children(pid)];
      const exited = new Promise((r) => c.once("exit", r));
      process.kill(-pid, "SIGKILL");
      await exited;
      await eventually(
        "the killed processes to be gone",
        () => group.filter(alive),
        (left) => left.length === 0,
      );
    }
    onTestFinished(kill);
    const start = async (crashAfterCommits?: number) => {
      await kill();
      child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
        cwd: serverDir,
        detached: true,
        env: {
          ...env,
          NODE_ENV: "development",
          PORT: String(port),
          DATA_DIR: dataDir,
          LOG_LEVEL: "silent",
          WORKERS: "1",
          DISPUTE_FEES: config.DISPUTE_FEES,
          IDEMPOTENCY_LOCK_SECONDS: "1",
          RATE_LIMIT_TEST_PER_SECOND: "100000",
          ...(crashAfterCommits ? { TEST_CRASH_AFTER_COMMITS: String(crashAfterCommits) } : {}),
        },
        stdio: "ignore",
      });
      for (let i = 0; i < 600; i++) {
        if (dead()) throw new Error("the server exited while starting");
        try {
          if ((await fetch(`${url}/v1/merchants?limit=1`, { headers })).status === 200) return;
        } catch {
          // not listening yet
        }
        await pause(100);
      }
      throw new Error("the server did not start");
    };

    const all: Op[] = [];
    /** Requests whose first attempt got no answer (the server died), answered by a retry after a restart. */
    let retried = 0;
    let n = 0;
    const send = async (o: Op): Promise<Answer | null> => {
      try {
        const res = await fetch(`${url}${o.path}`, {
          method: "POST",
          headers: { ...headers, "idempotency-key": o.key },
          body: JSON.stringify(o.body),
          signal: AbortSignal.timeout(10_000),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      } catch {
        return null;
      }
    };
    /** Sends every unanswered op (oldest first) until each has an answer or the server dies. */
    const drain = async (): Promise<boolean> => {
      for (const o of all) {
        while (!o.answer) {
          const answer = await send(o);
          if (!answer) return false;
          if (answer.status === 409 && answer.body.code === "idempotency_request_in_progress") {
            await pause(200); // still locked by the dead request: its lock runs out within a second
            continue;
          }
          o.answer = answer;
          retried++;
        }
      }
      return true;
    };
    const resolved = new Set<string>();
    let next = 0;

    for (let cycle = 0; cycle < KILLS; cycle++) {
      await start(1 + Math.floor(random() * 6));
      if (!(await drain())) continue;
      // Decide every dispute opened so far and not yet decided, and open new ones, all at once.
      for (const o of all) {
        const id = o.kind === "open" ? (o.answer?.body.id as string | undefined) : undefined;
        if (!id || resolved.has(id)) continue;
        resolved.add(id);
        const outcome = random() < 0.5 ? "won" : "lost";
        all.push({
          kind: "resolve",
          key: `resolve-${++n}`,
          path: `/v1/sandbox/disputes/${id}/resolve`,
          body: { outcome },
        });
      }
      for (const charge of charges.slice(next, next + 4)) {
        all.push({ kind: "open", key: `open-${++n}`, path: `/v1/sandbox/charges/${charge}/dispute`, body: {} });
      }
      next += 4;
      await Promise.all(
        all
          .filter((o) => !o.answer)
          .map(async (o) => {
            const answer = await send(o);
            if (answer && !(answer.status === 409 && answer.body.code === "idempotency_request_in_progress")) {
              o.answer = answer;
            }
          }),
      );
      await kill();
    }
    await start();
    expect(await drain()).toBe(true);
    await kill();

    const store = await openStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      const disputes = await store.findAll("disputes", { merchant_id: merchant.id }, 10_000);
      const postings = await store.findAll("postings", { merchant_id: merchant.id }, 100_000);
      const count = (disputeId: string, type: string) =>
        postings.filter((p) => p.source_id === disputeId && p.type === type).length;
      const perCharge = new Map<string, number>();
      for (const d of disputes) perCharge.set(d.charge_id, (perCharge.get(d.charge_id) ?? 0) + 1);
      const figures = {
        kills: KILLS,
        requests: all.length,
        unanswered_then_retried: retried,
        opened: disputes.length,
        won: disputes.filter((d) => d.status === "won").length,
        lost: disputes.filter((d) => d.status === "lost").length,
        failed_requests: all.filter((o) => (o.answer?.status ?? 500) >= 300).length,
        charges_disputed_twice: [...perCharge.values()].filter((c) => c > 1).length,
        double_movements: disputes.filter(
          (d) =>
            count(d.id, "dispute") !== 1 ||
            count(d.id, "fee") !== 1 ||
            count(d.id, "dispute_reversal") !== (d.status === "won" ? 1 : 0),
        ).length,
      };
      console.log(`dispute crash figures: ${JSON.stringify(figures)}`);
      // The kills land between a commit and its answer: retries then replay what was committed.
      expect(figures.unanswered_then_retried).toBeGreaterThan(0);
      expect(figures).toMatchObject({ failed_requests: 0, charges_disputed_twice: 0, double_movements: 0 });
      expect(figures.opened).toBe(all.filter((o) => o.kind === "open").length);
      expect(figures.won + figures.lost).toBe(all.filter((o) => o.kind === "resolve").length);
      expect((await verifyLedger(store)).differences).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
