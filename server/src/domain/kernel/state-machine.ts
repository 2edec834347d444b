import type { BaseDoc, Branded, Changes, Unbranded, Where } from "../../store/port.ts";
import { notFound } from "./errors.ts";

// The one state machine kernel. Every stored status (a charge's, a review's, a refund's, a cashout's, a
// merchant's, a webhook endpoint's and delivery's) is typed `Status<machine, …>`: a value only its
// machine's `start` (a new record's status) or `step` (a change the table allows) returns. So a status
// written any other way (an insert, an update's `set`, a document changed in memory) does not compile,
// and each machine's table below is the whole truth of what may happen to a record
// (state-machine.types.test.ts proves the refusal; each area's state.ts declares its table and tests it).

/** A status its machine `M` made: the only value a stored status field of that machine accepts. */
export type Status<M extends string, S extends string> = Branded<S, M>;

/**
 * A record as a reader sees it: every status a plain value. What a function that only reads a record takes,
 * so it can be handed any status (a test of what follows each transition).
 */
export type Plain<D> = { [K in keyof D]: Unbranded<D[K]> };

/** A machine's declared table. */
export interface MachineTable<S extends string> {
  /** The statuses a new record may be created in (its creation outcomes). */
  readonly initial: readonly S[];
  /** Every allowed change, by the status it starts from; anything not listed is refused. */
  readonly transitions: { readonly [F in S]: readonly S[] };
}

export interface StateMachine<M extends string, S extends string> extends MachineTable<S> {
  readonly name: M;
  /** Whether a new record may be created in `to` (`from` null), or a record in `from` may move to `to`. */
  can(from: S | null, to: S): boolean;
  /** `to` as a new record's status; throws `refuse()` (by default a programming error) unless the table allows it. */
  start(to: S, refuse?: () => Error): Status<M, S>;
  /** `to` as the next status of a record in `from`; throws `refuse()` unless the table allows it. */
  step(from: S, to: S, refuse?: () => Error): Status<M, S>;
}

/** Declares a machine `name` with its whole table. */
export function stateMachine<const M extends string, S extends string>(
  name: M,
  table: MachineTable<S>,
): StateMachine<M, S> {
  const can = (from: S | null, to: S) =>
    from === null ? table.initial.includes(to) : (table.transitions[from]?.includes(to) ?? false);
  // cast: the one place a plain string becomes a status (the brand's one maker), after the table said yes.
  const made = (to: S) => to as Status<M, S>;
  const refused = (from: S | null, to: S) =>
    new Error(
      from === null
        ? `A ${name} cannot be created ${to} (the ${name} state machine starts in ${table.initial.join(", ")}).`
        : `A ${name} cannot go from ${from} to ${to} (not in the ${name} state machine's table).`,
    );
  return {
    name,
    initial: table.initial,
    transitions: table.transitions,
    can,
    start(to, refuse) {
      if (!can(null, to)) throw refuse ? refuse() : refused(null, to);
      return made(to);
    },
    step(from, to, refuse) {
      if (!can(from, to)) throw refuse ? refuse() : refused(from, to);
      return made(to);
    },
  };
}

/** A record a machine keeps: its status, and when it last changed. */
export interface MachineRecord<M extends string, S extends string> extends BaseDoc {
  status: Status<M, S>;
  updated_at: string;
}

/** How a transition is written: the other fields it sets, when, and what a refused or lost one throws. */
export interface TransitionWrite<D> {
  set?: Partial<Omit<D, "status">>;
  /** The record's new updated_at (the environment's clock). */
  at: string;
  /** The error for a change the table refuses, given the record as it is now. */
  refuse: (current: D) => Error;
}

/** What a transition needs of a store or a transaction, for one collection of records of type D. */
export interface MachineOps<C extends string, D> {
  update(collection: C, id: string, changes: Changes<D>, expect?: Where<D>): Promise<D | null>;
  get(collection: C, id: string): Promise<D | null>;
}

/**
 * Writes `doc`'s move to `to` (with `write.set`), conditionally on the status it was read in, and returns
 * the record written, or null when a concurrent change got there first (a claim another instance won).
 * Throws `write.refuse(doc)` when the table has no such edge.
 */
export function tryTransition<C extends string, D extends MachineRecord<M, S>, M extends string, S extends string>(
  ops: NoInfer<MachineOps<C, D>>,
  collection: C,
  machine: StateMachine<M, S>,
  doc: D,
  to: S,
  write: TransitionWrite<D>,
): Promise<D | null> {
  const from: S = doc.status;
  const status = machine.step(from, to, () => write.refuse(doc));
  // The casts only restate, for a generic D, the fields MachineRecord declares.
  const set = { ...write.set, status, updated_at: write.at } as Partial<D>;
  // cast: as above (the status field MachineRecord declares, seen through a generic D).
  const expect = { status: from } as Where<D>;
  return ops.update(collection, doc.id, { set }, expect);
}

/**
 * As tryTransition, but a lost race is an error: `write.refuse(current)` for the record as a concurrent
 * change left it (a 409 that says why), or a 404 naming `kind` if it is gone.
 */
export async function transition<C extends string, D extends MachineRecord<M, S>, M extends string, S extends string>(
  ops: NoInfer<MachineOps<C, D>>,
  collection: C,
  kind: string,
  machine: StateMachine<M, S>,
  doc: D,
  to: S,
  write: TransitionWrite<D>,
): Promise<D> {
  const updated = await tryTransition(ops, collection, machine, doc, to, write);
  if (updated) return updated;
  const current = await ops.get(collection, doc.id);
  throw current ? write.refuse(current) : notFound(kind, doc.id);
}
