import type { StoreOps } from "../../store/port.ts";
import type { AppStore, AppTx, Docs } from "../collections.ts";

// Wakes the dispatcher right after a commit that wrote an event or made a delivery due, so a delivery
// starts within milliseconds of its event's commit on this instance; other instances find the work by
// polling the store (WEBHOOK_POLL_INTERVAL_MS). createDomain (../index.ts) hands every area the watched
// store this makes, so no use case has to remember to signal; only the dispatcher, whose own writes must
// not wake it again, writes through `unwatched`.

type Listener = () => void;

const WATCHED = new Set<string>(["events", "webhook_deliveries"]);

export interface OutboxSignal {
  /** Calls `listener` after each commit that wrote an event or a delivery. Returns an unsubscribe function. */
  subscribe(listener: Listener): () => void;
}

export interface Outbox extends OutboxSignal {
  /** The store every use case writes through: it reports commits that wrote events or deliveries. */
  store: AppStore;
  /** The same store unwatched, for the dispatcher alone. */
  unwatched: AppStore;
}

/** Watches `store` for commits that give the dispatcher work. */
export function createOutbox(store: AppStore): Outbox {
  const listeners = new Set<Listener>();
  const notify = () => {
    for (const listener of listeners) listener();
  };

  /** `ops` with inserts and updates of watched collections noted by `mark`. */
  function watching<T extends AppTx>(ops: T, mark: () => void): T {
    return {
      ...ops,
      insert: (collection, doc) => {
        if (WATCHED.has(collection)) mark();
        return ops.insert(collection, doc);
      },
      update: (collection, id, changes, expect) => {
        if (WATCHED.has(collection)) mark();
        return ops.update(collection, id, changes, expect);
      },
    } as T;
  }

  // Outside a transaction each write is its own commit: notify once it is done.
  const after = <R>(collection: string, write: Promise<R>): Promise<R> =>
    WATCHED.has(collection)
      ? write.then((result) => {
          notify();
          return result;
        })
      : write;
  const outside: StoreOps<Docs> = {
    insert: (c, d) => after(c, store.insert(c, d)),
    get: (c, id) => store.get(c, id),
    findOne: (c, w) => store.findOne(c, w),
    findAll: (c, w, l, o) => store.findAll(c, w, l, o),
    list: (c, w, p) => store.list(c, w, p),
    update: (c, id, ch, e) => after(c, store.update(c, id, ch, e)),
    delete: (c, id, e) => store.delete(c, id, e),
    deleteMany: (c, w) => store.deleteMany(c, w),
  };
  const watched: AppStore = {
    ...outside,
    kind: store.kind,
    async transaction(fn) {
      let wrote = false;
      const result = await store.transaction((tx) =>
        fn(
          watching(tx, () => {
            wrote = true;
          }),
        ),
      );
      if (wrote) notify();
      return result;
    },
    ready: (timeoutMs) => store.ready(timeoutMs),
    scrub: () => store.scrub(),
    close: () => store.close(),
  };

  return {
    store: watched,
    unwatched: store,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
