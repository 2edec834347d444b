import type { Clock } from "../kernel/clock.ts";
import { randomBase62 } from "../kernel/ids.ts";
import { type DomainLog, silentLog } from "../kernel/log.ts";
import { type DomainObserver, unobserved } from "../kernel/observer.ts";
import { iso } from "../kernel/time.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { type AttemptSettings, attemptLog } from "./attempts.ts";
import { deliveryAttempts, type Launch } from "./delivery-attempt.ts";
import { FANOUT_BATCH, fanOut } from "./fan-out.ts";
import type { OutboxSignal } from "./outbox.ts";
import type { WebhookDeliveryDoc, WebhookStore, WebhookTx } from "./records.ts";
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
//    already claimed by it, saving a round trip.
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
/** The least time between the starts of two passes, however often commits wake the dispatcher. */
const MIN_PASS_GAP_MS = 10;

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

export function createDispatcher(deps: DispatcherDeps) {
  const { store, clock, settings } = deps;
  const random = deps.random ?? Math.random;
  const log = deps.log ?? silentLog;
  const observer = deps.observer ?? unobserved;
  const leaseMs = settings.timeoutMs + LEASE_MARGIN_MS;

  const instance = randomBase62(12);
  let claims = 0;
  const newClaim = () => `${instance}:${++claims}`;

  /** Attempts running in this instance, by delivery id, and how many per endpoint. */
  const inFlight = new Map<string, Promise<void>>();
  const perEndpoint = new Map<string, number>();

  let started = false;
  let stopping = false;
  let again = false;
  /** Whether a request made during the pass should not wait for MIN_PASS_GAP_MS (see wake). */
  let againAtOnce = false;
  let loop: Promise<void> | null = null;
  /** When the last pass started (performance.now()), for MIN_PASS_GAP_MS. */
  let lastPass = Number.NEGATIVE_INFINITY;
  let poll: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;

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
  const freeSlots = () => settings.concurrency - inFlight.size;

  /** Fans out one batch of pending events, and starts the deliveries it claimed on the way. */
  async function fanOutBatch(): Promise<number> {
    const { events, launches } = await fanOut(
      { store, clock, endpointConcurrency: settings.endpointConcurrency, leaseMs, newClaim },
      () => ({ free: stopping ? 0 : freeSlots(), load: new Map(perEndpoint) }),
    );
    for (const l of launches) launch(l);
    return events;
  }

  /** Claims one environment's due deliveries (on its clock) as far as there is room, and starts them. */
  async function claimDue(livemode: boolean): Promise<number> {
    const free = freeSlots();
    if (free <= 0 || stopping) return 0;
    const at = clock.now(livemode);
    // Soonest due first, so a backlog is worked off in order and no delivery waits behind newer ones.
    const due = await store.findAll(
      "webhook_deliveries",
      { livemode, status: "pending", next_attempt_at: { $lte: iso(at) } },
      Math.min(free * 2, 200),
      { by: "next_attempt_at", direction: "asc" },
    );
    const load = new Map(perEndpoint);
    const picked: WebhookDeliveryDoc[] = [];
    for (const d of due) {
      if (picked.length >= free) break;
      if (inFlight.has(d.id) || (load.get(d.endpoint_id) ?? 0) >= settings.endpointConcurrency) continue;
      picked.push(d);
      load.set(d.endpoint_id, (load.get(d.endpoint_id) ?? 0) + 1);
    }
    if (picked.length === 0) return 0;
    const leaseEnd = iso(new Date(at.getTime() + leaseMs));
    let claimed: WebhookDeliveryDoc[] = [];
    await store.transaction(async (tx) => {
      claimed = [];
      for (const d of picked) {
        const won = await tx.update(
          "webhook_deliveries",
          d.id,
          { set: { next_attempt_at: leaseEnd, claim: newClaim() } },
          // Exactly the state read: if another instance claimed it meanwhile, this changes nothing.
          { status: "pending", next_attempt_at: d.next_attempt_at, claim: d.claim },
        );
        if (won) claimed.push(won);
      }
    });
    for (const delivery of claimed) launch({ delivery });
    return claimed.length;
  }

  function launch(l: Launch): void {
    const { delivery } = l;
    perEndpoint.set(delivery.endpoint_id, (perEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
    const run = sending
      .attempt(l)
      .catch((err: unknown) => log.error({ err, delivery: delivery.id }, "webhook attempt failed"))
      .finally(() => {
        inFlight.delete(delivery.id);
        const left = (perEndpoint.get(delivery.endpoint_id) ?? 1) - 1;
        if (left > 0) perEndpoint.set(delivery.endpoint_id, left);
        else perEndpoint.delete(delivery.endpoint_id);
        // A slot is free, and the attempt may have recorded an event (webhook_endpoint.disabled) that
        // the dispatcher's own unwatched writes did not announce: look for work now.
        wake();
      });
    inFlight.set(delivery.id, run);
  }

  /** One pass: fan out every pending event, then claim what is due as far as there is room. */
  async function pass(): Promise<number> {
    let work = 0;
    for (;;) {
      const n = await fanOutBatch();
      work += n;
      if (n < FANOUT_BATCH) break;
    }
    return work + (await claimDue(true)) + (await claimDue(false));
  }

  async function run(): Promise<void> {
    lastPass = performance.now();
    again = false;
    againAtOnce = false;
    try {
      await pass();
    } catch (err) {
      log.error({ err }, "webhook dispatcher pass failed; the next poll retries");
    } finally {
      loop = null;
      if (again) wake(!againAtOnce);
    }
  }

  /**
   * Asks for a pass soon; passes never overlap, and a request during one makes one more after it.
   * A commit's request (`afterCommit`) waits until MIN_PASS_GAP_MS after the last pass began: under
   * load every commit asks, and spaced out, one pass fans out the events of many commits at once, for
   * a delivery that starts a few milliseconds later at most (docs/webhooks.md "How delivery works").
   * Any other request (an attempt ended and freed its slot) is served at once.
   */
  function wake(afterCommit = false): void {
    if (!started || stopping) return;
    if (loop) {
      again = true;
      againAtOnce ||= !afterCommit;
      return;
    }
    const wait = afterCommit ? lastPass + MIN_PASS_GAP_MS - performance.now() : 0;
    loop = new Promise<void>((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve))).then(run);
  }

  return {
    /** Starts dispatching: a pass now, on every commit of this instance that made work, and every poll. */
    start(): void {
      if (started) return;
      started = true;
      unsubscribe = deps.signal?.subscribe(() => wake(true)) ?? null;
      poll = setInterval(wake, settings.pollIntervalMs);
      poll.unref();
      wake();
    },

    wake,

    /**
     * Runs passes until nothing is left to do now, waiting for every attempt (tests drive the dispatcher
     * this way with a controlled clock and sender, instead of timers).
     */
    async runOnce(): Promise<void> {
      for (;;) {
        const work = await pass();
        if (inFlight.size > 0) {
          await Promise.all(inFlight.values());
          continue;
        }
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
        let work = 0;
        for (;;) {
          const n = await fanOutBatch();
          work += n;
          if (n < FANOUT_BATCH) break;
        }
        work += await claimDue(livemode);
        if (inFlight.size > 0) {
          await Promise.all(inFlight.values());
          continue;
        }
        if (work === 0 || stopping) return (livemode ? made.live : made.sandbox) - before;
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
      stopping = true;
      if (poll) clearInterval(poll);
      unsubscribe?.();
      await loop;
      await Promise.allSettled([...inFlight.values()]);
    },

    /** Attempts running now in this instance. */
    get inFlight(): number {
      return inFlight.size;
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
