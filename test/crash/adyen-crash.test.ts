import { mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, openStore, verifyLedger } from "@payments/server";
import { dedupeKey } from "@payments/server/adyen";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { type CallLedger, type Interception, startCallLedger } from "../support/adyen-stand-in/call-ledger.ts";
import {
  ADYEN_DOCUMENTS,
  ADYEN_TEST_CREDENTIALS,
  adyenAcquirerSettings,
  deliverNotifications,
  startAdyenStandIn,
  startPrismProxy,
} from "../support/adyen-stand-in/index.ts";
import type { RunningProxy } from "../support/adyen-stand-in/prism-proxy.ts";
import {
  ACQUIRER_RECOVERY_SETTINGS,
  bundlePerFile,
  crashServer,
  openCrashShop,
  pause,
  seeded,
} from "../support/crash.ts";
import { eventually } from "../support/eventually.ts";

// Crash safety toward the acquirer, with Adyen (issue 32; docs/acquirer-port.md "Intents: crash safety
// toward the acquirer"). The server runs as a real process with PRODUCTION_ACQUIRER=adyen, pointed at the
// Adyen stand-in through Prism's validating proxy (Checkout v71, so every call and answer is checked
// against Adyen's contract) and the call ledger (support/adyen-stand-in/call-ledger.ts), which records
// every call the stand-in received with its Idempotency-Key and the PSP reference it answered.
//
// It takes production charges (immediate and manual capture), captures, voids and refunds, with and without
// client Idempotency-Keys, and dies by SIGKILL KILLS times, at the worst moments: as its call reaches
// Adyen (kill_before), or once Adyen has processed the call and before the answer reaches it
// (kill_after: Adyen did it, the server never heard). Some calls also end as they do with a real acquirer
// on a bad day, without a kill: the connection dropped, no answer until ADYEN_TIMEOUT_MS, or a 500 after
// (or before) Adyen processed it; such a call is in doubt and its intent stays open.
// After each restart the keyed requests that got no answer (or a 5xx) are retried with their key; unkeyed
// ones are given up, as a client without a key must. At the end, once the recovery job
// (IDEMPOTENCY_LOCK_SECONDS=1, JOBS_INTERVAL_SECONDS=1: the documented bound is their sum) has run,
// counted at the stand-in: 0 authorisations, captures, refunds, cancels or reversals applied twice; one
// PSP reference per idempotency key and one payment per charge; no authorisation standing that the
// ledger does not know; what the stand-in holds captured and refunded per payment equals our charge's
// amounts; every intent resolved; the ledger verifies; Prism saw 0 contract violations.

/**
 * Kills per run; CRASH_ADYEN_KILLS for bigger runs, CRASH_SEED for other interleavings. CRASH_TRACE=1
 * prints each cycle (its requests, answers and the interceptions met) and appends the server's warnings
 * and errors to <tmpdir>/adyen-crash-server.log.
 */
const KILLS = Number(process.env.CRASH_ADYEN_KILLS ?? 30);
const random = seeded(Number(process.env.CRASH_SEED ?? 20261128));
/**
 * The connector's time-out per call: a `timeout` fault costs this much. Not the least ADYEN_TIMEOUT_MS
 * takes (1 s): on a busy machine a call through Prism can take longer, and a call in doubt by accident
 * moves a cycle's kill to another call.
 */
const ADYEN_TIMEOUT_MS = 2000;

