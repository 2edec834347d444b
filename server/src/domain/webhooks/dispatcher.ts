import type { Clock } from "../kernel/clock.ts";
import { randomBase62 } from "../kernel/ids.ts";
import { type DomainLog, silentLog } from "../kernel/log.ts";
import { type DomainObserver, unobserved } from "../kernel/observer.ts";
import { iso } from "../kernel/time.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { type AttemptSettings, attemptLog } from "./attempts.ts";
import { deliveryClaims } from "./claims.ts";
import { deliveryAttempts } from "./delivery-attempt.ts";
import type { OutboxSignal } from "./outbox.ts";
import { passScheduler } from "./pass-scheduler.ts";
import type { WebhookStore, WebhookTx } from "./records.ts";
import type { WebhookSender } from "./sender.ts";
import type { AddressPolicy } from "./ssrf.ts";

// The webhook dispatcher: turns events into deliveries and sends them (the contract's
// WebhookDeliveryHeaders describes the promise to receivers).
//
// 1. Fan-out. Each event is written with `delivery_pending: true` in the transaction of the change that
//    causes it (kernel/events.ts). One transaction here sets the flag false, conditionally, and inserts a
//    delivery for every enabled endpoint of its environment subscribed to its type and created before
//    it: so an event is fanned out exactly once, whichever instance does it, and a crash before that
//    commit leaves the flag set for the next pass. Deliveries this instance has room for are inserted
//    already claimed by it, saving a round trip. An event no endpoint gets is recorded with the flag
//    already false (the outbox's gate, fan-out.ts fanOutGate), and never reaches this step.
// 2. Claim. A due delivery is claimed by a conditional update that sets `claim` to a token of this
//    instance and moves `next_attempt_at` to the end of a lease (the timeout plus LEASE_MARGIN_MS).
//    Only one instance can win that update, so two instances never send the same attempt. If the
//    claimant dies, the delivery is due again when the lease ends and another instance (or the same one,
//    restarted) takes it over: at least once, never lost.
// 3. Attempt and outcome. The attempt's result is written, with the endpoint's health (failing_since,
//    auto-disable), in one transaction conditional on still holding the claim.
//
// Work is found two ways: this instance's commits wake it at once (the outbox signal), and a poll every
// WEBHOOK_POLL_INTERVAL_MS finds work made by other instances and retries that have come due.
//
// Times are the delivery's environment's (kernel/clock.ts): a sandbox delivery's due time, lease, attempt
// log and its endpoint's failure window are on the sandbox clock, so advancing it brings retries due
// (extendLeases keeps the leases under way as long as they were); a signature's timestamp is always the
// server's own time, which the receiver checks against its clock.

/** A claim's lease outlasts the attempt's timeout by this much. */
export const LEASE_MARGIN_MS = 5_000;

export interface WebhookSettings extends AttemptSettings {
  /** One attempt's time limit (WEBHOOK_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** Attempts in flight at once in this instance, and per endpoint. */
  concurrency: number;
  endpointConcurrency: number;
  /** How often the store is polled for work other instances made and retries that came due. */
  pollIntervalMs: number;
}

export interface DispatcherDeps {
  /** The plain store: the dispatcher's own writes must not wake it again. */
  store: WebhookStore;
  clock: Clock;
  vaultKeys: VaultKeys;
  sender: WebhookSender;
  settings: WebhookSettings;
  policyFor: (livemode: boolean) => AddressPolicy;
  signal?: OutboxSignal;
  /** [0, 1), for the retry jitter. */
  random?: () => number;
  log?: DomainLog;
  /** Told each recorded attempt, each delivery that ends failed and each endpoint disabled (metrics). */
  observer?: DomainObserver;
}

/**
 * The dispatcher: the pass scheduler (pass-scheduler.ts: when to look for work) driving the delivery
 * claims (claims.ts: which deliveries this instance takes, and the attempts running), which hand each
 * claimed delivery to the attempt (delivery-attempt.ts).
 */
