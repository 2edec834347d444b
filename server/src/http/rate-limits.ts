import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type Options, rateLimit, type Store } from "express-rate-limit";
import type { Logger } from "pino";
import type { Now } from "../domain/kernel/caller.ts";
import { collection } from "../domain/kernel/records.ts";
import { iso } from "../domain/kernel/time.ts";
import { type BaseDoc, DuplicateKeyError, type Store as StorePort } from "../store/port.ts";
import { sendProblem } from "./errors.ts";
import { locals } from "./locals.ts";
import { problem } from "./problems.ts";
import { adyenNotificationsPath, payPath } from "./public-operations.ts";

// Rate limits (the contract's 429 `rate_limited`, spec/common/problems.tsp): per service key, and per
// client address for requests without a valid key (so guessing keys or flooding unknown routes is
// slowed). Answers carry the IETF RateLimit / RateLimit-Policy headers (draft 8) and, when refused,
// Retry-After; express-rate-limit (maintained) does the windows and headers, QuotaLeases below makes
// one quota per window for every worker and instance on one store (docs/api.md "Rate limits").

/**
 * How much of a window's quota one process takes from the store at a time: a twentieth of the limit
 * (at least one request). A lease it cannot use before the window ends is lost, so with N processes
 * serving one client the quota granted is at least the limit less N × (lease − 1), within 10 % of the
 * limit for two processes; and a window costs at most about 20 + N store writes per client, however
 * many requests arrive.
 */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.ceil(limit / 20));
}

/** Tries of a conditional increment that other processes keep beating before the quota counts as spent. */
const MAX_LEASE_TRIES = 8;

/**
 * An express-rate-limit store that grants no more than the limit per window across every process on
 * one store, by leasing quota from it. Each window of each client (a key, an address, a link) is one
 * document in the store counting the quota handed out; a process takes a lease of leaseSize(limit)
 * requests with a conditional increment (only while the count stays within the limit; the last lease
 * takes what is left), answers that many requests from memory, then takes another. Once the store has
 * nothing left for the window, the process refuses locally until the window ends, without asking
 * the store again. So the store never hands out more than the limit, whatever the number of workers
 * or instances, and a flood costs one store write per lease, not one per request.
 *
 * If the store fails, the process counts alone for that window (at most the limit, in this process)
 * and logs a warning: an outage of the store must not turn every request away, and the requests that
 * need the store fail on their own.
 */
