import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type Options, rateLimit, type Store } from "express-rate-limit";
import type { Logger } from "pino";
import type { Caller, Now } from "../domain/kernel/caller.ts";
import { collection } from "../domain/kernel/records.ts";
import { iso } from "../domain/kernel/time.ts";
import { type BaseDoc, DuplicateKeyError, type Store as StorePort } from "../store/port.ts";
import { sendProblem } from "./errors.ts";
import { problem } from "./problems.ts";
import { payPath } from "./public-operations.ts";

// Rate limits (the contract's 429 `rate_limited`, spec/common/problems.tsp): per service key, and per
// client address for requests without a valid key (so guessing keys or flooding unknown routes is
// slowed). Answers carry the IETF RateLimit / RateLimit-Policy headers (draft 8) and, when refused,
// Retry-After; express-rate-limit (maintained) does the windows and headers, SharedCounters below makes
// the counts shared by every instance on one store.

/**
 * An express-rate-limit store whose counts are shared through the application store, so every server
 * instance on one database counts the same requests. The hot path stays in memory: increment() counts
 * locally and answers at once with the last known shared total plus the local hits not yet written;
 * every `syncMs` the local hits are added to the shared document of their window (one conditional
 * `inc` per active key) and the new shared total is read back. The price: with several instances, a
 * burst can overshoot a limit by what the other instances counted in the last `syncMs`.
 */
export class SharedCounters implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private windowMs = 60_000;
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: { store: RateLimitStore; now: Now; logger: Logger; name: string; syncMs?: number },
  ) {
    this.prefix = `${deps.name}:`;
  }

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  private window(): number {
    return Math.floor(this.deps.now().getTime() / this.windowMs);
  }

  private entry(key: string): Entry {
    const window = this.window();
    let entry = this.entries.get(key);
    if (entry === undefined || entry.window !== window) {
      entry = { window, shared: 0, local: 0, writing: 0 };
      this.entries.set(key, entry);
    }
    return entry;
  }

  increment(key: string) {
    const entry = this.entry(key);
    entry.local++;
    this.schedule();
    return {
      totalHits: entry.shared + entry.writing + entry.local,
      resetTime: new Date((entry.window + 1) * this.windowMs),
    };
  }

  decrement(key: string): void {
    const entry = this.entry(key);
    entry.local--;
    this.schedule();
  }

  resetKey(key: string): void {
    this.entries.delete(key);
  }

  private schedule(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.syncing = this.syncing.then(() => this.sync());
    }, this.deps.syncMs ?? 100);
    this.timer.unref();
  }

  /** Adds the local hits to the shared counts and reads the totals back; drops finished windows. */
  async sync(): Promise<void> {
    const current = this.window();
    for (const [key, entry] of this.entries) {
      if (entry.window < current) {
        if (entry.local === 0) this.entries.delete(key);
        continue;
      }
      if (entry.local === 0) continue;
      const delta = entry.local;
      entry.local = 0;
      entry.writing += delta;
      try {
        entry.shared = await this.add(`${this.prefix}${key}:${entry.window}`, delta, entry.window);
      } catch (err) {
        entry.local += delta; // counted again at the next sync
        this.deps.logger.warn({ err }, "could not share rate-limit counts");
      } finally {
        entry.writing -= delta;
      }
    }
  }

  private async add(id: string, delta: number, window: number): Promise<number> {
    const { store } = this.deps;
    const updated = await store.update("rate_limits", id, { inc: { hits: delta } });
    if (updated) return updated.hits;
    const at = this.deps.now();
    try {
      await store.insert("rate_limits", {
        id,
        livemode: false,
        created_at: iso(at),
        hits: delta,
        // Kept one window past its end, then swept.
        expires_at: iso(new Date((window + 2) * this.windowMs)),
      });
      return delta;
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
      return (await store.update("rate_limits", id, { inc: { hits: delta } }))?.hits ?? delta;
    }
  }

  /** Writes what is still counted locally (on close). */
  async flush(): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.syncing = this.syncing.then(() => this.sync());
    await this.syncing;
  }
}

