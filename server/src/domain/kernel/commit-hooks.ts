import type { BaseDoc, Store, StoreOps, TxOps } from "../../store/port.ts";

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

type Listener = () => void;

export interface CommitHooks {
  /**
   * Calls `listener` after each commit that inserted or updated a document of one of `collections` (once
   * per commit). Returns the function that stops it. Listeners must be synchronous and must not throw.
   */
  afterCommitTo(collections: readonly string[], listener: Listener): () => void;
}

export interface HookedStore<D extends Record<string, BaseDoc>> extends CommitHooks {
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

  /** `tx` with its inserts and updates of watched collections noted, and the hooks run at its commit. */
  function hooked(tx: TxOps<D>): TxOps<D> {
    const written = new Set<string>();
    const note = (collection: string) => {
      if (!watched(collection)) return;
      if (written.size === 0) tx.afterCommit(() => notify(written));
      written.add(collection);
    };
    return {
      ...tx,
      insert: (collection, doc) => {
        note(collection);
        return tx.insert(collection, doc);
      },
      update: (collection, id, changes, expect) => {
        note(collection);
        return tx.update(collection, id, changes, expect);
      },
      afterCommit: (callback) => tx.afterCommit(callback),
    };
  }

  const after = <R>(collection: string, write: Promise<R>): Promise<R> =>
    watched(collection)
      ? write.then((result) => {
          notify(new Set([collection]));
          return result;
        })
      : write;
  const outside: StoreOps<D> = {
    insert: (c, d) => after(c, store.insert(c, d)),
    get: (c, id) => store.get(c, id),
    findOne: (c, w) => store.findOne(c, w),
    findAll: (c, w, l, o) => store.findAll(c, w, l, o),
    list: (c, w, p) => store.list(c, w, p),
    update: (c, id, ch, e) => after(c, store.update(c, id, ch, e)),
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
  };
}