export class QuotaLeases implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private windowMs = 60_000;
  private readonly entries = new Map<string, Entry>();
  /** The window whose older entries were last dropped. */
  private swept = 0;
  /** The window in which a store failure was last logged (one warning a window). */
  private warned = -1;

  constructor(
    private readonly deps: {
      store: RateLimitStore;
      now: Now;
      logger: Logger;
      name: string;
      /** The limit per window of a client key (the limiter's `limit` for it). */
      limitOf: (key: string) => number;
    },
  ) {
    this.prefix = `${deps.name}:`;
  }

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  private window(): number {
    return Math.floor(this.deps.now().getTime() / this.windowMs);
  }

  private entry(key: string, window: number): Entry {
    if (window > this.swept) {
      for (const [k, e] of this.entries) if (e.window < window && e.pending === null) this.entries.delete(k);
      this.swept = window;
    }
    let entry = this.entries.get(key);
    if (entry === undefined || entry.window !== window) {
      entry = { window, available: 0, granted: 0, counted: 0, spent: false, pending: null };
      this.entries.set(key, entry);
    }
    return entry;
  }

  async increment(key: string): Promise<{ totalHits: number; resetTime: Date }> {
    const limit = this.deps.limitOf(key);
    const window = this.window();
    const resetTime = new Date((window + 1) * this.windowMs);
    const entry = this.entry(key, window);
    for (;;) {
      if (entry.available > 0) {
        entry.available--;
        entry.granted++;
        // What the store had handed out at the last lease, less what this process still holds: the
        // requests counted so far in this window (exact with one process, a lower bound with more).
        return { totalHits: Math.min(limit, Math.max(entry.granted, entry.counted - entry.available)), resetTime };
      }
      if (entry.spent) return { totalHits: limit + 1, resetTime };
      entry.pending ??= this.lease(key, entry, limit).finally(() => {
        entry.pending = null;
      });
      await entry.pending;
    }
  }

  decrement(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.window !== this.window() || entry.granted === 0) return;
    entry.granted--;
    entry.available++;
  }

  resetKey(key: string): void {
    this.entries.delete(key);
  }

  /** Takes the next lease of the entry's window from the store (or, if the store fails, from memory). */
  private async lease(key: string, entry: Entry, limit: number): Promise<void> {
    const size = Math.min(leaseSize(limit), limit);
    try {
      const { taken, counted } = await this.take(`${this.prefix}${key}:${entry.window}`, entry, size, limit);
      if (taken === 0) entry.spent = true;
      entry.available += taken;
      entry.counted = counted;
    } catch (err) {
      if (this.warned !== entry.window) {
        this.warned = entry.window;
        this.deps.logger.warn(
          { err, limiter: this.deps.name },
          "could not lease rate-limit quota from the store; counting in this process alone",
        );
      }
      const left = limit - entry.granted - entry.available;
      if (left <= 0) entry.spent = true;
      else entry.available += Math.min(size, left);
    }
  }

  /**
   * Adds up to `size` to the window's count, never past `limit`: returns how much was taken (0 when the
   * quota is spent) and the count after it.
   */
  private async take(
    id: string,
    entry: Entry,
    size: number,
    limit: number,
  ): Promise<{ taken: number; counted: number }> {
    const { store } = this.deps;
    // A process's first lease of a window usually finds no document yet: try to create it first.
    /** Makes the window's document holding this lease; false when another process made it first. */
    const create = async (): Promise<boolean> => {
      try {
        await store.insert("rate_limits", {
          id,
          livemode: false,
          created_at: iso(this.deps.now()),
          hits: size,
          // Kept one window past its end, then swept.
          expires_at: iso(new Date((entry.window + 2) * this.windowMs)),
        });
        return true;
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
        return false;
      }
    };
    if (entry.counted === 0 && entry.granted === 0 && (await create())) return { taken: size, counted: size };
    for (let attempt = 0; attempt < MAX_LEASE_TRIES; attempt++) {
      const whole = await store.update("rate_limits", id, { inc: { hits: size } }, { hits: { $lte: limit - size } });
      if (whole) return { taken: size, counted: whole.hits };
      const doc = await store.get("rate_limits", id);
      if (doc === null) {
        // Swept or never made (the insert above was skipped): make it, or go round if another process did.
        if (await create()) return { taken: size, counted: size };
        continue;
      }
      const rest = limit - doc.hits;
      if (rest <= 0) return { taken: 0, counted: doc.hits };
      // Less than a whole lease is left: take exactly the rest, if nobody took any meanwhile.
      const last = await store.update("rate_limits", id, { inc: { hits: rest } }, { hits: doc.hits });
      if (last) return { taken: rest, counted: last.hits };
    }
    // Other processes keep taking what is left: by now it is spent.
    return { taken: 0, counted: limit };
  }

  /** Waits for the leases being taken (on close). */
  async flush(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.pending));
  }
}

interface Entry {
  window: number;
  /** Leased requests this process may still grant in the window. */
  available: number;
  /** Requests this process granted in the window. */
  granted: number;
  /** The window's count in the store after this process's last lease (every process's leases). */
  counted: number;
  /** The store had nothing left for this window. */
  spent: boolean;
  /** The lease being taken, which concurrent requests of the same client wait for. */
  pending: Promise<void> | null;
}