const dataDir = mkdtempSync(join(tmpdir(), "payments-adyen-crash-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
/** The server every restart runs: its production bundle, built once for this file (support/crash.ts). */
const serverMain = bundlePerFile();

type Kind = "charge" | "capture" | "void" | "refund";
interface Op {
  kind: Kind;
  /** The client's Idempotency-Key, or null: a client without one gives up on a lost answer. */
  key: string | null;
  path: string;
  body: Record<string, unknown>;
  answer?: { status: number; body: Record<string, unknown> };
}

const FAULTS = ["drop", "error_after", "error_before", "drop", "error_after", "timeout"] as const;

// Its first full run (31 server starts through tsx, about 12 minutes) found two faults, fixed since and
// asserted below: an authorisation standing at Adyen that the ledger did not know (the set-up charge, in
// doubt by time-out, repeated by the recovery on an instance with another BASE_URL: Adyen refused the key
// reused with a different returnUrl, and recovery took the refusal for "nothing authorized"; the intent now
// keeps the return address, and a repeat refused as a request stays in doubt), and 488 of 548 notification
// deliveries refused with 429 (the keyless per-address limit; Adyen's notifications now count only when
// refused). Every restart runs the server's bundle (support/crash.ts), as the other kill -9 suites do.
describe("crash safety toward Adyen (the stand-in)", { timeout: 900_000 }, () => {
  it(`moves no money twice at Adyen across ${KILLS} kills around its calls`, async () => {
    // Stand-in <- call ledger <- Prism (Checkout v71) <- the server. No payout or dispute is made here.
    const standIn = await startAdyenStandIn(ADYEN_TEST_CREDENTIALS);
    onTestFinished(() => standIn.stop());
    const ledger: CallLedger = await startCallLedger(standIn.url);
    onTestFinished(() => ledger.stop());
    const prism: RunningProxy = await startPrismProxy(ADYEN_DOCUMENTS.checkout, ledger.url);
    onTestFinished(() => prism.stop());

    const settings = {
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.CRASH_TRACE ? "warn" : "silent",
      ...adyenAcquirerSettings(prism.url, { timeoutMs: ADYEN_TIMEOUT_MS }),
    };

    // Set up in-process on the same data: a production key, a merchant and a card token.
    const shop = await openCrashShop(settings, { key: "live", merchant: "Crash shop" });
    const { headers, merchant, token } = shop;
    // One charge before the kills: Prism's first request is slow, and would put the first cycle's calls in
    // doubt by time-out. When this one is in doubt too, the recovery job reverses it from a server on
    // another address (this one listens on PORT=0): the first run's finding, kept as a case.
    await shop.created("/v1/charges", {
      merchant_id: merchant.id,
      amount: 10_000,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
    await shop.close();

    const trace = () => openSync(join(tmpdir(), "adyen-crash-server.log"), "a");
    const server = await crashServer({
      main: serverMain,
      secret: shop.secret,
      env: { ...settings, ...ACQUIRER_RECOVERY_SETTINGS },
      stdio: process.env.CRASH_TRACE ? ["ignore", trace(), trace()] : "ignore",
    });
    const { url, start } = server;
    /** SIGKILL to the server's process group, from inside the call ledger: synchronous, before its answer. */
    const kill = () => {
      const pid = server.pid();
      try {
        if (pid) process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    };

    let n = 0;
    const op = (kind: Kind, keyed: boolean, path: string, body: Record<string, unknown> = {}): Op => {
      const key = keyed ? `adyen-${kind}-${++n}` : null;
      const labelled = kind === "charge" || kind === "refund";
      return { kind, key, path, body: { ...body, ...(labelled ? { metadata: { op: `${kind}-${++n}` } } : {}) } };
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
          signal: AbortSignal.timeout(15_000),
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
    /**
     * Whether an answer leaves the request to be sent again, as a keyed client must: none (the server died),
     * a 5xx (`acquirer_in_doubt`: the call in doubt; the key is forgotten), or a 409 that says to retry (the
     * key still locked by a dead request; `conflict`: the recovery job settled the request's call while it
     * outlasted its 1 s lock, and the key is forgotten too). Taken as final in a batch, such a 409 was
     * counted as a keyed request without its one stored result, though its retry would have had one.
     */
    const retryable = (answer: Op["answer"] | null) =>
      !answer ||
      answer.status >= 500 ||
      (answer.status === 409 && ["idempotency_request_in_progress", "conflict"].includes(String(answer.body.code)));
    /** Records the answer; false when the request is to be retried (retryable). */
    const settle = (o: Op, answer: Op["answer"] | null) => {
      if (answer) o.answer = answer;
      if (retryable(answer)) return false;
      note(o);
      return true;
    };
    /** The charge's stored state and intents, for a failure's message. */
    const stateOf = (o: Op) => {
      const id = /\/v1\/charges\/([^/]+)/.exec(o.path)?.[1];
      if (!id) return "";
      const db = new Database(join(dataDir, "payments.sqlite"), { readonly: true });
      try {
        const rows = (table: string, where: string) =>
          JSON.stringify(db.prepare(`SELECT doc FROM ${table} WHERE ${where}`).all(id));
        return `charge ${rows("charges", "id = ?")}; intents ${rows("acquirer_intents", "json_extract(doc, '$.charge_id') = ?")}`;
      } finally {
        db.close();
      }
    };
    /** Retries every keyed request without a final answer, until each has one or the server dies again. */
    const retryPending = async () => {
      let waits = 0;
      while (pending.length > 0) {
        const o = pending[0] as Op;
        if (++waits > 300) {
          throw new Error(
            `no final answer for ${o.kind} ${o.key} ${o.path}: ${JSON.stringify(o.answer)}; ${stateOf(o)}`,
          );
        }
        const answer = await send(o);
        if (!answer) return false;
        // Still locked by the dead request (its lock runs out within a second), its call to Adyen is
        // being completed by the recovery job this moment, or the call is in doubt again: retry shortly.
        if (!settle(o, answer)) {
          await pause(200);
          continue;
        }
        pending.shift();
        waits = 0;
      }
      return true;
    };

    const T0 = performance.now();
    const t = (what: string) =>
      process.env.CRASH_TRACE && console.log(`${((performance.now() - T0) / 1000).toFixed(1)} ${what}`);
    for (let cycle = 0; cycle < KILLS; cycle++) {
      t(`cycle ${cycle} start`);
      await start();
      t("started");
      if (!(await retryPending())) continue;
      t("retried");
      const batch: Op[] = [
        chargeOp(true, true),
        chargeOp(false, true),
        chargeOp(true, false),
        chargeOp(false, false),
        ...authorized
          .splice(0, 3)
          .map((id, i) =>
            i === 2
              ? op("void", cycle % 2 === 0, `/v1/charges/${id}/void`)
              : op("capture", i === 0, `/v1/charges/${id}/capture`),
          ),
        ...captured
          .splice(0, 2)
          .map((id, i) => op("refund", i === 0, `/v1/charges/${id}/refunds`, { amount: 100 + cycle })),
      ].sort(() => random() - 0.5);
      // Each request makes one call to Adyen: the k-th of them kills the server, before it reaches the
      // stand-in or once the stand-in processed it; in some cycles another call meets a fault first.
      const k = 1 + Math.floor(random() * batch.length);
      ledger.plan(k, { kind: random() < 0.3 ? "kill_before" : "kill_after", run: kill });
      if (random() < 0.6 && batch.length > 1) {
        const j = 1 + ((k + Math.floor(random() * (batch.length - 1))) % batch.length);
        const fault = FAULTS[Math.floor(random() * FAULTS.length)] ?? "drop";
        ledger.plan(j, { kind: fault } as Interception);
      }
      all.push(...batch);
      const callsBefore = ledger.calls.length;
      await Promise.all(
        batch.map(async (o, i) => {
          await pause(i * 3);
          const answer = await send(o);
          if (!settle(o, answer) && o.key) pending.push(o);
        }),
      );
      t(
        `batch done: ${batch.length} requests, k=${k}, ${ledger.calls.length - callsBefore} calls, ${JSON.stringify(ledger.met)} ${JSON.stringify(batch.map((o) => [o.kind, o.answer?.status, o.answer?.body.code]))}`,
      );
      await server.kill(); // a cycle whose k-th call did not come: killed after the batch
      ledger.clearPlans();
    }
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

    // Adyen then sends what it did (AUTHORISATION, CAPTURE, CANCELLATION, REFUND, CANCEL_OR_REFUND for the
    // recovery's reversals), each item twice and shuffled, as production's: `live` says the environment,
    // and sits outside the signed fields. Applied or not, nothing may move our money away from Adyen's.
    const notifications = standIn.takeNotifications().map((body) => ({ ...body, live: "true" as const }));
    const delivered = await deliverNotifications(`${url}/v1/acquirers/adyen/notifications`, notifications, {
      times: 2,
      seed: 20261128,
    });
    // An item kept `waiting` (its object not yet in the state it follows) is tried again by the
    // notifications job every second: none may be left once it has had its turn (a confirmation never applied).
    const notifications1 = new Database(join(dataDir, "payments.sqlite"), { readonly: true });
    const waiting = notifications1
      .prepare(`SELECT count(*) FROM acquirer_notifications WHERE f_state IN ('received', 'waiting')`)
      .pluck();
    await eventually(
      "every notification item applied or noted",
      () => waiting.get() as number,
      (left) => left === 0,
      10_000,
    ).catch(() => undefined); // counted and asserted below, with the breakdown printed first
    notifications1.close();
    await server.kill();

    const store = await openStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      const charges = await store.findAll("charges", { merchant_id: merchant.id }, 100_000);
      const refunds = await store.findAll("refunds", { merchant_id: merchant.id }, 100_000);
      const intents = await store.findAll("acquirer_intents", { livemode: true }, 100_000);
      const stored1 = await store.findAll("acquirer_notifications", { livemode: true }, 100_000);
      const byState = (state: string, effect?: string) =>
        stored1.filter((d) => d.state === state && (effect === undefined || d.effect === effect)).length;
      const byPsp = new Map(charges.flatMap((c) => (c.processor_ref ? [[c.processor_ref, c] as const] : [])));
      const stored = new Set(charges.map((c) => c.id));

      // Counted at the stand-in: what it answered per key, charge, payment and refund (call-ledger.ts), and
      // what it applied per reference (replays excluded).
      const doubles = ledger.doubles();
      const performedTwice = (operation: keyof typeof standIn.performed) =>
        [...standIn.performed[operation].values()].filter((count) => count > 1).length;
      const answered = ledger.calls.filter((c) => c.status !== null && c.status < 300);
      const reversed = new Set(answered.filter((c) => c.operation === "reversal").map((c) => c.paymentPspReference));
      const payments = [...standIn.payments.values()];
      const opId = (o: Op) => (o.body.metadata as { op?: string } | undefined)?.op;
      const perOp = (docs: { metadata: Record<string, string> }[], o: Op) =>
        docs.filter((d) => d.metadata.op === opId(o)).length;
      const keyed = all.filter((o) => o.key);
      const keyedWithoutOne = keyed.filter(
        (o) =>
          !o.answer ||
          o.answer.status >= 300 ||
          (o.kind === "charge" && perOp(charges, o) !== 1) ||
          (o.kind === "refund" && perOp(refunds, o) !== 1),
      );
      // Each one named, so a failure says which request, its last answer and what the store holds for it.
      for (const o of keyedWithoutOne) {
        const stored = o.kind === "charge" ? perOp(charges, o) : o.kind === "refund" ? perOp(refunds, o) : "-";
        console.log(
          `adyen crash: keyed ${o.kind} ${o.key} ${o.path} answered ${JSON.stringify(o.answer)}; stored ${stored}`,
        );
      }
      const figures = {
        kills: KILLS,
        killed_before_adyen_call: ledger.met.kill_before,
        killed_after_adyen_processed: ledger.met.kill_after,
        faults: ledger.met.drop + ledger.met.timeout + ledger.met.error_after + ledger.met.error_before,
        requests: all.length,
        keyed: keyed.length,
        unkeyed_given_up: all.filter((o) => !o.key && (!o.answer || o.answer.status >= 500)).length,
        calls_at_adyen: ledger.calls.length,
        payments_at_adyen: payments.length,
        reversed_by_recovery: intents.filter((i) => i.resolution === "reversed").length,
        completed_by_recovery: intents.filter((i) => i.resolution === "committed" && i.attempts > 1).length,
        recovery_seconds_after_last_start: Number(recoverySeconds.toFixed(1)),
        keys_with_two_psp_references: doubles.keys_with_two_psp_references,
        double_authorizations: doubles.authorizations + performedTwice("authorisation"),
        double_captures: doubles.captures + performedTwice("capture"),
        double_refunds: doubles.refunds + performedTwice("refund"),
        double_cancels: doubles.cancels + performedTwice("cancel"),
        double_reversals: doubles.reversals + performedTwice("reversal"),
        calls_without_idempotency_key: ledger.calls.filter((c) => !c.idempotencyKey).length,
        // An authorisation standing at Adyen must be a stored charge, or reversed: never both, never neither.
        authorizations_unknown_to_the_ledger: payments.filter(
          (p) => p.status === "authorised" && !byPsp.has(p.pspReference),
        ).length,
        unrecorded_payments_not_reversed: payments.filter(
          (p) => !stored.has(p.merchantReference) && !reversed.has(p.pspReference),
        ).length,
        stored_charges_reversed: charges.filter((c) => c.processor_ref && reversed.has(c.processor_ref)).length,
        // What Adyen holds per payment is what our charge says.
        captured_amounts_disagreeing: charges.filter(
          (c) => c.processor_ref && standIn.payments.get(c.processor_ref)?.captured !== c.amount_captured,
        ).length,
        refunded_amounts_disagreeing: charges.filter(
          (c) => c.processor_ref && standIn.payments.get(c.processor_ref)?.refunded !== c.amount_refunded,
        ).length,
        voids_disagreeing: charges.filter(
          (c) =>
            c.processor_ref &&
            (c.status === "voided") !== (standIn.payments.get(c.processor_ref)?.status === "cancelled"),
        ).length,
        keyed_requests_without_one_stored_result: keyedWithoutOne.length,
        unresolved_intents: intents.filter((i) => i.state !== "resolved").length,
        conflicting_intents: intents.filter((i) => i.resolution === "conflict").length,
        contract_violations: prism.violations().length,
        notifications_sent_twice: notifications.length,
        notifications_not_accepted: delivered.filter((d) => d.status !== 200).length,
        notifications_stored: stored1.length,
        notifications_applied: byState("applied"),
        notifications_confirming: byState("noted", "confirmed"),
        notifications_for_attention: byState("noted", "attention"),
        notifications_waiting: byState("waiting"),
      };
      console.log(`adyen crash figures: ${JSON.stringify(figures)}`);
      // Each item not applied, by event code, outcome and what it names: the object's state, or its intents'.
      const notApplied = new Map<string, number>();
      for (const d of stored1.filter((d) => d.state !== "applied")) {
        const ref = d.merchant_reference.replace(/:(capture|void|refund|reverse)$/, "");
        const charge = charges.find((c) => c.id === ref);
        const refund = refunds.find((r) => r.id === ref);
        const its = intents
          .filter((i) => i.charge_id === ref || i.refund_id === ref)
          .map((i) => `${i.operation}:${i.resolution}`);
        const object = charge ? `charge ${charge.status}` : refund ? `refund ${refund.status}` : "unknown object";
        const k = `${d.state}/${d.effect} ${d.event_code}:${d.success} ${object} intents[${its.join(",")}]`;
        notApplied.set(k, (notApplied.get(k) ?? 0) + 1);
      }
      console.log(`adyen crash notifications not applied: ${JSON.stringify([...notApplied], null, 1)}`);
      if (process.env.CRASH_TRACE) {
        const unknown = payments.filter((p) => p.status === "authorised" && !byPsp.has(p.pspReference));
        for (const p of unknown) {
          const calls = ledger.calls.filter(
            (c) =>
              c.pspReference === p.pspReference ||
              c.merchantReference === p.merchantReference ||
              c.paymentPspReference === p.pspReference,
          );
          const its = intents.filter((i) => JSON.stringify(i).includes(p.merchantReference));
          console.log(`UNKNOWN ${JSON.stringify(p)} calls ${JSON.stringify(calls)} intents ${JSON.stringify(its)}`);
        }
        const refused = new Map<string, number>();
        for (const d of delivered.filter((d) => d.status !== 200)) {
          const k = `${d.status} ${d.text.slice(0, 200)}`;
          refused.set(k, (refused.get(k) ?? 0) + 1);
        }
        console.log(`REFUSED ${JSON.stringify([...refused])}`);
      }
      expect(prism.violations()).toEqual([]);
      expect(figures).toMatchObject({
        kills: KILLS,
        keys_with_two_psp_references: 0,
        double_authorizations: 0,
        double_captures: 0,
        double_refunds: 0,
        double_cancels: 0,
        double_reversals: 0,
        calls_without_idempotency_key: 0,
        stored_charges_reversed: 0,
        captured_amounts_disagreeing: 0,
        refunded_amounts_disagreeing: 0,
        voids_disagreeing: 0,
        keyed_requests_without_one_stored_result: 0,
        unresolved_intents: 0,
        conflicting_intents: 0,
      });
      // The first run's findings (2026-11-28, seed 20261128; see above the describe): 1 authorisation
      // unknown to the ledger and not reversed, and 488 of 548 notification deliveries refused.
      // Every item is then stored, and none asks for a person (our own reversals' CANCEL_OR_REFUND confirm;
      // an AUTHORISATION of a charge recovery reversed is applied, with nothing to change). None is left
      // waiting: an 8-kill run left 21 of 79 (12 REFUND, 9 CAPTURE), every one naming our call's key
      // (`re_…:refund`, `tx_…:capture`, the reference the connector sends), which was looked up as an
      // object id and never found; acquirer-outcomes.ts reads it through processor.ts objectOfReference.
      expect(figures).toMatchObject({
        notifications_waiting: 0,
        authorizations_unknown_to_the_ledger: 0,
        unrecorded_payments_not_reversed: 0,
        notifications_not_accepted: 0,
        notifications_stored: new Set(
          notifications.flatMap((b) => b.notificationItems.map((w) => dedupeKey(w.NotificationRequestItem))),
        ).size,
        notifications_for_attention: 0,
      });
      // The kills did land around Adyen's calls, faults were met, and recovery had work to do.
      expect(figures.killed_before_adyen_call + figures.killed_after_adyen_processed).toBeGreaterThanOrEqual(
        KILLS * 0.8,
      );
      expect(figures.killed_after_adyen_processed).toBeGreaterThan(0);
      expect(figures.faults).toBeGreaterThan(0);
      expect(figures.reversed_by_recovery + figures.completed_by_recovery).toBeGreaterThan(0);
      expect((await verifyLedger(store)).differences).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
