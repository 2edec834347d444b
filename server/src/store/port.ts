// The store port: the only way the domain reaches storage. Two adapters implement it, embedded SQLite
// (./sqlite.ts, the default) and MongoDB (./mongodb.ts), and one conformance suite (./conformance.ts) holds
// both to the same behaviour. Domain code imports this file, never a driver.
//
// The model is deliberately small: named collections of flat JSON documents, each with `id`,
// `livemode` and `created_at`; equality/range filters on top-level fields; conditional updates (the
// building block for "no double capture", "no overdraft"); and transactions.

export interface BaseDoc {
  id: string;
  livemode: boolean;
  /** RFC 3339 UTC, the same fixed-width format in every document, so it sorts lexicographically (list order relies on it). */
  created_at: string;
}

export type Scalar = string | number | boolean | null;

/**
 * A condition on one top-level field. A bare value means equality (null matches null or missing).
 * Values must be Scalars; the range operators take a string or a number and compare like with like.
 * `{ $gte, $lt }` is a half-open range (a list's creation-time window, listBalanceTransactions).
 */
export type Condition<V> =
  | V
  | { $in: V[] }
  | { $ne: V }
  | { $lt: V }
  | { $lte: V }
  | { $gt: V }
  | { $gte: V }
  | { $gte: V; $lt: V };

/**
 * A value only its maker can produce: a stored field typed `Branded<…>` can be written (insert, an
 * update's `set`, a document built in memory) only with a value that maker returned. The domain's state
 * machines (domain/kernel/state-machine.ts) brand every status field this way, so a status write that
 * skips its machine does not compile. The brand exists only for the compiler: at run time the value is
 * the plain string.
 */
declare const brand: unique symbol;
export type Branded<S, Maker extends string> = S extends unknown
  ? S & { readonly [brand]: { maker: Maker; value: S } }
  : never;

/** The plain value of a branded field (what a filter compares it with); any other type as it is. */
export type Unbranded<T> = T extends { readonly [brand]: { value: infer S } } ? S : T;

/** Conditions compare plain values: reading and filtering a branded field needs no maker. */
export type Where<T> = { [K in keyof T]?: Condition<Unbranded<T[K]>> };

/**
 * A page of `list`. A cursor is looked up by its id among the collection's documents of `where`'s
 * environment (its `livemode`), whatever `where`'s other conditions: a document that has left a filter
 * since the previous page (a charge whose status changed) still marks the place. A cursor found nowhere
 * there throws UnknownCursorError, so an unknown or mistyped cursor is never mistaken for the end of the list.
 */
export interface Page {
  /** 1-100. */
  limit: number;
  /** Return documents older than this id (the next page). */
  startingAfter?: string | undefined;
  /** Return documents newer than this id (the previous page). */
  endingBefore?: string | undefined;
}

/** Thrown by list when its cursor names no document of the collection in `where`'s environment (Page). */
export class UnknownCursorError extends Error {
  constructor(
    readonly collection: string,
    /** Which of the page's cursors it was. */
    readonly cursor: "startingAfter" | "endingBefore",
    readonly id: string,
  ) {
    super(`unknown ${cursor} cursor in ${collection}`);
    this.name = "UnknownCursorError";
  }
}

/**
 * The order findAll returns documents in: by one top-level field, then by id, in one direction.
 * Documents whose field is missing or null come first in ascending order (as MongoDB sorts them).
 * Without an order, findAll returns newest first (created_at, then id, descending).
 */
export interface Order<T> {
  by: keyof T & string;
  direction: "asc" | "desc";
}

export interface PageResult<T> {
  /** Newest first, whatever the cursor direction. */
  data: T[];
  hasMore: boolean;
}

/** Numeric fields of T. */
export type NumericKeys<T> = { [K in keyof T]: T[K] extends number ? K : never }[keyof T];

export interface Changes<T> {
  set?: Partial<T>;
  /** Adds to numeric fields atomically. */
  inc?: { [K in NumericKeys<T>]?: number };
}

/**
 * Thrown by insert when the id, or a field with a unique index, already exists (and by update when it
 * would set a unique field to a taken value). `key` names the clashing field(s), comma-separated: "id"
 * for the id.
 */
export class DuplicateKeyError extends Error {
  constructor(
    readonly collection: string,
    readonly key: string,
  ) {
    super(`duplicate key in ${collection}: ${key}`);
    this.name = "DuplicateKeyError";
  }
}