/**
 * One window's quota handed out for one rate-limited client (a key, an address, a link), id
 * `<limiter>:<client>:<window number>`: the requests every process has leased (QuotaLeases), never
 * more than the limit. Swept once expired.
 */
export interface RateLimitDoc extends BaseDoc {
  /** Requests leased so far in the window, by every process together. */
  hits: number;
  expires_at: string;
}

/**
 * The shared counts' collection: the HTTP layer's own, opened beside the domain's (server.ts openStore).
 */
export const rateLimitCollections = {
  rate_limits: collection<RateLimitDoc>([{ fields: ["expires_at"] }]),
};

/** What the limiters need of the store: their own collection. */
export type RateLimitStore = StorePort<{ rate_limits: RateLimitDoc }>;

export interface RateLimitSettings {
  /** Requests per second per production key. */
  livePerSecond: number;
  /** Requests per second per sandbox key. */
  testPerSecond: number;
  /** All the keys of one environment together: this many times its per-key limit per second. */
  environmentKeys: number;
  /** Requests per minute per client address made without a valid key. */
  anonymousPerMinute: number;
  /** Public pay operations per minute per payment link (all payers together). */
  paymentLinkPerMinute: number;
  /** Public pay operations per minute per client address. */
  paymentAddressPerMinute: number;
}

export interface RateLimits {
  /** Counts per service key, then per environment (all its keys together); runs after the caller is known. */
  perKey: RequestHandler;
  /**
   * Counts requests without a valid key per client address (except the public pay operation's and Adyen's
   * notifications').
   */
  anonymous: RequestHandler;
  /** Adyen's notifications (receiveAdyenNotifications): only the refused ones count, per client address. */
  acquirerNotifications: RequestHandler;
  /** The public pay operation's own limits, per payment link and per client address. */
  paymentLinks: RequestHandler[];
  /** Deletes the shared counts of finished windows. */
  sweep(): Promise<number>;
  /** Waits for the quota leases being taken (on close). */
  flush(): Promise<void>;
}

const callerOf = (res: Response) => locals(res).caller;

/**
 * A limiter's refusal, 429 `rate_limited`. `limit` names the limiter for the request metrics
 * (http/observability.ts): key, environment, address, payment_link, payment_address or acquirer_notifications.
 */
const refuse = (limit: string, detail: string) => (_req: Request, res: Response, _next: NextFunction) => {
  locals(res).rateLimited = limit;
  sendProblem(res, problem("rate_limited", detail, { requestId: String(locals(res).requestId ?? "") }));
};
const isNotification = (req: Request) => req.method === "POST" && req.path === adyenNotificationsPath;

// Adyen's notifications (receiveAdyenNotifications) come keyless from a few addresses of Adyen's, in
// bursts (a backlog, a day's captures, retries after an outage), and Adyen redelivers whatever is not
// accepted: counted as anonymous requests, its own batches were refused past 60 a minute (the Adyen
// crash suite's finding, issue 32), and every refusal came back as another retry. Their authentication
// is each item's HMAC signature, checked once the body is read, so here only the refused requests count
// (401 unsigned or wrongly signed, 400 not Adyen's shape, 413, 415, this limit's own 429): an address
// that sent RATE_LIMIT_ANONYMOUS_PER_MINUTE of those in a minute is refused before its body is read
// until the minute ends. A request answered 2xx is given back when answered (express-rate-limit's
// skipSuccessfulRequests), so Adyen's signed batches never use up the quota, and neither does a 5xx
// (the server's trouble, not the sender's). Only batches in flight at one moment count while they run.
function notificationLimit(perMinute: number, store: Store): RequestHandler {
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: "draft-8",
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => res.statusCode < 400 || res.statusCode >= 500,
    handler: refuse(
      "acquirer_notifications",
      `Too many refused notification requests from this address: at most ${perMinute} a minute may be unsigned, wrongly signed or malformed. Retry after the number of seconds in Retry-After.`,
    ),
    store,
  });
  // A keyed request is counted per key (perKey); any other is passed over synchronously.
  return (req, res, next) => (isNotification(req) && callerOf(res) === undefined ? limiter(req, res, next) : next());
}

