import type { components } from "@payments/contract/types";
import { DuplicateKeyError } from "../../store/port.ts";
import type { Cashouts } from "../cashouts/cashouts.ts";
import type { Charges } from "../charges/charges.ts";
import type { Disputes } from "../disputes/disputes.ts";
import { forgetCountersAfter } from "../fraud/counters.ts";
import type { Caller } from "../kernel/caller.ts";
import type { SandboxClockState, SettableClock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { sandboxOnly } from "../kernel/environment.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { idNow } from "../kernel/ids.ts";
import { iso } from "../kernel/time.ts";
import { nextSettlement, settleDue } from "../ledger/ledger.ts";
import type { PaymentLinks } from "../payment-links/payment-links.ts";
import { type Dispatcher, extendLeases, pullBackSandboxDeliveries } from "../webhooks/dispatcher.ts";
import { restartSandboxFailureWindows } from "../webhooks/endpoints.ts";
import type { SandboxClockStore } from "./records.ts";

// The sandbox clock (spec/resources/sandbox-clock.tsp; docs/sandbox-clock.md): the sandbox's time is the
// server's plus an offset kept in the store, one document per store, so every instance on the store
// shares it and no other deployment ever sees it. The offset grows with each advance; a reset
// (resetSandboxClock) takes it back to zero and starts a new epoch. Each instance holds the offset in its
// clock (kernel/clock.ts) and reads it again from the store before every sandbox request (http/app.ts),
// every job pass, every advance and reset, so a move made on one instance reaches the others at their
// next sandbox request or job pass.
//
// A reset keeps everything stored as it is (the objects stay valid: their timestamps were RFC 3339 and
// their cards within the card rules, MAX_OFFSET_MS), so what the sandbox made on the advanced clock may
// carry times after the sandbox's now. What depends on time after a reset:
// - Due times that belong to an object and are shown (a local payment's `expires_at`, a capture's
//   `available_on`, a review window, a cashout's next step, a payment link's `expires_at`) are kept: that
//   work runs when the sandbox's clock reaches them again (advance to run it).
// - Webhook deliveries waiting (a retry, an attempt's lease) are moved back by the offset, no earlier
//   than now: they are the sandbox's own machinery, and would otherwise not run for up to ten years.
// - An endpoint's failure window that began after the new now begins again now (auto-disable).
// - Velocity counters of minutes after the new now are deleted: they would count again years later.
// - Order: ids carry the server's time (kernel/ids.ts), so the event stream follows the order events were
//   made across a reset (webhooks/events.ts); lists stay ordered by created_at, newest first, so what
//   was made on the advanced clock lists before what is made after the reset until the clock passes it.
// - Retention: sweeps of events and the attempt log also count age on the server's clock, so what was
//   made on the advanced clock is not kept for years.
//
// An advance is a small simulation: it moves the clock to the next time something of the sandbox
// becomes due (a settlement, an expiry, a review window's end, a cashout's next step, a test card's
// dispute, an evidence deadline, a webhook retry), runs all that is due then, and goes on from there until it reaches the target; so what one
// step schedules (a cashout sent, then asked about a transit period later; a retry after a failed one)
// runs on the way, at its own time, in order. One advance at a time per store: it holds the clock
// document (`advancing_until`) while it runs.

/** The clock document's id: one per store. */
const CLOCK_ID = "sandbox";
/** The contract's limit on one advance (SandboxClockAdvanceRequest): 366 days. */
const MAX_ADVANCE_MS = 366 * 86_400_000;
/**
 * The most the sandbox's time may run ahead of the server's, in all: 3,660 days (about ten years). Without
 * a bound, repeated advances took it past year 9999 (timestamps no longer RFC 3339, lists sorted wrongly)
 * and past 2100, the last card expiry year a token takes (TokenCreate.exp_year), so no card could pay
 * again; the clock never goes back, so that was for good. Ten years ahead keeps every timestamp in RFC
 * 3339 and the sandbox's cards usable until the server's own clock nears 2090.
 */
export const MAX_OFFSET_MS = 3660 * 86_400_000;
/** How many reset times the clock document keeps (the event stream's epochs; webhooks/events.ts). */
export const MAX_RESETS_KEPT = 100;
/** How long an advance holds the clock without renewing (it renews at every step). */
const HOLD_MS = 60_000;
/** Passes over the due work at one time before giving up on it settling (each pass is bounded work). */
const MAX_PASSES = 1_000;

export interface SandboxClockReading {
  now: Date;
  offsetMs: number;
}

/** What an advance ran, by kind: the contract's SandboxClockWork (spec/resources/sandbox-clock.tsp). */
export type SandboxClockWork = components["schemas"]["SandboxClockWork"];

export interface SandboxClockResult {
  from: Date;
  clock: SandboxClockReading;
  ran: SandboxClockWork;
}

/** advanceSandboxClock's body (the contract's SandboxClockAdvanceRequest). */
export type SandboxClockAdvanceInput = components["schemas"]["SandboxClockAdvanceRequest"];

export interface SandboxClockDeps {
  store: SandboxClockStore;
  clock: SettableClock;
  charges: Charges;
  cashouts: Cashouts;
  paymentLinks: PaymentLinks;
  disputes: Disputes;
  dispatcher: Dispatcher;
}

const noWork = (): SandboxClockWork => ({
  balances_settled: 0,
  charges_expired: 0,
  reviews_expired: 0,
  cashouts_sent: 0,
  cashouts_finished: 0,
  payment_links_expired: 0,
  disputes_opened: 0,
  disputes_closed: 0,
  webhook_attempts: 0,
  steps: 0,
});

export function createSandboxClock(deps: SandboxClockDeps): SandboxClock {
  const { store, clock, charges, cashouts, disputes, dispatcher } = deps;
  const SANDBOX = false;

  /** Reads the store's offset (and epoch) into this instance's clock. */
  async function refresh(): Promise<void> {
    const doc = await store.get("sandbox_clock", CLOCK_ID);
    if (doc) {
      clock.adopt({
        epoch: doc.epoch ?? 0,
        offsetMs: doc.offset_ms,
        resets: (doc.resets ?? []).map((at) => Date.parse(at)),
      });
    }
  }

  const reading = (): SandboxClockReading => ({ now: clock.now(SANDBOX), offsetMs: clock.offsetMs() });

  /** The target of an advance, checked against the contract's rules (exactly one of seconds and to; never back). */
  function targetOf(input: SandboxClockAdvanceInput, from: Date): Date {
    if ((input.seconds === undefined) === (input.to === undefined)) {
      const message = "send exactly one of seconds and to";
      throw new DomainError("invalid_request", `seconds and to: ${message}`, {
        param: "seconds",
        errors: [
          { param: "seconds", message },
          { param: "to", message },
        ],
      });
    }
    const param = input.seconds !== undefined ? "seconds" : "to";
    let to: Date;
    if (input.seconds !== undefined) to = new Date(from.getTime() + input.seconds * 1000);
    else {
      to = new Date(input.to ?? "");
      if (Number.isNaN(to.getTime())) throw invalid("to", "must be an RFC 3339 date-time");
      if (to.getTime() < from.getTime()) {
        throw invalid("to", `must not be before the sandbox's time now (${iso(from)}): the clock never goes back`);
      }
      if (to.getTime() - from.getTime() > MAX_ADVANCE_MS) {
        throw invalid("to", `must be at most 366 days after the sandbox's time now (${iso(from)})`);
      }
    }
    const limit = new Date(clock.real().getTime() + MAX_OFFSET_MS);
    if (to.getTime() > limit.getTime()) {
      const left = Math.max(0, Math.floor((limit.getTime() - from.getTime()) / 1000));
      throw invalid(
        param,
        `would put the sandbox's clock more than 3660 days (about ten years) ahead of real time, the most it may run ahead: it can move ${left} seconds more now, to ${iso(limit)} at the latest`,
      );
    }
    return to;
  }

  /** Takes the clock for one advance, or refuses with 409 while another one holds it. */
  async function hold(): Promise<void> {
    const at = clock.real();
    const until = iso(new Date(at.getTime() + HOLD_MS));
    try {
      await store.insert("sandbox_clock", {
        id: CLOCK_ID,
        livemode: false,
        created_at: iso(at),
        updated_at: iso(at),
        offset_ms: clock.offsetMs(),
        advancing_until: until,
      });
      return;
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
    }
    const doc = await store.get("sandbox_clock", CLOCK_ID);
    const free = doc !== null && (doc.advancing_until === null || doc.advancing_until < iso(at));
    const taken =
      free &&
      (await store.update(
        "sandbox_clock",
        CLOCK_ID,
        { set: { advancing_until: until } },
        { advancing_until: doc.advancing_until },
      ));
    if (!taken) {
      throw new DomainError(
        "conflict",
        "The sandbox clock is being advanced or reset by another request; retry once it has answered.",
      );
    }
  }

  /** Gives the clock back (after a failure: the answer's own transaction gives it back on success). */
  async function release(): Promise<void> {
    await store.update("sandbox_clock", CLOCK_ID, { set: { advancing_until: null } });
  }

  /**
   * Moves the clock forward to `time` (never back: the server's clock ran meanwhile, so the move may be
   * a little shorter, or none), renewing the hold; the leases of sandbox deliveries under way move
   * with it, in the same transaction.
   */
  async function moveTo(time: Date): Promise<void> {
    const before = clock.now(SANDBOX);
    const offset = Math.max(clock.offsetMs(), time.getTime() - clock.real().getTime());
    const by = offset - clock.offsetMs();
    if (by <= 0) return;
    await store.transaction(async (tx) => {
      const at = clock.real();
      const moved = await tx.update(
        "sandbox_clock",
        CLOCK_ID,
        {
          set: {
            offset_ms: offset,
            advancing_until: iso(new Date(at.getTime() + HOLD_MS)),
            updated_at: iso(at),
          },
        },
        { offset_ms: { $lt: offset } },
      );
      if (!moved) throw new Error("the sandbox clock moved while this advance held it");
      await extendLeases(tx, by, before);
    });
    clock.raiseOffset(offset);
  }

  /** Runs everything of the sandbox that is due on its clock now, until nothing is; adds what ran to `ran`. */
  async function runDue(ran: SandboxClockWork): Promise<void> {
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      // Calls to the acquirer left in doubt whose lock the advance ran out are resolved first
      // (charges/intents.ts); not counted in the advance's answer, which names only what its caller made.
      await charges.recoverIntentsDue(SANDBOX);
      const settled = await settleDue(store, clock, SANDBOX);
      const expired = await charges.expireDue(SANDBOX);
      const reviews = await charges.expireReviewsDue(SANDBOX);
      const { sent, finished } = await cashouts.advance(SANDBOX);
      const opened = await disputes.openScheduledDue(SANDBOX);
      const closed = await disputes.expireDue(SANDBOX);
      // Last, so the first attempts of the events the work above recorded are made in this pass.
      const attempts = await dispatcher.drain(SANDBOX);
      ran.balances_settled += settled;
      ran.charges_expired += expired;
      ran.reviews_expired += reviews;
      ran.cashouts_sent += sent;
      ran.cashouts_finished += finished;
      ran.disputes_opened += opened;
      ran.disputes_closed += closed;
      ran.webhook_attempts += attempts;
      if (settled + expired + reviews + sent + finished + opened + closed + attempts === 0) return;
    }
  }

  /** The soonest time after `after` at which something of the sandbox becomes due, or null. */
  async function nextDue(after: Date): Promise<Date | null> {
    const times = await Promise.all([
      nextSettlement(store, SANDBOX, after),
      charges.nextExpiry(SANDBOX, after),
      charges.nextReviewExpiry(SANDBOX, after),
      cashouts.nextStep(SANDBOX, after),
      disputes.nextScheduled(SANDBOX, after),
      disputes.nextDeadline(SANDBOX, after),
      dispatcher.nextDue(SANDBOX, after),
    ]);
    const soonest = times.filter((t): t is string => t !== null).sort()[0];
    return soonest === undefined ? null : new Date(soonest);
  }

  return {
    refresh,

    /** GET /v1/sandbox/clock. */
    async read(caller: Caller): Promise<SandboxClockReading> {
      sandboxOnly(caller.livemode, "operation", "/v1/sandbox/clock");
      await refresh();
      return reading();
    },

    /** POST /v1/sandbox/clock/advance. */
    async advance(caller: Caller, input: SandboxClockAdvanceInput): Promise<SandboxClockResult> {
      sandboxOnly(caller.livemode, "operation", "/v1/sandbox/clock/advance");
      await refresh();
      const from = clock.now(SANDBOX);
      const target = targetOf(input, from);
      await hold();
      const ran = noWork();
      try {
        await runDue(ran);
        for (;;) {
          const next = await nextDue(clock.now(SANDBOX));
          if (next === null || next.getTime() >= target.getTime()) break;
          await moveTo(next);
          ran.steps++;
          await runDue(ran);
        }
        await moveTo(target);
        ran.steps++;
        await runDue(ran);
        ran.payment_links_expired = await deps.paymentLinks.expiringBetween(SANDBOX, from, target);
      } catch (err) {
        await release().catch(() => {});
        throw err;
      }
      // The answer commits with giving the clock back (kernel/commit.ts: with an Idempotency-Key, its
      // outcome too). A retry after a crash before this point advances again from where the clock stopped.
      return commit(store, caller, async (tx) => {
        await tx.update("sandbox_clock", CLOCK_ID, {
          set: { advancing_until: null, updated_at: iso(clock.real()) },
        });
        return { from, clock: reading(), ran };
      });
    },

    /**
     * POST /v1/sandbox/clock/reset: the sandbox's time back to the server's (offset 0, a new epoch),
     * keeping what is stored (see the top of this file for what that means for its due times). Holds
     * the clock like an advance, so it waits for none and an advance running makes it a 409. At offset
     * 0 it changes nothing (no new epoch).
     */
    async reset(caller: Caller): Promise<SandboxClockResult> {
      sandboxOnly(caller.livemode, "operation", "/v1/sandbox/clock/reset");
      await refresh();
      const from = clock.now(SANDBOX);
      const offset = clock.offsetMs();
      if (offset === 0) return commit(store, caller, async () => ({ from, clock: reading(), ran: noWork() }));
      await hold();
      let state: SandboxClockState | undefined;
      let result: SandboxClockResult;
      try {
        result = await commit(store, caller, async (tx) => {
          const doc = await tx.get("sandbox_clock", CLOCK_ID);
          const at = clock.real();
          const epoch = (doc?.epoch ?? 0) + 1;
          // On the clock ids are stamped with: the event stream tells epochs apart by id (webhooks/events.ts).
          const resets = [...(doc?.resets ?? []), iso(new Date(idNow()))].slice(-MAX_RESETS_KEPT);
          await tx.update("sandbox_clock", CLOCK_ID, {
            set: { offset_ms: 0, epoch, resets, advancing_until: null, updated_at: iso(at) },
          });
          await pullBackSandboxDeliveries(tx, offset, at);
          // An endpoint failing since a time after the new now: its failure window begins again now.
          await restartSandboxFailureWindows(tx, at);
          await forgetCountersAfter(tx, SANDBOX, at);
          state = { epoch, offsetMs: 0, resets: resets.map((r) => Date.parse(r)) };
          return { from, clock: { now: at, offsetMs: 0 }, ran: noWork() };
        });
      } catch (err) {
        await release().catch(() => {});
        throw err;
      }
      if (state) clock.adopt(state);
      return result;
    },
  };
}

/** The sandbox clock's service (spec: the SandboxClock operations). */
export interface SandboxClock {
  refresh: () => Promise<void>;
  /** GET /v1/sandbox/clock. */
  read(caller: Caller): Promise<SandboxClockReading>;
  /** POST /v1/sandbox/clock/advance. */
  advance(caller: Caller, input: SandboxClockAdvanceInput): Promise<SandboxClockResult>;
  /**
   * POST /v1/sandbox/clock/reset: the sandbox's time back to the server's (offset 0, a new epoch),
   * keeping what is stored (see the top of this file for what that means for its due times). Holds
   * the clock like an advance, so it waits for none and an advance running makes it a 409. At offset
   * 0 it changes nothing (no new epoch).
   */
  reset(caller: Caller): Promise<SandboxClockResult>;
}