export function createDispatcher(deps: DispatcherDeps) {
  const { store, clock, settings } = deps;
  const random = deps.random ?? Math.random;
  const log = deps.log ?? silentLog;
  const observer = deps.observer ?? unobserved;

  const instance = randomBase62(12);
  let claimsMade = 0;
  const sending = deliveryAttempts({
    store,
    clock,
    timeoutMs: settings.timeoutMs,
    sender: deps.sender,
    vaultKeys: deps.vaultKeys,
    policyFor: deps.policyFor,
    attempts: attemptLog({ store, clock, settings, random }),
    log,
    observer,
    instance,
  });
  /** Attempts this instance has made, per environment (the sandbox clock's advance reports its own). */
  const { made } = sending;
  const claims = deliveryClaims({
    store,
    clock,
    settings,
    leaseMs: settings.timeoutMs + LEASE_MARGIN_MS,
    newClaim: () => `${instance}:${++claimsMade}`,
    attempt: (launch) => sending.attempt(launch),
    log,
    stopping: () => scheduler.stopping,
    onSettled: () => scheduler.wake(),
  });

  /** One pass: fan out every pending event, then claim what is due as far as there is room. */
  async function pass(): Promise<number> {
    const work = await claims.fanOutAll();
    return work + (await claims.claimDue(true)) + (await claims.claimDue(false));
  }

  const scheduler = passScheduler({ pass, pollIntervalMs: settings.pollIntervalMs, signal: deps.signal, log });

  return {
    /** Starts dispatching: a pass now, on every commit of this instance that made work, and every poll. */
    start: scheduler.start,

    wake: scheduler.wake,

    /**
     * Runs passes until nothing is left to do now, waiting for every attempt (tests drive the dispatcher
     * this way with a controlled clock and sender, instead of timers).
     */
    async runOnce(): Promise<void> {
      for (;;) {
        const work = await pass();
        if (await claims.settle()) continue;
        if (work === 0) return;
      }
    },

    /**
     * Makes every attempt of one environment that is due now on its clock, and waits for each: fans out
     * the pending events, claims what is due, waits, again until nothing is left (the sandbox clock's
     * advance runs the sandbox's this way, at each time it steps to). Returns how many attempts this
     * instance made meanwhile in that environment.
     */
    async drain(livemode: boolean): Promise<number> {
      const before = livemode ? made.live : made.sandbox;
      for (;;) {
        const work = (await claims.fanOutAll()) + (await claims.claimDue(livemode));
        if (await claims.settle()) continue;
        if (work === 0 || scheduler.stopping) return (livemode ? made.live : made.sandbox) - before;
      }
    },

    /** When the environment's next delivery attempt (or lease end) after `after` is due, or null. */
    async nextDue(livemode: boolean, after: Date): Promise<string | null> {
      const [next] = await store.findAll(
        "webhook_deliveries",
        { livemode, status: "pending", next_attempt_at: { $gt: iso(after) } },
        1,
        { by: "next_attempt_at", direction: "asc" },
      );
      return next?.next_attempt_at ?? null;
    },

    /** Stops taking work and waits for the attempts under way to finish and be recorded. */
    async stop(): Promise<void> {
      await scheduler.stop();
      await claims.settle();
    },

    /** Attempts running now in this instance. */
    get inFlight(): number {
      return claims.inFlight;
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;

/**
 * Inside the transaction that resets the sandbox clock by `byMs` back to the server's time `now`
 * (domain/sandbox-clock): every sandbox delivery waiting (a retry, or an attempt under way, its lease)
 * is due as long after now as it was after the sandbox's time before the reset, and never before now;
 * otherwise it would wait for the server's clock to reach the advanced time. Returns how many moved.
 */
export async function pullBackSandboxDeliveries(tx: WebhookTx, byMs: number, now: Date): Promise<number> {
  const waiting = await tx.findAll("webhook_deliveries", {
    livemode: false,
    status: "pending",
    next_attempt_at: { $gt: iso(now) },
  });
  let moved = 0;
  for (const d of waiting) {
    if (d.next_attempt_at === null) continue;
    const due = Math.max(now.getTime(), Date.parse(d.next_attempt_at) - byMs);
    const ok = await tx.update(
      "webhook_deliveries",
      d.id,
      { set: { next_attempt_at: iso(new Date(due)) } },
      { next_attempt_at: d.next_attempt_at },
    );
    if (ok) moved++;
  }
  return moved;
}

/**
 * Inside the transaction that moves the sandbox clock forward by `byMs` (domain/sandbox-clock): every
 * sandbox delivery whose attempt is under way keeps the lease it had, measured in real time, instead of
 * seeing it end at once on the moved clock (which would let another instance send the same attempt).
 * `now` is the sandbox's time before the move. Returns how many leases it extended.
 */
export async function extendLeases(tx: WebhookTx, byMs: number, now: Date): Promise<number> {
  const leased = await tx.findAll("webhook_deliveries", {
    livemode: false,
    status: "pending",
    next_attempt_at: { $gt: iso(now) },
  });
  let extended = 0;
  for (const d of leased) {
    if (d.claim === null || d.next_attempt_at === null) continue; // a retry waiting: it is due on the moved clock
    const moved = await tx.update(
      "webhook_deliveries",
      d.id,
      { set: { next_attempt_at: iso(new Date(Date.parse(d.next_attempt_at) + byMs)) } },
      { claim: d.claim, next_attempt_at: d.next_attempt_at },
    );
    if (moved) extended++;
  }
  return extended;
}