export function rateLimits(deps: {
  store: RateLimitStore;
  now: Now;
  logger: Logger;
  settings: RateLimitSettings;
}): RateLimits {
  const { store, now, logger, settings } = deps;
  // A key's limit depends on its environment, which its client key therefore names (`live:kid_…`).
  const keyLimit = (key: string) => (key.startsWith("live:") ? settings.livePerSecond : settings.testPerSecond);
  const leases = (name: string, limitOf: (key: string) => number) =>
    new QuotaLeases({ store, now, logger, name, limitOf });
  const keyCounts = leases("key", keyLimit);
  const environmentCounts = leases("environment", (key) => keyLimit(key) * settings.environmentKeys);
  const addressCounts = leases("address", () => settings.anonymousPerMinute);
  const linkPayCounts = leases("link_pay", () => settings.paymentLinkPerMinute);
  const addressPayCounts = leases("address_pay", () => settings.paymentAddressPerMinute);
  const notificationCounts = leases("acquirer_notifications", () => settings.anonymousPerMinute);

  const perKeyLimiter = rateLimit({
    windowMs: 1000,
    limit: (_req, res) => (callerOf(res)?.livemode ? settings.livePerSecond : settings.testPerSecond),
    standardHeaders: "draft-8",
    legacyHeaders: false,
    keyGenerator: (_req, res) => `${callerOf(res)?.livemode ? "live" : "test"}:${callerOf(res)?.keyId ?? ""}`,
    skip: (_req, res) => callerOf(res) === undefined,
    handler: (req, res, next) => {
      const caller = callerOf(res);
      const limit = caller?.livemode ? settings.livePerSecond : settings.testPerSecond;
      refuse(
        "key",
        `Too many requests with this key: at most ${limit} per second ${caller?.livemode ? "in production" : "in the sandbox"}. Retry after the number of seconds in Retry-After.`,
      )(req, res, next);
    },
    store: keyCounts,
    // The key is the caller's key id, not an address: the library's address checks do not apply.
    validate: { keyGeneratorIpFallback: false, ip: false, xForwardedForHeader: false },
  });

  // Every key of an environment together, after its own count: a `*` key can make keys, each with a quota of
  // its own, so the environment's keys share a ceiling of RATE_LIMIT_ENVIRONMENT_KEYS keys' worth, and
  // minting keys cannot multiply what one holder may send. The per-key RateLimit headers stay the ones
  // sent; a refusal here says which limit it was, with Retry-After.
  const environmentLimiter = rateLimit({
    windowMs: 1000,
    limit: (_req, res) =>
      (callerOf(res)?.livemode ? settings.livePerSecond : settings.testPerSecond) * settings.environmentKeys,
    standardHeaders: false,
    legacyHeaders: false,
    keyGenerator: (_req, res) => (callerOf(res)?.livemode ? "live:all" : "test:all"),
    handler: (req, res, next) => {
      const live = callerOf(res)?.livemode === true;
      const limit = (live ? settings.livePerSecond : settings.testPerSecond) * settings.environmentKeys;
      res.setHeader("Retry-After", "1");
      refuse(
        "environment",
        `Too many requests from all the keys of ${live ? "production" : "the sandbox"} together: at most ${limit} per second (RATE_LIMIT_ENVIRONMENT_KEYS keys' worth). Retry after the number of seconds in Retry-After.`,
      )(req, res, next);
    },
    store: environmentCounts,
    // The key is an environment, not an address.
    validate: { keyGeneratorIpFallback: false, ip: false, xForwardedForHeader: false },
  });

  // Requests with a valid key are counted per key instead; pages and health checks outside /v1 are
  // not counted, nor is the public pay operation, which has limits of its own (below): a payer is
  // keyless by design. The console's sign-in is counted (each attempt presents a key, like an API request).
  const notAnonymous = (req: Request, res: Response) =>
    callerOf(res) !== undefined ||
    payPath.linkOf(req.path) !== null ||
    isNotification(req) ||
    !(req.path.startsWith("/v1/") || (req.method === "POST" && req.path === "/console/session"));

  const anonymousLimiter = rateLimit({
    windowMs: 60_000,
    limit: settings.anonymousPerMinute,
    standardHeaders: "draft-8",
    legacyHeaders: false,
    skip: notAnonymous,
    handler: refuse(
      "address",
      `Too many requests without a valid service key from this address: at most ${settings.anonymousPerMinute} per minute. Retry after the number of seconds in Retry-After.`,
    ),
    store: addressCounts,
  });

  const acquirerNotifications = notificationLimit(settings.anonymousPerMinute, notificationCounts);

  // Each request is counted by one of the two limiters. The other is passed over here, synchronously,
  // rather than entering express-rate-limit's async middleware only for its `skip` to say so.
  const perKey: RequestHandler = (req, res, next) =>
    callerOf(res) === undefined
      ? next()
      : perKeyLimiter(req, res, (err?: unknown) => (err ? next(err) : environmentLimiter(req, res, next)));
  const anonymous: RequestHandler = (req, res, next) =>
    notAnonymous(req, res) ? next() : anonymousLimiter(req, res, next);

  // The public pay operation (payPaymentLink): per link, so nobody can hammer one merchant's link, and per
  // client address, so one client cannot test cards across many links. Counted before the body is read,
  // whatever the request turns out to be, key or no key.
  const isPay = (req: Request) => payPath.linkOf(req.path) !== null;
  const paymentLinkLimit = rateLimit({
    windowMs: 60_000,
    limit: settings.paymentLinkPerMinute,
    standardHeaders: "draft-8",
    legacyHeaders: false,
    skip: (req) => !isPay(req),
    // Only a well-formed link id gets a count of its own, so made-up paths cannot fill the store with counters.
    keyGenerator: (req) => {
      const id = payPath.linkOf(req.path) ?? "";
      return /^plink_[0-9A-Za-z]{24}$/.test(id) ? id : "malformed";
    },
    handler: refuse(
      "payment_link",
      `Too many payments through this payment link: at most ${settings.paymentLinkPerMinute} per minute. Retry after the number of seconds in Retry-After.`,
    ),
    store: linkPayCounts,
    // The key is a link id, not an address.
    validate: { keyGeneratorIpFallback: false, ip: false, xForwardedForHeader: false },
  });
  const paymentAddressLimit = rateLimit({
    windowMs: 60_000,
    limit: settings.paymentAddressPerMinute,
    standardHeaders: "draft-8",
    legacyHeaders: false,
    skip: (req) => !isPay(req),
    handler: refuse(
      "payment_address",
      `Too many payment attempts from this address: at most ${settings.paymentAddressPerMinute} per minute. Retry after the number of seconds in Retry-After.`,
    ),
    store: addressPayCounts,
  });

  return {
    perKey,
    anonymous,
    acquirerNotifications,
    // Per address first: a client over its limit is refused before it adds to any link's count. Any
    // other request is passed over synchronously, as above.
    paymentLinks: [paymentAddressLimit, paymentLinkLimit].map(
      (limiter): RequestHandler =>
        (req, res, next) =>
          isPay(req) ? limiter(req, res, next) : next(),
    ),
    sweep: () => store.deleteMany("rate_limits", { expires_at: { $lt: iso(now()) } }),
    flush: async () => {
      await Promise.all(
        [keyCounts, environmentCounts, addressCounts, linkPayCounts, addressPayCounts, notificationCounts].map((c) =>
          c.flush(),
        ),
      );
    },
  };
}
