import type { Store, TxOps } from "../store/port.ts";
import { acquirerNotificationsArea } from "./acquirer-notifications/area.ts";
import { cashoutsArea } from "./cashouts/area.ts";
import { chargesArea } from "./charges/area.ts";
import { consoleSessionsArea } from "./console-sessions/area.ts";
import { disputesArea } from "./disputes/area.ts";
import { fraudArea } from "./fraud/area.ts";
import { healthArea } from "./health/area.ts";
import type { AreaDeclaration } from "./kernel/area.ts";
import { kernelArea } from "./kernel/kernel-area.ts";
import { type Handlers, handlerKit } from "./kernel/operations.ts";
import type { DocsOf } from "./kernel/records.ts";
import { ledgerArea } from "./ledger/area.ts";
import { merchantsArea } from "./merchants/area.ts";
import { paymentLinksArea } from "./payment-links/area.ts";
import { requestLogArea } from "./request-log/area.ts";
import { sandboxClockArea } from "./sandbox-clock/area.ts";
import { sandboxesArea } from "./sandboxes/area.ts";
import { serviceKeysArea } from "./service-keys/area.ts";
import { vaultArea } from "./vault/area.ts";
import { webhooksArea } from "./webhooks/area.ts";

// The one list of areas (issue 29, "Declared areas"). Each area declares itself in its own area.ts
// (kernel/area.ts AreaDeclaration); everything that used to be a registry is derived from this list: the
// store's collections, the id prefixes, the handler map, the background jobs and the services the domain
// is made of (index.ts createDomain makes them in this order). A new area is one line here.
//
// The order is the order areas are made in: an area may use, while it is being made, the services of
// those above it; one below it only inside functions that run later (fraud looks charges up that way).

export const AREAS = [
  kernelArea,
  merchantsArea,
  vaultArea,
  serviceKeysArea,
  ledgerArea,
  fraudArea,
  chargesArea,
  disputesArea,
  cashoutsArea,
  acquirerNotificationsArea,
  paymentLinksArea,
  webhooksArea,
  consoleSessionsArea,
  requestLogArea,
  healthArea,
  sandboxClockArea,
  sandboxesArea,
] as const satisfies readonly AreaDeclaration[];

type Area = (typeof AREAS)[number];
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** Every collection of the store, with its indexes: each area's own (its records.ts), merged. */
export type Collections = UnionToIntersection<Area["collections"]>;

/**
 * The registry of the domain's collections, derived from the list. API objects are serialized from these
 * records by each area's serialize.ts, which names exactly the fields the contract shows. AppStore, the
 * whole store's type, is for the composition root (index.ts), the transport and tests: an area's own code
 * sees only its own collections and the kernel's (kernel/store.ts AreaStore).
 */
// The merge of every area's `collections` object is, key for key, the intersection its type names (a
// cast: Object.assign over a list types its result as any).
export const COLLECTIONS = Object.assign({}, ...AREAS.map((area) => area.collections)) as Collections;

export type Docs = DocsOf<Collections>;
export type AppStore = Store<Docs>;
export type AppTx = TxOps<Docs>;

/** Every id prefix an area makes records with (kernel/ids.ts newId takes only these). */
export type IdPrefix = Area["idPrefixes"][number];

/** The id prefixes of every area, for the test that they are unique and match the contract's patterns. */
export const ID_PREFIXES: readonly IdPrefix[] = AREAS.flatMap((area) => area.idPrefixes);

/** The services the areas make, by the name the domain shows each under (domain.charges, domain.ledger, ...). */
export type Services = UnionToIntersection<ReturnType<Area["make"]>>;

/** The jobs every area runs in the background, by name (startup/jobs.ts schedules them). */
export type Jobs = UnionToIntersection<ReturnType<NonNullable<Extract<Area, { jobs: unknown }>["jobs"]>>>;

// ---- What the compiler checks of the list --------------------------------------------------------

/** What an area's make() declares it needs of other areas (nothing, for one whose make takes no context). */
type NeedsOf<A> = A extends { make(ctx: infer C): unknown } ? (C extends { needs: infer N } ? N : unknown) : unknown;
/** The same of its jobs, which may ask for more (the sandbox clock's refresh). */
type JobNeedsOf<A> = A extends { jobs(ctx: infer C, own: never): unknown }
  ? C extends { needs: infer N }
    ? N
    : unknown
  : unknown;

/** Areas whose declared needs (other areas' services) the list does not give. */
type UnmetNeeds = {
  [K in keyof typeof AREAS & `${number}`]: Services extends NeedsOf<(typeof AREAS)[K]> & JobNeedsOf<(typeof AREAS)[K]>
    ? never
    : (typeof AREAS)[K]["name"];
}[keyof typeof AREAS & `${number}`];

/** Areas whose handlers ask for services the list does not make. */
type UnmetHandlerNeeds = {
  [A in Extract<Area, { handlers: unknown }> as A["name"]]: Services extends Parameters<A["handlers"]>[0]
    ? never
    : A["name"];
}[Extract<Area, { handlers: unknown }>["name"]];

/** The contract's operations no area handles. */
type Unhandled = Exclude<
  keyof Handlers,
  keyof UnionToIntersection<ReturnType<NonNullable<Extract<Area, { handlers: unknown }>["handlers"]>>>
>;

/** Fails `tsc` with the names at fault when the list leaves a need unmet or an operation unhandled. */
export const LIST_IS_COMPLETE: {
  unmetNeeds: [UnmetNeeds] extends [never] ? true : UnmetNeeds;
  unmetHandlerNeeds: [UnmetHandlerNeeds] extends [never] ? true : UnmetHandlerNeeds;
  unhandledOperations: [Unhandled] extends [never] ? true : Unhandled;
} = { unmetNeeds: true, unmetHandlerNeeds: true, unhandledOperations: true };

// ---- The handler map ------------------------------------------------------------------------------

export interface HandlerOptions {
  /** Called after a POST's use case has committed its change, before the answer is built (crash tests). */
  afterCommit?: () => void;
}

/**
 * The API's handlers: each area's fragment (its handlers.ts), merged. Typed as every operation of the
 * generated contract (LIST_IS_COMPLETE above fails `tsc` for one without a handler); http/app.ts checks the
 * same at start-up against the document itself.
 */
export function createHandlers(services: Services, options: HandlerOptions = {}): Handlers {
  const kit = handlerKit(options.afterCommit);
  // Each fragment is called with the whole of `services` (UnmetHandlerNeeds checks it has what each asks
  // for): the union of the areas' handler functions takes no argument TypeScript could name, hence the cast.
  type Fragment = (s: Services, k: typeof kit) => Partial<Handlers>;
  const fragments = AREAS.map((area) => {
    if (!("handlers" in area)) return {};
    // The cast: see above.
    const fragment = area.handlers as Fragment;
    return fragment(services, kit);
  });
  // Every operation has its fragment (Unhandled above): the merge is the whole map, hence the cast.
  return Object.assign({}, ...fragments) as Handlers;
}
