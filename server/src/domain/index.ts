import { type AppStore, AREAS, type Jobs, type Services } from "./areas.ts";
import type { PayoutRail } from "./cashouts/payout-rail.ts";
import type { FraudScreen } from "./charges/fraud-screen.ts";
import type { Processor } from "./charges/processor.ts";
import type { AreaContext } from "./kernel/area.ts";
import type { Now } from "./kernel/caller.ts";
import { createClock, type SettableClock } from "./kernel/clock.ts";
import { withCommitHooks } from "./kernel/commit-hooks.ts";
import { type DomainLog, silentLog } from "./kernel/log.ts";
import type { MoneyRules } from "./kernel/money.ts";
import { type DomainObserver, unobserved } from "./kernel/observer.ts";
import type { FeeSchedule } from "./ledger/fees.ts";
import type { SandboxHost } from "./sandboxes/sandboxes.ts";
import type { VaultKeys } from "./vault/crypto.ts";
import type { WebhookOptions } from "./webhooks/index.ts";
import type { WebhookSender } from "./webhooks/sender.ts";
import type { Resolver } from "./webhooks/ssrf.ts";

// The domain: every area of the one list (areas.ts), made over one store. Knows nothing of HTTP or of which
// database is behind the store. createDomain is the one way to build a domain from a store (the server,
// the CLI, the tests; a sandbox of its own would call it with its own store); docs/contributing.md
// "Adding a resource, end to end" walks through adding an area.

/** The domain's settings: each comes from the configuration schema (config.ts domainSettings), their one home. */
export interface DomainSettings {
  /** Production captures wait this long in `pending` before they are `available`. */
  settlementDelaySeconds: number;
  /** The same in the sandbox (default 0: available at once); the sandbox clock moves it along. */
  sandboxSettlementDelaySeconds: number;
  /** How long request-log records are kept (the console's request log). */
  requestLogRetentionDays: number;
  /** How many days events are kept (on their environment's clock); older ones are deleted by the sweep. */
  eventRetentionDays: number;
  /** How long a developer-console session lasts from sign-in. */
  consoleSessionTtlSeconds: number;
  /** Cashout schedule: seconds pending (cancelable) before sending, and in transit before the outcome. */
  cashoutPendingSeconds: number;
  cashoutTransitSeconds: number;
  /** How long a hosted payment page's token stays valid. */
  paymentPageTokenTtlSeconds: number;
  /** How long a card charge waits for the payer's 3-D Secure answer before it expires (requires_action). */
  threeDSecureExpirySeconds: number;
  /** The platform's fees per payment method (FEE_SCHEDULE; default none). */
  fees: FeeSchedule;
  /** The dispute fee per currency, in minor units (DISPUTE_FEES; default none). */
  disputeFees: Record<string, number>;
  /** How long a merchant has to answer a dispute (DISPUTE_EVIDENCE_SECONDS). */
  disputeEvidenceSeconds: number;
  /**
   * How long a call to the acquirer left in doubt waits for its own request before the recovery job
   * resolves it (IDEMPOTENCY_LOCK_SECONDS: no request outlasts it; domain/charges/intents.ts).
   */
  acquirerIntentLockSeconds: number;
  webhooks: WebhookOptions;
  /** The HMAC keys Adyen signs its notifications with (ADYEN_HMAC_KEYS); none: the endpoint answers 503. */
  adyenHmacKeys?: readonly string[];
  /**
   * Which of our environments Adyen serves (PRODUCTION_ACQUIRER, SANDBOX_ACQUIRER = adyen): its
   * notifications belong to that one, whatever their `live` says (acquirer-notifications/notifications.ts).
   */
  adyenEnvironments?: { production: boolean; sandbox: boolean };
}

