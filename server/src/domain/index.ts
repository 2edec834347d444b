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
import type { DomainSettings } from "./kernel/settings.ts";
import type { SandboxHost } from "./sandboxes/sandboxes.ts";
import type { VaultKeys } from "./vault/crypto.ts";
import type { WebhookSender } from "./webhooks/sender.ts";
import type { Resolver } from "./webhooks/ssrf.ts";

// The domain: every area of the one list (areas.ts), made over one store. Knows nothing of HTTP or of which
// database is behind the store. createDomain is the one way to build a domain from a store (the server,
// the CLI, the tests; a sandbox of its own would call it with its own store); docs/contributing.md
// "Adding a resource, end to end" walks through adding an area.

export interface DomainDeps {
  store: AppStore;
  /** The server's own clock; each environment's is made from it (kernel/clock.ts). */
  now: Now;
  vaultKeys: VaultKeys;
  money: MoneyRules;
  /** Each area's slice of the configuration (config/domain-settings.ts), by the name its area.ts uses. */
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
  /**
   * Set when this domain serves one sandbox on demand, on that sandbox's own store: its id, its keys' tag
   * and its name (what the console shows a session in it).
   */
  sandbox?: { id: string; keyTag: string; name: string } | undefined;
}

/** What an area's make() declares it uses of the deps (settings and ports). */
type DepsOf<A> = A extends { make(ctx: infer C): unknown } ? (C extends { deps: infer D } ? D : unknown) : unknown;
/** Areas whose declared settings or ports `Given` (the domain's deps) does not give. */
export type UnmetDeps<Given = DomainDeps> = {
  [K in keyof typeof AREAS & `${number}`]: Given extends DepsOf<(typeof AREAS)[K]> ? never : (typeof AREAS)[K]["name"];
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
