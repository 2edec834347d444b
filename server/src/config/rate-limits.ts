import type { RateLimitSettings } from "../http/rate-limits.ts";
import { group, int, setting } from "./kit.ts";

// Rate limits (docs/api.md "Rate limits"; http/rate-limits.ts) and the event streams one key may hold.

export const rateLimitGroup = group("rate limits", {
  RATE_LIMIT_LIVE_PER_SECOND: setting(
    int(1, 1_000_000).default(100),
    "Requests per second one production key may make (429 beyond; Stripe allows about 100).",
  ),
  RATE_LIMIT_TEST_PER_SECOND: setting(
    int(1, 1_000_000).default(25),
    "Requests per second one sandbox key may make (Stripe allows about 25).",
  ),
  RATE_LIMIT_ENVIRONMENT_KEYS: setting(
    int(1, 1_000_000).default(4),
    "How many keys' worth of requests per second all the keys of one environment may make together (its per-key limit times this: 100 a second in the sandbox, 400 in production by default). A `*` key can make keys, each with its own per-key quota; this ceiling keeps minting keys from multiplying them.",
  ),
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: setting(
    int(1, 1_000_000).default(60),
    "Requests per minute one client address may make without a valid key (bad keys, no key).",
  ),
  RATE_LIMIT_PAYMENT_LINK_PER_MINUTE: setting(
    int(1, 1_000_000).default(120),
    "Payments per minute one payment link's public pay operation accepts, from all payers together.",
  ),
  RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE: setting(
    int(1, 1_000_000).default(10),
    "Payment attempts per minute one client address may make through payment links' public pay operation.",
  ),
  EVENT_STREAMS_PER_KEY: setting(
    int(1, 1000).default(5),
    "Event streams (GET /v1/events/stream) one key may hold open at once, across every worker and instance on the store (slots leased in the store: domain/webhooks/stream-leases.ts); one more is refused with 429. Each open stream is woken by commits that record events.",
  ),
});

/** The rate limiters' settings (http/rate-limits.ts). */
export function rateLimitSettings(config: {
  RATE_LIMIT_LIVE_PER_SECOND: number;
  RATE_LIMIT_TEST_PER_SECOND: number;
  RATE_LIMIT_ENVIRONMENT_KEYS: number;
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: number;
  RATE_LIMIT_PAYMENT_LINK_PER_MINUTE: number;
  RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE: number;
}): RateLimitSettings {
  return {
    livePerSecond: config.RATE_LIMIT_LIVE_PER_SECOND,
    testPerSecond: config.RATE_LIMIT_TEST_PER_SECOND,
    environmentKeys: config.RATE_LIMIT_ENVIRONMENT_KEYS,
    anonymousPerMinute: config.RATE_LIMIT_ANONYMOUS_PER_MINUTE,
    paymentLinkPerMinute: config.RATE_LIMIT_PAYMENT_LINK_PER_MINUTE,
    paymentAddressPerMinute: config.RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE,
  };
}
