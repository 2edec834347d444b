import { z } from "zod";
import type { WebhookOptions } from "../domain/webhooks/index.ts";
import { DEFAULT_LIVE_SCHEDULE, DEFAULT_SANDBOX_SCHEDULE, parseSchedule } from "../domain/webhooks/schedule.ts";
import { messageOf } from "../guards.ts";
import { bool, group, int, setting } from "./kit.ts";

// Webhooks and events (spec/resources/webhooks.tsp, events.tsp): the dispatcher, its retries, what
// endpoints may be, and how long events and the attempt log are kept.

/** A retry schedule: comma-separated whole seconds (domain/webhooks/schedule.ts). */
const schedule = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .superRefine((list, ctx) => {
      try {
        parseSchedule(list);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: messageOf(err) });
      }
    });

export const webhookSettings = group("webhooks and events", {
  EVENT_RETENTION_DAYS: setting(
    int(1, 3650).default(30),
    "How many days events are kept (GET /v1/events, the event stream, redelivery), on their environment's clock; older ones are deleted by the housekeeping sweep (Stripe keeps 30 days). An event whose deliveries are not yet made is kept until they are.",
  ),
  WEBHOOK_DISPATCHER: setting(
    bool.default(true),
    "Whether this instance runs the webhook dispatcher (any number of instances may).",
  ),
  WEBHOOK_TIMEOUT_SECONDS: setting(
    int(1, 60).default(10),
    "One delivery attempt's time limit: a 2xx must arrive within it.",
  ),
  WEBHOOK_RETRY_SCHEDULE: setting(
    schedule(DEFAULT_LIVE_SCHEDULE),
    "Seconds before each automatic retry in production (±20 % jitter): ~3 days by default.",
  ),
  WEBHOOK_SANDBOX_RETRY_SCHEDULE: setting(
    schedule(DEFAULT_SANDBOX_SCHEDULE),
    "The same for the sandbox: ~2 hours by default.",
  ),
  WEBHOOK_DISABLE_AFTER_SECONDS: setting(
    int(0, 365 * 86400).default(5 * 86400),
    "An endpoint failing every attempt for this long is disabled (webhook_endpoint.disabled); 0: never.",
  ),
  WEBHOOK_CONCURRENCY: setting(int(1, 1000).default(50), "Delivery attempts in flight at once per instance."),
  WEBHOOK_ENDPOINT_CONCURRENCY: setting(int(1, 1000).default(10), "Delivery attempts in flight at once per endpoint."),
  WEBHOOK_POLL_INTERVAL_MS: setting(
    int(20, 60_000).default(1000),
    "How often each instance looks in the store for work other instances made and retries that came due.",
  ),
  WEBHOOK_SANDBOX_ALLOW_LOOPBACK: setting(
    bool.default(true),
    "Whether sandbox endpoints may be loopback addresses (a receiver on localhost).",
  ),
  WEBHOOK_SANDBOX_ALLOW_PRIVATE: setting(
    bool.default(false),
    "Whether sandbox endpoints may be private, CGNAT, link-local or unique-local addresses (never metadata).",
  ),
  WEBHOOK_LOG_RETENTION_DAYS: setting(
    int(1, 3650).default(30),
    "Finished deliveries (the attempt log) are kept this long.",
  ),
});

/** The webhooks area's options (domain/webhooks/index.ts WebhookOptions). */
export function webhookOptions(config: {
  WEBHOOK_TIMEOUT_SECONDS: number;
  WEBHOOK_RETRY_SCHEDULE: string;
  WEBHOOK_SANDBOX_RETRY_SCHEDULE: string;
  WEBHOOK_DISABLE_AFTER_SECONDS: number;
  WEBHOOK_CONCURRENCY: number;
  WEBHOOK_ENDPOINT_CONCURRENCY: number;
  WEBHOOK_POLL_INTERVAL_MS: number;
  WEBHOOK_SANDBOX_ALLOW_LOOPBACK: boolean;
  WEBHOOK_SANDBOX_ALLOW_PRIVATE: boolean;
  WEBHOOK_LOG_RETENTION_DAYS: number;
}): WebhookOptions {
  return {
    timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    liveSchedule: parseSchedule(config.WEBHOOK_RETRY_SCHEDULE),
    sandboxSchedule: parseSchedule(config.WEBHOOK_SANDBOX_RETRY_SCHEDULE),
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER_SECONDS * 1000,
    concurrency: config.WEBHOOK_CONCURRENCY,
    endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
    sandboxAllowLoopback: config.WEBHOOK_SANDBOX_ALLOW_LOOPBACK,
    sandboxAllowPrivate: config.WEBHOOK_SANDBOX_ALLOW_PRIVATE,
    logRetentionDays: config.WEBHOOK_LOG_RETENTION_DAYS,
  };
}
