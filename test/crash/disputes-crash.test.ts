import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, openStore, verifyLedger } from "@payments/server";
import { afterAll, describe, expect, it } from "vitest";
import {
  bundlePerFile,
  killAfterNextCommit,
  openCrashShop,
  pause,
  retryingCrashServer,
  seeded,
} from "../support/crash.ts";

// A dispute's money across kill -9 (issue 31): the server runs as its own process on a file-backed SQLite
// store while chargebacks are opened (POST /v1/sandbox/charges/{id}/dispute: the amount and fee withdrawn)
// and decided (POST /v1/sandbox/disputes/{id}/resolve: won gives the amount back), each with an
// Idempotency-Key, and dies by SIGKILL, KILLS times (half as many with two workers), in turn:
// - the server kills itself right after its n-th committed change, before answering
//   (TEST_CRASH_AFTER_COMMITS), while disputes are opened and decided at once;
// - killed from outside during openings: right after the next change commits (watched from a second,
//   read-only connection: every change writes an event), while only openings stream in;
// - killed from outside the same way during resolutions, while only decisions stream in.
// Each opening comes with a full refund of another charge racing a dispute's opening on that charge, sent
// at the same moment. After each restart every unanswered request is retried with its key until it gets an
// answer. Then: one dispute per charge, exactly one `dispute` and one `fee` posting per dispute and one
// `dispute_reversal` per won one (0 double movements), every request succeeded except the loser of each
// race (with a 4xx), no raced charge both refunded and disputed, and `ledger verify` reports 0 differences.
// All of it runs once with one server process (WORKERS=1) and once with two workers on the one store
// (WORKERS=2): there the two racing requests and the retries reach processes that did not run the first.

/**
 * Kills with WORKERS=1 (CRASH_KILLS for bigger runs); WORKERS=2 takes half as many (each kind at least
 * once): every kill costs a restart, and a restart of two workers most of the run's time.
 */
const KILLS = Number(process.env.CRASH_KILLS ?? 6);
const killsWith = (workers: number) => (workers === 1 ? KILLS : Math.max(3, Math.ceil(KILLS / 2)));
const FEE = 1500;
const random = seeded(Number(process.env.CRASH_SEED ?? 20261127));

/** The server every restart runs: its production bundle, built once for this file (support/crash.ts). */
const serverMain = bundlePerFile();
const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}
interface Op {
  kind: "open" | "resolve" | "refund";
  /** The charge a refund and an opening race on (both ops name it). */
  raced?: string;
  key: string;
  path: string;
  body: Record<string, unknown>;
  answer?: Answer;
}

