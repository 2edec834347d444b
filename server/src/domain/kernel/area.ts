import type { BaseDoc } from "../../store/port.ts";
import type { Now } from "./caller.ts";
import type { SettableClock } from "./clock.ts";
import type { CommitHooks } from "./commit-hooks.ts";
import type { DomainLog } from "./log.ts";
import type { DomainObserver } from "./observer.ts";
import type { HandlerKit, Handlers } from "./operations.ts";
import type { Collection } from "./records.ts";
import type { AreaDocs, AreaStore } from "./store.ts";

// How an area declares itself (issue 29, "Declared areas"): one object in the area's own area.ts names
// its collections, id prefixes, state machines, what it needs (other areas' declared services, the
// settings and ports it uses), how its services are made, its handlers and its jobs. The one list of
// areas (domain/areas.ts) derives every registry from these declarations and makes the services in its
// order (domain/index.ts createDomain); its compile-time checks refuse a list that does not give an area
// what it declares it needs, or leaves a contract operation without a handler.

/** What the list hands an area when it makes the area's services (domain/index.ts createDomain). */
export interface AreaContext<Own, Needs = unknown, Deps = unknown> {
  /** The store, typed to the area's own collections and the kernel's; its commits run the commit hooks. */
  store: AreaStore<Own>;
  /** The same store without commit hooks, for a watcher whose own writes must not wake it (kernel/commit-hooks.ts). */
  quietStore: AreaStore<Own>;
  /**
   * Watches commits (kernel/commit-hooks.ts): the webhooks area's outbox listens for events, and gates
   * them (reading the area's own collections inside the transaction that records one).
   */
  hooks: CommitHooks<AreaDocs<Own>>;
  /** Each environment's clock (kernel/clock.ts). */
  clock: SettableClock;
  /** The server's own clock. */
  now: Now;
  log: DomainLog;
  observer: DomainObserver;
  /**
   * Other areas' services, as their declared interfaces. One made earlier in the list may be used while
   * making this area's; a later one only inside a function that runs once the domain is made (a request,
   * a job), which is how two areas that call each other are made.
   */
  needs: Needs;
  /** The settings and ports this area uses, from the domain's deps (domain/index.ts DomainDeps). */
  deps: Deps;
}

/** One pass of background work; resolves with how many records it moved (domain.jobs, startup/jobs.ts). */
export type Job = () => Promise<number>;

/**
 * The shape every area's declaration satisfies (`satisfies AreaDeclaration`); its own, more precise type
 * is what domain/areas.ts reads. The `never` parameters accept any area's own context and service types.
 */
export interface AreaDeclaration {
  readonly name: string;
  /** The collections the area owns (its records.ts), with their indexes. */
  readonly collections: Readonly<Record<string, Collection<BaseDoc>>>;
  /** The id prefixes of the records it makes (spec/common/ids.tsp pins each with a @pattern). */
  readonly idPrefixes: readonly string[];
  /** Its state machines (kernel/state-machine.ts): every status write of its records goes through one. */
  readonly machines: readonly { readonly name: string }[];
  /** Makes the area's services, keyed by the name the domain shows them under. */
  make(ctx: never): object;
  /** Its fragment of the handler map: one handler per contract operation it serves. */
  handlers?(services: never, kit: HandlerKit): Partial<Handlers>;
  /** Its background jobs, given the same context (every area made by then) and its own services. */
  jobs?(ctx: never, own: never): Readonly<Record<string, Job>>;
}

/**
 * A job for both environments, each on its own clock: the sandbox's clock is read again from the store
 * first (`refresh`, the sandbox clock area's), since another instance may have moved it.
 */
export async function inBothEnvironments(
  refresh: () => Promise<unknown>,
  job: (livemode: boolean) => Promise<number>,
): Promise<number> {
  await refresh();
  return (await job(true)) + (await job(false));
}