/**
 * Thrown when the store stayed busy for longer than a request may wait: another connection (another
 * instance or process on the same SQLite file) held the write lock throughout. Nothing of the operation
 * was written; the HTTP layer answers 503 with Retry-After (spec/common/problems.tsp, StoreBusy), never
 * a 500, because trying again shortly is all the caller has to do.
 */
export class StoreBusyError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the store is busy: another connection held it for longer than an operation waits", options);
    this.name = "StoreBusyError";
  }
}

/** Operations available inside and outside a transaction. */
export interface StoreOps<Docs extends Record<string, BaseDoc>> {
  insert<C extends keyof Docs & string>(collection: C, doc: Docs[C]): Promise<void>;
  get<C extends keyof Docs & string>(collection: C, id: string): Promise<Docs[C] | null>;
  /** The newest matching document. */
  findOne<C extends keyof Docs & string>(collection: C, where: Where<Docs[C]>): Promise<Docs[C] | null>;
  /**
   * Every matching document, newest first or in `order` (for small sets, or with a limit: a charge's
   * refunds, the webhook deliveries due soonest). Give an order a queue needs an index for: an index
   * whose fields are the equality conditions and then the order's field.
   */
  findAll<C extends keyof Docs & string>(
    collection: C,
    where: Where<Docs[C]>,
    limit?: number,
    order?: Order<Docs[C]>,
  ): Promise<Docs[C][]>;
  /** A page of matching documents, newest first by (created_at, id). A cursor id that does not match `where` gives an empty page. */
  list<C extends keyof Docs & string>(collection: C, where: Where<Docs[C]>, page: Page): Promise<PageResult<Docs[C]>>;
  /**
   * Applies `changes` to the document `id` if it exists and matches `expect`, atomically, and returns
   * the updated document; returns null (and changes nothing) otherwise.
   */
  update<C extends keyof Docs & string>(
    collection: C,
    id: string,
    changes: Changes<Docs[C]>,
    expect?: Where<Docs[C]>,
  ): Promise<Docs[C] | null>;
  /** Deletes the document `id` if it matches `expect`; true when one was deleted. */
  delete<C extends keyof Docs & string>(collection: C, id: string, expect?: Where<Docs[C]>): Promise<boolean>;
  /** Deletes every matching document; returns how many (housekeeping: expired idempotency keys). */
  deleteMany<C extends keyof Docs & string>(collection: C, where: Where<Docs[C]>): Promise<number>;
}

/** The operations of one run of a transaction's fn. */
export interface TxOps<Docs extends Record<string, BaseDoc>> extends StoreOps<Docs> {
  /**
   * Calls `callback` once this run of fn has committed, before transaction() resolves; never when it
   * rolls back, and never for a run that MongoDB discards and runs again. For what the caller may only
   * believe after the commit (an idempotency outcome recorded with the change). The callback must be
   * synchronous and should not throw: if it does, transaction() rejects although the commit happened.
   */
  afterCommit(callback: () => void): void;
}

export interface Store<Docs extends Record<string, BaseDoc>> extends StoreOps<Docs>, StoreReadiness {
  readonly kind: "sqlite" | "mongodb";
  /**
   * Runs fn in one transaction: all of its writes happen or none do, and no other transaction sees
   * them half-done. fn must only touch the store through `tx` and may be run more than once (MongoDB
   * retries transient transaction errors), so it must not have outside side effects; what must happen
   * only after the commit goes to tx.afterCommit.
   *
   * Both adapters end a run alike: operations fn started but did not await are waited for before the
   * commit (they run inside the transaction, never after it), and once a tx operation has failed
   * (DuplicateKeyError included) every further one is refused and the transaction rolls back, even if
   * fn catches the error and returns: MongoDB has already aborted the transaction on the server at that
   * point. transaction() then rejects with the failed operation's error (or with fn's own, when fn
   * threw something else).
   */
  transaction<T>(fn: (tx: TxOps<Docs>) => Promise<T>): Promise<T>;
  /**
   * Called after data was erased (a token's key material): leaves no older copy of it in the store's own
   * files where the engine allows. SQLite (secure_delete on, so freed space is zeroed) checkpoints its
   * write-ahead log into the database and truncates it, so no earlier page image survives. MongoDB
   * keeps old versions inside its storage engine until it reuses the space; the caller overwrites the
   * data with random bytes before erasing it, so what may linger there is noise.
   */
  scrub(): Promise<void>;
  close(): Promise<void>;
}

