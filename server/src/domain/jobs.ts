import type { AcquirerNotifications } from "./acquirer-notifications/notifications.ts";
import type { Cashouts } from "./cashouts/cashouts.ts";
import type { Charges } from "./charges/charges.ts";
import type { AppStore } from "./collections.ts";
import type { ConsoleSessions } from "./console-sessions/console-sessions.ts";
import type { Disputes } from "./disputes/disputes.ts";
import type { Fraud } from "./fraud/index.ts";
import type { Now } from "./kernel/caller.ts";
import type { Clock } from "./kernel/clock.ts";
import { iso } from "./kernel/time.ts";
import { settleDue } from "./ledger/ledger.ts";
import type { RequestLog } from "./request-log/request-log.ts";
import type { SandboxClock } from "./sandbox-clock/sandbox-clock.ts";
import type { Events } from "./webhooks/events.ts";
import type { Webhooks } from "./webhooks/index.ts";
import type { StreamLeases } from "./webhooks/stream-leases.ts";

// The background jobs' work (server/src/startup/jobs.ts runs each pass every JOBS_INTERVAL_SECONDS, or
// on the housekeeping interval): each one a call into the area that owns the records it moves.

/** The areas the jobs call into (domain/index.ts createDomain). */
export interface JobAreas {
  store: AppStore;
  clock: Clock;
  now: Now;
  sandboxClock: Pick<SandboxClock, "refresh">;
  charges: Pick<Charges, "expireDue" | "recoverIntentsDue" | "expireReviewsDue">;
  cashouts: Pick<Cashouts, "advance">;
  disputes: Pick<Disputes, "openScheduledDue" | "expireDue">;
  acquirerNotifications: Pick<AcquirerNotifications, "applyPending">;
  fraud: Pick<Fraud, "sweepCounters">;
  events: Pick<Events, "sweep">;
  webhooks: Pick<Webhooks, "sweepLog">;
  requestLog: Pick<RequestLog, "sweep">;
  streamLeases: Pick<StreamLeases, "sweep">;
  consoleSessions: Pick<ConsoleSessions, "sweep">;
}

export function domainJobs(areas: JobAreas) {
  const { store, clock, now, sandboxClock, charges, cashouts, disputes, acquirerNotifications } = areas;
  const { fraud, events, webhooks, requestLog, streamLeases, consoleSessions } = areas;
  /** A job for both environments, each on its own clock (the sandbox's read again from the store first). */
  const inBoth = async (job: (livemode: boolean) => Promise<number>): Promise<number> => {
    await sandboxClock.refresh();
    return (await job(true)) + (await job(false));
  };

  return {
    /** Expires unpaid local payments, and unauthenticated card charges (3-D Secure), whose next_action has run out. */
    expire: () => inBoth((livemode) => charges.expireDue(livemode)),
    /** Resolves calls to the acquirer left in doubt by a crash (domain/charges/intents.ts). */
    recoverIntents: () => inBoth((livemode) => charges.recoverIntentsDue(livemode)),
    /** Voids charges whose fraud review was left open past its window. */
    expireReviews: () => inBoth((livemode) => charges.expireReviewsDue(livemode)),
    /** Moves pending credits whose settlement time has come to available. */
    settle: () => inBoth((livemode) => settleDue(store, clock, livemode)),
    /** Sends pending cashouts whose time has come, and records the outcome of those in transit. */
    payouts: () =>
      inBoth(async (livemode) => {
        const { sent, finished } = await cashouts.advance(livemode);
        return sent + finished;
      }),
    /** Opens the disputes the sandbox's dispute test cards scheduled, once their time has come. */
    openScheduledDisputes: () => inBoth((livemode) => disputes.openScheduledDue(livemode)),
    /** Applies the acquirer's notifications a crash left unapplied, and those waiting for their object. */
    applyNotifications: () => inBoth((livemode) => acquirerNotifications.applyPending(livemode)),
    /** Closes disputes whose evidence deadline passed without a response (chargebacks lost, inquiries closed). */
    expireDisputes: () => inBoth((livemode) => disputes.expireDue(livemode)),
    /** Forgets Idempotency-Keys older than their time to live. */
    sweepIdempotency: () => store.deleteMany("idempotency", { expires_at: { $lt: iso(now()) } }),
    /** Deletes request-log records older than the retention period. */
    sweepRequestLog: () => requestLog.sweep(),
    /** Forgets velocity counts that have left every window. */
    sweepFraudCounters: async () => {
      await sandboxClock.refresh();
      return fraud.sweepCounters();
    },
    /** Deletes events older than their retention (EVENT_RETENTION_DAYS) whose deliveries are made. */
    sweepEvents: async () => {
      await sandboxClock.refresh();
      return events.sweep();
    },
    /** Forgets finished webhook deliveries older than the attempt log's retention. */
    sweepWebhookLog: async () => {
      await sandboxClock.refresh();
      return webhooks.sweepLog();
    },
    /** Deletes event-stream slots whose lease ended long ago (an instance died holding them). */
    sweepStreamLeases: () => streamLeases.sweep(),
    /** Deletes console sessions past their end. */
    sweepConsoleSessions: () => consoleSessions.sweep(),
  };
}