export interface DomainDeps {
  store: AppStore;
  /** The server's own clock; each environment's is made from it (kernel/clock.ts). */
  now: Now;
  vaultKeys: VaultKeys;
  money: MoneyRules;
  settings: DomainSettings;
  /**
   * The acquirer of each environment (the shipped one: adapters/processor-simulator.ts). Production's is
   * null while PRODUCTION_ACQUIRER is unset: its money operations are refused (503), never simulated.
   */
  processors: { live: Processor | null; sandbox: Processor };
  /** The payout rail cashouts are sent through (adapters/payout-rail-simulator.ts). */
  payoutRail: PayoutRail;
  /** Sends webhook delivery attempts (adapters/webhook-sender.ts) and resolves endpoint host names. */
  webhookSender: WebhookSender;
  resolve: Resolver;
  /** The server's public address, for payment links' `url` (a function: known once the server listens). */
  baseUrl: () => string;
  /** Replaces the fraud engine as the screen every charge passes (tests of other rules). */
  fraudScreen?: FraudScreen | undefined;
  /** [0, 1), the webhook retries' jitter (tests fix it). */
  random?: (() => number) | undefined;
  /** Where background steps that no caller hears of report failures (the server's logger). */
  log?: DomainLog | undefined;
  /** Told what the domain does, for the operators' metrics (adapters/metrics.ts); default: nobody. */
  observer?: DomainObserver | undefined;
  /**
   * Where sandboxes on demand are made, opened and erased (server/src/sandboxes/host.ts); absent: this
   * domain hosts none (spec/resources/sandboxes.tsp answers 403).
   */
  sandboxHost?: SandboxHost | undefined;
  /** Set when this domain serves one sandbox on demand, on that sandbox's own store: its id and keys' tag. */
  sandbox?: { id: string; keyTag: string } | undefined;
}

/** What an area's make() declares it uses of the deps (settings and ports). */
type DepsOf<A> = A extends { make(ctx: infer C): unknown } ? (C extends { deps: infer D } ? D : unknown) : unknown;
/** Areas whose declared settings or ports DomainDeps does not give. */
type UnmetDeps = {
  [K in keyof typeof AREAS & `${number}`]: DomainDeps extends DepsOf<(typeof AREAS)[K]>
    ? never
    : (typeof AREAS)[K]["name"];
}[keyof typeof AREAS & `${number}`];
/** Fails `tsc` when an area of the list declares a setting or port that DomainDeps lacks. */
export const DEPS_ARE_GIVEN: [UnmetDeps] extends [never] ? true : UnmetDeps = true;

/** The domain: every area's services (areas.ts Services), each environment's clock, and the jobs. */
export type Domain = Services & {
  /** Each environment's clock (kernel/clock.ts). */
  clock: SettableClock;
  /** The background jobs' work, one pass each; the server runs them every JOBS_INTERVAL_SECONDS (startup/jobs.ts). */
  jobs: Jobs;
};

/**
 * Makes every area of the list (areas.ts), in its order, over `deps.store`. Each area is handed the
 * kernel's hooked store (kernel/commit-hooks.ts), the clocks, its settings and ports, and the services of
 * the others; areas.ts checks at compile time that the list gives each what it declares it needs.
 */
export function createDomain(deps: DomainDeps): Domain {
  const hooked = withCommitHooks(deps.store);
  const made: Record<string, unknown> = {};
  // An area reads another's service here while it is made only if that one is above it in the list; a
  // read of one below it is a mistake in the list's order, said at once rather than as an `undefined`.
  const needs = new Proxy(made, {
    get(target, name) {
      if (typeof name === "string" && !(name in target)) {
        throw new Error(`domain/areas.ts: "${name}" is used before the area that makes it; move that area up the list`);
      }
      return Reflect.get(target, name);
    },
  });
  const ctx: AreaContext<unknown, unknown, DomainDeps> = {
    store: hooked.store,
    quietStore: hooked.quiet,
    hooks: hooked,
    clock: createClock(deps.now),
    now: deps.now,
    log: deps.log ?? silentLog,
    observer: deps.observer ?? unobserved,
    needs,
    deps,
  };
  type Make = (c: typeof ctx) => object;
  type MakeJobs = (c: typeof ctx, own: object) => Record<string, unknown>;
  const own = AREAS.map((area) => {
    // Each area's make() declares its own context type; areas.ts LIST_IS_COMPLETE checks that the
    // services and deps given here satisfy it. The union of the areas' make functions takes no argument
    // TypeScript could name, hence the cast.
    const services = (area.make as Make)(ctx);
    Object.assign(made, services);
    return services;
  });
  const jobs = Object.assign(
    {},
    ...AREAS.map((area, i) => {
      if (!("jobs" in area)) return {};
      // The cast: as for make() above.
      const makeJobs = area.jobs as MakeJobs;
      return makeJobs(ctx, own[i] ?? {});
    }),
  );
  // `made` holds every area's services (Services is their merge), and `jobs` every area's jobs: the
  // casts say so, which the compiler cannot follow through the loop above.
  const services = made as unknown as Services;
  // The same cast for the jobs.
  const allJobs = jobs as Jobs;
  return { ...services, clock: ctx.clock, jobs: allJobs };
}