/** Readiness: whether the store can take this instance's writes now. */
export interface StoreReadiness {
  /**
   * Resolves when the store shows within `timeoutMs` that it takes writes; rejects otherwise. MongoDB:
   * one write acknowledged by a majority of the replica set (a set that lost its majority still
   * answers reads, and would hang writes). SQLite: a read on the connection (its one writer is this
   * process, so a read proves the file answers).
   */
  ready(timeoutMs: number): Promise<void>;
}

/**
 * Per-collection indexes: each entry is a list of top-level fields; `unique` ones reject duplicates.
 * A non-unique index also serves findAll's order by its last field after equality conditions on the
 * fields before it (the queues: due deliveries, pending events); the MongoDB adapter appends `_id` to
 * it, the tiebreak of every order, so no such query sorts in memory.
 * Keep unique fields present and non-null: MongoDB counts a missing or null value as a value, SQLite does not.
 */
export interface IndexSpec {
  fields: string[];
  unique?: boolean;
  /**
   * Leaves out of the index the documents whose last field (before a trailing `created_at`, `id`: the
   * listing order an index may end in) is missing or null: for a field most
   * documents lack (a deadline only some charges have), whose queries always ask for a value of it
   * (equality with a value, a range), which null never meets. Every write of such a document then
   * skips the index. Only the index's size and upkeep change, never what a query finds: SQLite makes
   * it a partial index, which its planner uses for exactly those queries; MongoDB indexes every
   * document as before (its planner would pick a partial index only for queries that repeat the
   * filter word for word).
   */
  sparse?: boolean;
  /**
   * Indexes only the documents whose fields hold exactly these values: for a queue most documents have
   * left (the outbox: events whose `delivery_pending` is true, a handful at any moment among millions
   * delivered), so a document leaves the index when it leaves the queue, and the index stays the size
   * of the queue (issue 36: the outbox index was 150 bytes per charge). Queries must ask for these
   * values (equality), or the index cannot serve them: SQLite makes it a partial index (`WHERE col =
   * value`), which its planner uses for a query binding that value; MongoDB a partialFilterExpression,
   * which serves queries whose filter has the same equality.
   * A lower bound (`{ $gte: n }`) covers the rare end of a number's range (the request log's failed
   * requests, status ≥ 400, issue 36): queries must ask for the same bound. `null` covers the documents
   * the field is missing or null in (ledger entries from before postings, which an upgrade looks for):
   * SQLite makes it `IS NULL`; MongoDB indexes every document (a partial filter cannot select null).
   */
  where?: Record<string, IndexCondition>;
}

/** What an index's `where` asks of one field (IndexSpec.where): a boolean, or a lower bound on a number. */
export type IndexCondition = boolean | null | { $gte: number };

/** One collection's spec: its indexes, and whether it is listed. */
export interface CollectionSpec {
  indexes: IndexSpec[];
  /**
   * Nothing lists this collection (no list(), no findAll in the listing order over a whole environment):
   * it is read by id or through its own indexes only. It then has no listing index (livemode,
   * created_at, id), which every write would otherwise keep up (issue 36: 70 to 150 bytes per row, for
   * the per-charge records nobody pages through: idempotency keys, acquirer intents, postings, ledger
   * entries), and list() refuses it, so a new list cannot quietly scan the table.
   */
  unlisted?: boolean;
  /**
   * Indexed fields that hold a timestamp (domain/kernel/time.ts) or null, as created_at always does.
   * SQLite keeps them, and created_at, as integers of microseconds in their columns and indexes (issue
   * 36: 8 bytes instead of 27 in each), and refuses any other value in them; MongoDB keeps the text.
   * Declaring one upgrades its column at the next open; keep it declared while any document holds it
   * (a column of integers cannot tell a timestamp from a number once the declaration is gone).
   */
  timestamps?: string[];
}

export type CollectionSpecs<Docs> = { [C in keyof Docs]: CollectionSpec };

/** Thrown by list on a collection its spec declares unlisted (CollectionSpec). */
export function refuseUnlisted(collection: string): never {
  throw new TypeError(
    `${collection} is declared unlisted (its collection spec), so it has no listing index: declare it listed to list it`,
  );
}
