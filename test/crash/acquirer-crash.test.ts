import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig, openStore, type SimulatorCounts, verifyLedger } from "@payments/server";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import {
  ACQUIRER_RECOVERY_SETTINGS,
  bundlePerFile,
  crashServer,
  inheritedEnv,
  killGroup,
  openCrashShop,
  pause,
  seeded,
} from "../support/crash.ts";
import { eventually } from "../support/eventually.ts";
import { ROOT } from "../support/process.ts";

// Crash safety toward the acquirer (docs/acquirer-port.md "Intents: crash safety toward the acquirer").
// The acquirer is the simulator run as a process of its own (support/acquirer-stand-in.ts, reached
// through TEST_ACQUIRER_URL), which counts what it applied per idempotency key and per object, so the
// counts outlive the server. The server takes production charges (PRODUCTION_ACQUIRER=simulator),
// captures and refunds, with and without client Idempotency-Keys, and dies by SIGKILL KILLS times, each
// time at the worst moment: the stand-in kills it right after applying its k-th call, before answering
// (the acquirer did it, the server never heard). After each restart the keyed requests that got no
// answer are retried with their key; unkeyed ones are given up, as a client without a key must. At the
// end, once the recovery job (IDEMPOTENCY_LOCK_SECONDS=1, JOBS_INTERVAL_SECONDS=1) has run:
// 0 authorizations, captures or refunds applied twice; no authorization standing that the ledger does not
// know; every stored capture and refund applied exactly once; every intent resolved; the ledger verifies.

/** Kills per run; CRASH_ACQUIRER_KILLS for bigger runs, CRASH_SEED for other interleavings. */
const KILLS = Number(process.env.CRASH_ACQUIRER_KILLS ?? 30);
const random = seeded(Number(process.env.CRASH_SEED ?? 20261127));