interface Entry {
  window: number;
  /** The shared total last read back from the store (every instance's hits). */
  shared: number;
  /** Hits counted here and not yet written. */
  local: number;
  /** Hits being written right now. */
  writing: number;
}

/**
 * One window's shared count for one rate-limited client (a key or an address), id
 * `<limiter>:<client>:<window number>`; swept once expired (server/src/http/rate-limits.ts).
 */
export interface RateLimitDoc extends BaseDoc {
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
  /** Requests per minute per client address made without a valid key. */
  anonymousPerMinute: number;
  /** Public pay operations per minute per payment link (all payers together). */
  paymentLinkPerMinute: number;
  /** Public pay operations per minute per client address. */
  paymentAddressPerMinute: number;
}

export interface RateLimits {
  /** Counts per service key; runs after the caller is known. */
  perKey: RequestHandler;
  /** Counts requests without a valid key per client address (except the public pay operation's). */
  anonymous: RequestHandler;
  /** The public pay operation's own limits, per payment link and per client address. */
  paymentLinks: RequestHandler[];
  /** Deletes the shared counts of finished windows. */
  sweep(): Promise<number>;
  /** Writes the counts still held locally. */
  flush(): Promise<void>;
}

const callerOf = (res: Response) => res.locals.caller as Caller | undefined;

export function rateLimits(deps: {
  store: RateLimitStore;
  now: Now;
  logger: Logger;
  settings: RateLimitSettings;
}): RateLimits {
  const { store, now, logger, settings } = deps;
  const keyCounts = new SharedCounters({ store, now, logger, name: "key" });
  const addressCounts = new SharedCounters({ store, now, logger, name: "address" });
  const linkPayCounts = new SharedCounters({ store, now, logger, name: "link_pay" });
  const addressPayCounts = new SharedCounters({ store, now, logger, name: "address_pay" });

  // `limit` names the limiter for the request metrics (http/observability.ts): key, address,
  // payment_link or payment_address.
  const refuse = (limit: string, detail: string) => (_req: Request, res: Response, _next: NextFunction) => {
    res.locals.rateLimited = limit;
    sendProblem(res, problem("rate_limited", detail, { requestId: String(res.locals.requestId ?? "") }));
  };

  const perKeyLimiter = rateLimit({
    windowMs: 1000,
    limit: (_req, res) => (callerOf(res)?.livemode ? settings.livePerSecond : settings.testPerSecond),
    standardHeaders: "draft-8",
    legacyHeaders: false,
    keyGenerator: (_req, res) => callerOf(res)?.keyId ?? "",
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

  // Requests with a valid key are counted per key instead; pages and health checks outside /v1 are
  // not counted, nor is the public pay operation, which has limits of its own (below): a payer is
  // keyless by design. The console's sign-in is counted (each attempt presents a key, like an API request).
  const notAnonymous = (req: Request, res: Response) =>
    callerOf(res) !== undefined ||
    payPath.linkOf(req.path) !== null ||
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

  // Each request is counted by one of the two limiters. The other is passed over here, synchronously,
  // rather than entering express-rate-limit's async middleware only for its `skip` to say so.
  const perKey: RequestHandler = (req, res, next) =>
    callerOf(res) === undefined ? next() : perKeyLimiter(req, res, next);
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
    // Per address first: a client over its limit is refused before it adds to any link's count. Any
    // other request is passed over synchronously, as above.
    paymentLinks: [paymentAddressLimit, paymentLinkLimit].map(
      (limiter): RequestHandler =>
        (req, res, next) =>
          isPay(req) ? limiter(req, res, next) : next(),
    ),
    sweep: () => store.deleteMany("rate_limits", { expires_at: { $lt: iso(now()) } }),
    flush: async () => {
      await Promise.all([keyCounts.flush(), addressCounts.flush(), linkPayCounts.flush(), addressPayCounts.flush()]);
    },
  };
}
