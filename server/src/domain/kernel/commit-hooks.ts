import type { BaseDoc, Store, StoreOps, TxOps } from "../../store/port.ts";
import type { EventDoc } from "./events.ts";

// Commit hooks (issue 29, "the outbox as a commit hook"): the kernel tells whoever asked, right after a
// commit, that it wrote to a collection they watch. The domain's root makes the one hooked store every
// area is handed (domain/areas.ts buildDomain); an area never wraps another's writes. The webhooks area
// watches `events` (which every area records through kernel/events.ts, in the transaction of the change)
// and its own `webhook_deliveries`, so its dispatcher starts a delivery within milliseconds of the commit
// on this instance (webhooks/outbox.ts); other instances find the work by polling.
//
// Inside a transaction the hook rides the store's own tx.afterCommit (store/port.ts): it runs once the
// run that wrote has committed, never for a rollback or a MongoDB run discarded and run again. Outside a
// transaction each write is its own commit, and the hook runs once the write is done.
//
// The outbox's gate (issue 36, main-thread work per charge): an event recorded for delivery
// (kernel/events.ts, `delivery_pending: true`) is shown, inside its transaction, to the gate the webhooks
// area registers, which says whether any endpoint would get it; if none would, the event is written
// already fanned out (`delivery_pending: false`), so no later transaction rewrites it only to clear the
// flag, and no dispatcher pass wakes for it. A commit that leaves an event to fan out is announced under
// OUTBOX_TOPIC as well as under `events`, so the dispatcher watches that and the event streams `events`.

type Listener = () => void;

/** The topic a commit is announced under when it recorded an event still to fan out (besides `events`). */
export const OUTBOX_TOPIC = "outbox";

/**
 * What the outbox's gate may read: the store, inside the transaction recording the event. One reader per
 * transaction run (and per write outside one), so the gate may remember what it read through it.
 */
export type GateReader<D extends Record<string, BaseDoc>> = Pick<StoreOps<D>, "findAll">;

/** Whether anything will fan `event` out (the webhooks area's answer: webhooks/fan-out.ts). */
export type OutboxGate<D extends Record<string, BaseDoc>> = (
  reader: GateReader<D>,
  event: EventDoc,
) => Promise<boolean>;

export interface CommitHooks<D extends Record<string, BaseDoc> = Record<string, BaseDoc>> {
  /**
   * Calls `listener` after each commit that inserted or updated a document of one of `collections`, or
   * recorded an event to fan out when they name OUTBOX_TOPIC (once per commit). Returns the function that
   * stops it. Listeners must be synchronous and must not throw.
   */
  afterCommitTo(collections: readonly string[], listener: Listener): () => void;
  /**
   * Sets the outbox's gate: asked, inside the transaction, about each event recorded for delivery; an
   * event it answers false for is written with `delivery_pending: false`. One gate per store (the
   * webhooks area's); without one every such event stays pending for the dispatcher.
   */
  gateOutbox(gate: OutboxGate<D>): void;
}

export interface HookedStore<D extends Record<string, BaseDoc>> extends CommitHooks<D> {
  /** The store every area writes through: its commits run the hooks. */
  store: Store<D>;
  /**
   * The same store without hooks, for a watcher whose own writes must not wake it again (the webhook
   * dispatcher's claims and attempts).
   */
  quiet: Store<D>;
}

