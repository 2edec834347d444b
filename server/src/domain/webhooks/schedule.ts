// The retry schedule (the contract's WebhookDeliveryHeaders: exponential backoff with jitter, about
// three days in production, about two hours in the sandbox). A schedule is the list of delays, in
// seconds, before each automatic retry: the first attempt is made at once, retry n waits delays[n-1]
// after the attempt before it, with ±20 % jitter so that the deliveries of one outage do not all come
// back at the same second. When the list is used up the delivery is `failed`.

/** Stripe-like: 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, then every 12 h: 13 attempts over ~3.15 days. */
export const DEFAULT_LIVE_SCHEDULE = "60,300,1800,3600,7200,14400,28800,43200,43200,43200,43200,43200";
/** 5 s, 30 s, 2 min, 10 min, 30 min, 1 h: 7 attempts over ~1.7 hours. */
export const DEFAULT_SANDBOX_SCHEDULE = "5,30,120,600,1800,3600";

/** Each delay may be this fraction shorter or longer. */
export const JITTER = 0.2;
const MAX_DELAY_SECONDS = 7 * 86400;
const MAX_RETRIES = 50;

/** Parses a comma-separated list of whole seconds (empty: no retries). Throws a message naming the problem. */
export function parseSchedule(text: string): number[] {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  const delays = trimmed.split(",").map((part) => {
    const s = part.trim();
    if (!/^[0-9]+$/.test(s)) throw new Error(`"${s}" is not a whole number of seconds`);
    const n = Number(s);
    if (n < 1 || n > MAX_DELAY_SECONDS) throw new Error(`${n} is outside 1..${MAX_DELAY_SECONDS} seconds`);
    return n;
  });
  if (delays.length > MAX_RETRIES) throw new Error(`at most ${MAX_RETRIES} retries`);
  return delays;
}

/**
 * The delay in milliseconds before the next automatic attempt, after `attemptsMade` automatic attempts
 * (1 or more) failed; null when no retry is left. `random` gives [0, 1).
 */
export function retryDelayMs(schedule: readonly number[], attemptsMade: number, random: () => number): number | null {
  const seconds = schedule[attemptsMade - 1];
  if (seconds === undefined) return null;
  const factor = 1 + JITTER * (2 * random() - 1);
  return Math.round(seconds * 1000 * factor);
}