const testDir = resolve(ROOT, "test");
const dataDir = mkdtempSync(join(tmpdir(), "payments-acquirer-crash-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
/** The server every restart runs: its production bundle, built once for this file (support/crash.ts). */
const serverMain = bundlePerFile();

type Kind = "charge" | "capture" | "refund";
interface Op {
  kind: Kind;
  /** The client's Idempotency-Key, or null: a client without one gives up on a lost answer. */
  key: string | null;
  path: string;
  body: Record<string, unknown>;
  answer?: { status: number; body: Record<string, unknown> };
}

describe("crash safety toward the acquirer", { timeout: 600_000 }, () => {
  it(`applies no authorization, capture or refund twice across ${KILLS} kills at the acquirer's answer`, async () => {
    // The stand-in: one process for the whole run.
    const standIn = spawn(process.execPath, ["--import", "tsx", "support/acquirer-stand-in.ts"], {
      cwd: testDir,
      detached: true,
      env: inheritedEnv,
      stdio: ["ignore", "pipe", "inherit"],
    });
    onTestFinished(() => killGroup(standIn));
    const acquirerUrl = await new Promise<string>((resolve, reject) => {
      let out = "";
      standIn.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        const match = /listening (\S+)/.exec(out);
        if (match) resolve(match[1] as string);
      });
      standIn.once("exit", () => reject(new Error(`the acquirer stand-in exited: ${out}`)));
    });
    const counts = async () =>
      (await (await fetch(`${acquirerUrl}/_counts`)).json()) as SimulatorCounts & { kills: number };
    const settings = {
      DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
      PRODUCTION_ACQUIRER: "simulator",
      TEST_ACQUIRER_URL: acquirerUrl,
    };

    // Set up in-process on the same data: a production key, a merchant and a card token.
    const shop = await openCrashShop(settings, { key: "live", merchant: "Crash shop" });
    await shop.close();
    const { headers, merchant, token } = shop;

    const server = await crashServer({
      main: serverMain,
      secret: shop.secret,
      env: { ...settings, ...ACQUIRER_RECOVERY_SETTINGS },
    });
    const { url, start } = server;

    let n = 0;
    const op = (kind: Kind, keyed: boolean, path: string, body: Record<string, unknown> = {}): Op => {
      const key = keyed ? `acq-${kind}-${++n}` : null;
      return {
        kind,
        key,
        path,
        body: { ...body, ...(kind === "capture" ? {} : { metadata: { op: `${kind}-${++n}` } }) },
      };
    };
    const chargeOp = (keyed: boolean, capture: boolean) =>
      op("charge", keyed, "/v1/charges", {
        merchant_id: merchant.id,
        amount: 10_000,
        currency: "USD",
        payment_method: { type: "card", token: token.id },
        capture,
      });
    const send = async (o: Op): Promise<Op["answer"] | null> => {
      try {
        const res = await fetch(`${url}${o.path}`, {
          method: "POST",
          headers: { ...headers, ...(o.key ? { "idempotency-key": o.key } : {}) },
          body: JSON.stringify(o.body),
          signal: AbortSignal.timeout(10_000),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      } catch {
        return null;
      }
    };
    const all: Op[] = [];
    const pending: Op[] = [];
    const authorized: string[] = [];
    const captured: string[] = [];
    const note = (o: Op) => {
      const { answer } = o;
      if (!answer || answer.status >= 300 || o.kind === "refund") return;
      const { id, status } = answer.body as { id: string; status: string };
      if (status === "authorized") authorized.push(id);
      if (status === "captured") captured.push(id);
    };
    /** Retries every keyed request that got no answer, until each has one or the server dies again. */
    const retryPending = async () => {
      let waits = 0;
      while (pending.length > 0) {
        if (++waits > 500) throw new Error(`no final answer for ${pending[0]?.kind} ${pending[0]?.key}`);
        const o = pending[0] as Op;
        const answer = await send(o);
        if (!answer) return false;
        // Still locked by the dead request (its lock runs out within a second), or its call to the
        // acquirer is being completed by the recovery job this moment: both say to retry shortly.
        if (
          answer.status === 409 &&
          (answer.body.code === "idempotency_request_in_progress" || answer.body.code === "conflict")
        ) {
          await pause(200);
          continue;
        }
        o.answer = answer;
        note(o);
        pending.shift();
        waits = 0;
      }
      return true;
    };

    let killedByAcquirer = 0;
    for (let cycle = 0; cycle < KILLS; cycle++) {
      await start();
      if (!(await retryPending())) continue;
      const batch: Op[] = [
        chargeOp(true, true),
        chargeOp(false, true),
        chargeOp(true, false),
        chargeOp(false, false),
        ...authorized.splice(0, 2).map((id, i) => op("capture", i === 0, `/v1/charges/${id}/capture`, {})),
        ...captured.slice(0, 2).map((id, i) => op("refund", i === 0, `/v1/charges/${id}/refunds`, { amount: 100 })),
      ].sort(() => random() - 0.5);
      // The acquirer kills the server right after applying its k-th call of this cycle, before answering.
      const afterCalls = 1 + Math.floor(random() * batch.length);
      await fetch(`${acquirerUrl}/_arm`, {
        method: "POST",
        body: JSON.stringify({ pid: server.pid(), afterCalls }),
      });
      all.push(...batch);
      await Promise.all(
        batch.map(async (o, i) => {
          await pause(i * 3);
          const answer = await send(o);
          if (answer) {
            o.answer = answer;
            note(o);
          } else if (o.key) pending.push(o);
        }),
      );
      await server.kill(); // a cycle whose k-th call did not come: killed after the batch
      // Disarm, in case the batch made fewer calls than k.
      await fetch(`${acquirerUrl}/_arm`, { method: "POST", body: JSON.stringify({ pid: 0, afterCalls: 1e9 }) });
    }
    killedByAcquirer = (await counts()).kills;
    await start();
    expect(await retryPending()).toBe(true);

    // Every call left in doubt is resolved by the recovery job (lock 1 s + jobs every 1 s).
    const watcher = new Database(join(dataDir, "payments.sqlite"), { readonly: true });
    const unresolved = watcher.prepare(`SELECT count(*) FROM acquirer_intents WHERE f_state != 'resolved'`).pluck();
    const recoveryStarted = performance.now();
    await eventually(
      "every acquirer intent to be resolved",
      () => unresolved.get() as number,
      (left) => left === 0,
      30_000,
    );
    const recoverySeconds = (performance.now() - recoveryStarted) / 1000;
    watcher.close();
    const applied = (await counts()).applied;
    await server.kill();

    const store = await openStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      const charges = await store.findAll("charges", { merchant_id: merchant.id }, 100_000);
      const refunds = await store.findAll("refunds", { merchant_id: merchant.id }, 100_000);
      const intents = await store.findAll("acquirer_intents", { livemode: true }, 100_000);
      const twice = (counted: Record<string, number>) => Object.values(counted).filter((c) => c > 1).length;
      /** The simulator's reference for a charge's authorization (adapters/processor-simulator.ts). */
      const referenceOf = (chargeId: string) =>
        `sim_auth_${createHash("sha256").update(`${chargeId}:authorize`).digest("hex").slice(0, 16)}`;
      const stored = new Map(charges.map((c) => [c.id, c]));
      const opId = (o: Op) => (o.body.metadata as { op?: string } | undefined)?.op;
      const perOp = (docs: { metadata: Record<string, string> }[], o: Op) =>
        docs.filter((d) => d.metadata.op === opId(o)).length;
      const keyed = all.filter((o) => o.key);
      const figures = {
        kills: KILLS,
        killed_by_the_acquirer_after_its_call: killedByAcquirer,
        requests: all.length,
        keyed: keyed.length,
        unkeyed_given_up: all.filter((o) => !o.key && !o.answer).length,
        authorizations: Object.keys(applied.authorize).length,
        reversed_by_recovery: intents.filter((i) => i.resolution === "reversed").length,
        completed_by_recovery: intents.filter((i) => i.resolution === "committed" && i.attempts > 1).length,
        recovery_seconds_after_last_start: Number(recoverySeconds.toFixed(1)),
        double_authorizations: twice(applied.authorize),
        double_captures: twice(applied.capture),
        double_refunds: twice(applied.refund),
        double_reversals: twice(applied.reverse),
        // An authorization at the acquirer must be a stored charge, or reversed: never both, never neither.
        authorizations_unknown_to_the_ledger: Object.keys(applied.authorize).filter(
          (id) => !stored.has(id) && applied.reverse[referenceOf(id)] !== 1,
        ).length,
        stored_charges_reversed: charges.filter((c) => c.processor_ref && applied.reverse[c.processor_ref]).length,
        captures_not_applied_once: charges.filter(
          (c) => c.amount_captured > 0 && applied.capture[c.processor_ref ?? ""] !== 1,
        ).length,
        refunds_not_applied_once: refunds.filter((r) => applied.refund[`${r.id}:refund`] !== 1).length,
        keyed_requests_without_one_stored_result: keyed.filter(
          (o) =>
            !o.answer ||
            o.answer.status >= 300 ||
            (o.kind === "charge" && perOp(charges, o) !== 1) ||
            (o.kind === "refund" && perOp(refunds, o) !== 1),
        ).length,
        unresolved_intents: intents.filter((i) => i.state !== "resolved").length,
        conflicting_intents: intents.filter((i) => i.resolution === "conflict").length,
      };
      console.log(`acquirer crash figures: ${JSON.stringify(figures)}`);
      expect(figures).toMatchObject({
        kills: KILLS,
        double_authorizations: 0,
        double_captures: 0,
        double_refunds: 0,
        double_reversals: 0,
        authorizations_unknown_to_the_ledger: 0,
        stored_charges_reversed: 0,
        captures_not_applied_once: 0,
        refunds_not_applied_once: 0,
        keyed_requests_without_one_stored_result: 0,
        unresolved_intents: 0,
        conflicting_intents: 0,
      });
      // The kills did land between the acquirer's call and the server's answer, and were recovered from.
      expect(figures.killed_by_the_acquirer_after_its_call).toBeGreaterThanOrEqual(KILLS / 2);
      expect(figures.reversed_by_recovery + figures.completed_by_recovery).toBeGreaterThan(0);
      expect((await verifyLedger(store)).differences).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
