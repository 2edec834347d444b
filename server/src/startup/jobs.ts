import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { Domain } from "../domain/index.ts";

const HOUSEKEEPING_INTERVAL_MS = 10 * 60_000;

/** A background job's schedule; stop() ends it and resolves once a run under way has finished. */
export interface Scheduled {
  readonly name: string;
  /** Whether the schedule still runs (stop() not called). */
  readonly active: boolean;
  stop(): Promise<void>;
}

/** Runs `job` every `ms`, skipping a turn while the previous run is still going; failures are logged. */
function every(ms: number, name: string, logger: Logger, job: () => Promise<unknown>): Scheduled {
  let current: Promise<void> | null = null;
  let active = true;
  const timer = setInterval(() => {
    if (current) return;
    current = job()
      .then(
        () => {},
        (err: unknown) => logger.error({ err, job: name }, "background job failed"),
      )
      .finally(() => {
        current = null;
      });
  }, ms);
  timer.unref();
  return {
    name,
    get active() {
      return active;
    },
    async stop() {
      active = false;
      clearInterval(timer);
      await current;
    },
  };
}

/**
 * The background jobs. Each pass is safe on several instances at once (every change in it is
 * conditional); a pass still running when the next is due is not started twice.
 */
export function startJobs(
  config: Pick<Config, "JOBS_INTERVAL_SECONDS">,
  domain: Pick<Domain, "jobs">,
  limits: { sweep(): Promise<unknown> },
  logger: Logger,
): Scheduled[] {
  const { jobs } = domain;
  const interval = config.JOBS_INTERVAL_SECONDS * 1000;
  return [
    every(interval, "charge jobs", logger, () =>
      Promise.all([jobs.recoverIntents(), jobs.expire(), jobs.expireReviews(), jobs.settle()]),
    ),
    every(interval, "payout job", logger, () => jobs.payouts()),
    every(interval, "acquirer notifications job", logger, () => jobs.applyNotifications()),
    every(interval, "dispute jobs", logger, () => Promise.all([jobs.openScheduledDisputes(), jobs.expireDisputes()])),
    every(HOUSEKEEPING_INTERVAL_MS, "retention sweep", logger, () =>
      Promise.all([
        jobs.sweepIdempotency(),
        jobs.sweepRequestLog(),
        jobs.sweepEvents(),
        jobs.sweepFraudCounters(),
        jobs.sweepWebhookLog(),
        jobs.sweepConsoleSessions(),
        jobs.sweepStreamLeases(),
        limits.sweep(),
      ]),
    ),
  ];
}