describe.each([1, 2])("a dispute's money across kill -9 with WORKERS=%i", { timeout: 600_000 }, (workers) => {
  const kills = killsWith(workers);
  it(`moves no money twice across ${kills} crashes while disputes are opened and decided`, async () => {
    const began = performance.now();
    const dataDir = mkdtempSync(join(tmpdir(), "payments-dispute-crash-"));
    dataDirs.push(dataDir);
    const database = join(dataDir, "payments.sqlite");
    const settings = { DATA_DIR: dataDir, LOG_LEVEL: "silent", DISPUTE_FEES: JSON.stringify({ USD: FEE }) };
    // Set up in-process on the same data directory: the bootstrap key, a merchant and captured charges.
    const shop = await openCrashShop(settings, { key: "bootstrap", merchant: "Disputed shop" });
    const { headers, merchant, token } = shop;
    /** Per cycle: 4 charges to dispute, and 2 on which a full refund races the dispute's opening. */
    const charges: string[] = [];
    for (let i = 0; i < 6 * kills; i++) {
      const charge = await shop.created("/v1/charges", {
        merchant_id: merchant.id,
        amount: 1000 + i,
        currency: "USD",
        payment_method: { type: "card", token: token.id },
      });
      charges.push(charge.id);
    }
    await shop.close();

    const server = await retryingCrashServer({ main: serverMain, shop, settings, workers });
    const { url, dead, kill, startCrashingAfter: start } = server;

    const all: Op[] = [];
    /** Requests whose first attempt got no answer (the server died), answered by a retry after a restart. */
    let retried = 0;
    let n = 0;
    const inProgress = (a: Answer) => a.status === 409 && a.body.code === "idempotency_request_in_progress";
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
        let timeouts = 0;
        while (!o.answer) {
          const answer = await send(o);
          // No answer: the server died (a kill), or, alive, was too slow on a busy machine: ask again.
          if (!answer && (dead() || ++timeouts > 5)) return false;
          if (!answer) continue;
          if (inProgress(answer)) {
            await pause(200); // still locked by the dead request: its lock runs out within a second
            continue;
          }
          o.answer = answer;
          retried++;
        }
      }
      return true;
    };
    /** A first attempt: an answer counts unless the key is still held by a request that died. */
    const attempt = async (o: Op) => {
      const answer = await send(o);
      if (answer && !inProgress(answer)) o.answer = answer;
    };
    const resolved = new Set<string>();
    let next = 0;
    const resolutions = () => {
      const ops: Op[] = [];
      for (const o of all) {
        const id = o.kind === "open" && o.answer?.status === 201 ? (o.answer.body.id as string) : undefined;
        if (!id || resolved.has(id)) continue;
        resolved.add(id);
        const outcome = random() < 0.5 ? "won" : "lost";
        ops.push({
          kind: "resolve",
          key: `resolve-${++n}`,
          path: `/v1/sandbox/disputes/${id}/resolve`,
          body: { outcome },
        });
      }
      return ops;
    };
    const openings = () => {
      const mine = charges.slice(next, next + 6);
      next += 6;
      const ops: Op[] = mine.slice(0, 4).map((charge) => ({
        kind: "open",
        key: `open-${++n}`,
        path: `/v1/sandbox/charges/${charge}/dispute`,
        body: {},
      }));
      for (const charge of mine.slice(4)) {
        const pair: Op[] = [
          { kind: "refund", raced: charge, key: `refund-${++n}`, path: `/v1/charges/${charge}/refunds`, body: {} },
          { kind: "open", raced: charge, key: `open-${++n}`, path: `/v1/sandbox/charges/${charge}/dispute`, body: {} },
        ];
        ops.push(...(random() < 0.5 ? pair : pair.reverse()));
      }
      return ops;
    };
    /** Kills from outside right after the next change commits (or after 200 ms without one). */
    const killAfterCommit = () => killAfterNextCommit(database, kill);
    const kinds = { self: 0, during_opening: 0, during_resolution: 0 };

    for (let cycle = 0; cycle < kills; cycle++) {
      const how = (["self", "during_opening", "during_resolution"] as const)[cycle % 3] ?? "self";
      kinds[how]++;
      await start(how === "self" ? 1 + Math.floor(random() * 6) : undefined);
      if (!(await drain())) continue;
      const batch =
        how === "self" ? [...resolutions(), ...openings()] : how === "during_opening" ? openings() : resolutions();
      all.push(...batch);
      if (how === "self") {
        await Promise.all(batch.map(attempt));
      } else {
        // A stream (one request every 5 ms; a race's two at the same moment), killed once a random
        // number of answers has arrived, right after the next commit.
        let answered = 0;
        let settled = 0;
        const stream = Promise.all(
          batch.map(async (o, i) => {
            await pause((o.raced ? i - (i % 2) : i) * 5);
            await attempt(o);
            if (o.answer) answered++;
            settled++;
          }),
        );
        const killAfter = Math.floor(random() * Math.max(1, batch.length - 1));
        while (answered < killAfter && settled < batch.length && !dead()) await pause(1);
        await killAfterCommit();
        await stream;
      }
      await kill();
    }
    await start();
    expect(await drain()).toBe(true);
    // The disputes opened in the last cycles are decided too, on a server that is not killed.
    const last = resolutions();
    all.push(...last);
    await Promise.all(last.map(attempt));
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
      const ok = (o: Op) => (o.answer?.status ?? 500) < 300;
      const races = all.filter((o) => o.raced && o.kind === "refund").map((o) => o.raced as string);
      let bothSucceeded = 0;
      let neitherSucceeded = 0;
      let storeDisagrees = 0;
      for (const charge of races) {
        const pair = all.filter((o) => o.raced === charge);
        const won = pair.filter(ok).length;
        if (won === 2) bothSucceeded++;
        if (won === 0) neitherSucceeded++;
        const stored = await store.get("charges", charge);
        const refunds = await store.findAll("refunds", { charge_id: charge }, 10);
        // Exactly one way the cardholder got the money back: a refund of it all, or a chargeback.
        const refunded = stored?.amount_refunded === stored?.amount_captured && refunds.length === 1;
        const disputed = perCharge.get(charge) === 1 && refunds.length === 0 && stored?.amount_refunded === 0;
        if (refunded === disputed) storeDisagrees++;
      }
      const figures = {
        workers,
        kills,
        ...kinds,
        requests: all.length,
        unanswered_then_retried: retried,
        opened: disputes.length,
        won: disputes.filter((d) => d.status === "won").length,
        lost: disputes.filter((d) => d.status === "lost").length,
        races: races.length,
        race_refunds_won: all.filter((o) => o.raced && o.kind === "refund" && ok(o)).length,
        races_both_succeeded: bothSucceeded,
        races_neither_succeeded: neitherSucceeded,
        races_the_store_disagrees_with: storeDisagrees,
        race_losers_not_4xx: all.filter((o) => o.raced && !ok(o) && (o.answer?.status ?? 500) >= 500).length,
        failed_requests: all.filter((o) => !o.raced && !ok(o)).length,
        charges_disputed_twice: [...perCharge.values()].filter((c) => c > 1).length,
        double_movements: disputes.filter(
          (d) =>
            count(d.id, "dispute") !== 1 ||
            count(d.id, "fee") !== 1 ||
            count(d.id, "dispute_reversal") !== (d.status === "won" ? 1 : 0),
        ).length,
        seconds: Math.round((performance.now() - began) / 100) / 10,
      };
      console.log(`dispute crash figures: ${JSON.stringify(figures)}`);
      // The kills land between a commit and its answer: retries then replay what was committed.
      expect(figures.unanswered_then_retried).toBeGreaterThan(0);
      expect(figures).toMatchObject({
        failed_requests: 0,
        charges_disputed_twice: 0,
        double_movements: 0,
        races_both_succeeded: 0,
        races_neither_succeeded: 0,
        races_the_store_disagrees_with: 0,
        race_losers_not_4xx: 0,
      });
      expect(figures.opened).toBe(all.filter((o) => o.kind === "open" && ok(o)).length);
      expect(figures.won + figures.lost).toBe(all.filter((o) => o.kind === "resolve").length);
      expect(figures.won + figures.lost).toBe(figures.opened);
      expect((await verifyLedger(store)).differences).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