/** The store `store` with commit hooks (one per domain: domain/areas.ts). */
export function withCommitHooks<D extends Record<string, BaseDoc>>(store: Store<D>): HookedStore<D> {
  const watchers = new Set<{ collections: ReadonlySet<string>; listener: Listener }>();
  // Asked on every write (insert and update, in and outside transactions): a loop over the set, not a
  // copy of it into an array per call (issue 36, allocation per charge).
  const watched = (collection: string) => {
    for (const w of watchers) if (w.collections.has(collection)) return true;
    return false;
  };
  /** The listeners watching any of `written`, each called once. */
  const notify = (written: ReadonlySet<string>) => {
    for (const w of [...watchers]) if ([...written].some((c) => w.collections.has(c))) w.listener();
  };
  let gate: OutboxGate<D> | null = null;

  /**
   * Writes `doc` through `insert`, and notes what it announces (`note(collection, pending)`). An event
   * recorded for delivery is first shown to the gate, and one it says nobody takes is written already
   * fanned out (a copy: the caller's object is left as it was). Anything else is written at once, with
   * no extra turn of the event loop.
   */
  function insertThrough<T extends BaseDoc>(
    reader: () => GateReader<D>,
    collection: string,
    doc: T,
    insert: (doc: T) => Promise<void>,
    note: (collection: string, pending: boolean) => void,
  ): Promise<void> {
    const ask = gate;
    if (ask === null || collection !== "events" || !pendingEvent(doc)) {
      note(collection, false);
      return insert(doc);
    }
    return ask(reader(), doc).then((taken) => {
      note(collection, taken);
      return insert(taken ? doc : { ...doc, delivery_pending: false });
    });
  }

  /** `tx` with its inserts and updates of watched collections noted, and the hooks run at its commit. */
  function hooked(tx: TxOps<D>): TxOps<D> {
    const written = new Set<string>();
    const add = (topic: string) => {
      if (!watched(topic)) return;
      if (written.size === 0) tx.afterCommit(() => notify(written));
      written.add(topic);
    };
    const note = (collection: string, pending: boolean) => {
      add(collection);
      if (pending) add(OUTBOX_TOPIC);
    };
    // The gate's reader for this run: one object, made when first asked, so what the gate remembers of
    // what it read ends with the run.
    let reader: GateReader<D> | null = null;
    const readerOfRun = () => {
      reader ??= { findAll: (c, w, l, o) => tx.findAll(c, w, l, o) };
      return reader;
    };
    return {
      ...tx,
      insert: (collection, doc) => insertThrough(readerOfRun, collection, doc, (d) => tx.insert(collection, d), note),
      update: (collection, id, changes, expect) => {
        note(collection, collection === "events" && setsPending(changes.set));
        return tx.update(collection, id, changes, expect);
      },
      afterCommit: (callback) => tx.afterCommit(callback),
    };
  }

  /** After a single write outside a transaction: the listeners of what it wrote, once it is done. */
  const after = <R>(collection: string, pending: boolean, write: Promise<R>): Promise<R> => {
    const topics = pending ? [collection, OUTBOX_TOPIC] : [collection];
    return topics.some(watched)
      ? write.then((result) => {
          notify(new Set(topics));
          return result;
        })
      : write;
  };
  const outside: StoreOps<D> = {
    insert: (c, d) => {
      let pending = false;
      return insertThrough(
        () => ({ findAll: (c2, w, l, o) => store.findAll(c2, w, l, o) }),
        c,
        d,
        (doc) => after(c, pending, store.insert(c, doc)),
        (_, taken) => {
          pending = taken;
        },
      );
    },
    get: (c, id) => store.get(c, id),
    findOne: (c, w) => store.findOne(c, w),
    findAll: (c, w, l, o) => store.findAll(c, w, l, o),
    list: (c, w, p) => store.list(c, w, p),
    update: (c, id, ch, e) => after(c, c === "events" && setsPending(ch.set), store.update(c, id, ch, e)),
    delete: (c, id, e) => store.delete(c, id, e),
    deleteMany: (c, w) => store.deleteMany(c, w),
  };

  return {
    store: {
      ...outside,
      kind: store.kind,
      transaction: (fn) => store.transaction((tx) => fn(hooked(tx))),
      ready: (timeoutMs) => store.ready(timeoutMs),
      scrub: () => store.scrub(),
      close: () => store.close(),
    },
    quiet: store,
    afterCommitTo(collections, listener) {
      const watcher = { collections: new Set(collections), listener };
      watchers.add(watcher);
      return () => {
        watchers.delete(watcher);
      };
    },
    gateOutbox(outboxGate) {
      gate = outboxGate;
    },
  };
}

/** An update that marks an event to fan out again (tests do, to put one back in the outbox). */
function setsPending(set: object | undefined): boolean {
  return set !== undefined && "delivery_pending" in set && set.delivery_pending === true;
}

/** An event recorded for delivery, still to fan out (kernel/events.ts EventDoc). */
function pendingEvent(doc: BaseDoc): doc is EventDoc {
  return "delivery_pending" in doc && doc.delivery_pending === true;
}
