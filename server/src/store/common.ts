// Validation and plumbing shared by the adapters, so that both reject the same misuse in the same way
// and translate the same normalized conditions.

import { AsyncLocalStorage } from "node:async_hooks";
import { isRecord } from "../guards.ts";
import type { BaseDoc, Changes, CollectionSpecs, Order, Page, Scalar, Where } from "./port.ts";

/**
 * Collection and field names end up inside SQL text (table names, JSON paths) and Mongo filter keys,
 * so only plain identifiers are accepted: no quotes, dots, dollars or spaces can ever reach a query.
 */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Identifiers no field may have: `_id` is MongoDB's own key (the adapter stores `id` there, so a field
 * `_id` would overwrite it), and assigning `__proto__` to a plain object changes its prototype instead
 * of adding a field (the SQLite adapter applies `set` to a parsed object).
 */
const RESERVED_FIELDS = new Set(["_id", "__proto__"]);

/**
 * Field names already found valid. Top-level field names come from the code, a few dozen of them, and
 * every write checks each of its document's: remembered, a check is one lookup instead of a regular
 * expression. Bounded all the same, so no stream of odd names can grow it.
 */
const validFields = new Set<string>();
const VALID_FIELDS_KEPT = 1000;

export function assertIdentifier(kind: "collection" | "field", name: string): void {
  if (kind === "field" && validFields.has(name)) return;
  if (typeof name !== "string" || !IDENTIFIER.test(name)) {
    throw new TypeError(`invalid ${kind} name: ${JSON.stringify(name)}`);
  }
  if (kind === "field" && RESERVED_FIELDS.has(name))
    throw new TypeError(`reserved field name: ${JSON.stringify(name)}`);
  if (kind === "field" && validFields.size < VALID_FIELDS_KEPT) validFields.add(name);
}

/**
 * Why a key inside a stored value cannot be stored on every adapter, or null when it can. BSON refuses
 * a key with a NUL character outright, and MongoDB treats `$`-prefixed and dotted keys as operators and
 * paths in updates and queries; SQLite's JSON would keep all three, so both adapters refuse them.
 */
export function unstorableKeyReason(key: string): string | null {
  if (key.includes("\0")) return "contains a NUL character";
  if (key.charCodeAt(0) === 36) return "starts with $";
  if (key.includes(".")) return "contains a dot";
  return null;
}

/**
 * Accepts exactly the JSON values both adapters store and give back unchanged: strings, finite
 * numbers, booleans, null, arrays and plain objects whose keys pass unstorableKeyReason. A Date, a
 * Buffer, a bigint, NaN or Infinity would come back from SQLite's JSON as something else than from
 * BSON, so they are refused here instead. Undefined object members are skipped, as both adapters
 * drop them.
 */
export function assertStorable(value: unknown, path: string): void {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`${path} must be a finite number, got ${value}`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (item === undefined) throw new TypeError(`${path}[${i}] is undefined; arrays cannot hold undefined`);
      assertStorable(item, `${path}[${i}]`);
    });
    return;
  }
  if (isRecord(value) && Object.getPrototypeOf(value) === Object.prototype) {
    // Keys, not entries, and the member's path built only when it is not a string: every document of
    // every write passes through here, so what this allocates is paid per request.
    const record = value;
    for (const key of Object.keys(record)) {
      const reason = unstorableKeyReason(key);
      if (reason !== null) throw new TypeError(`key ${JSON.stringify(key)} in ${path} ${reason}`);
      const member = record[key];
      if (member !== undefined && typeof member !== "string") assertStorable(member, `${path}.${key}`);
    }
    return;
  }
  const kind = value === undefined ? "undefined" : typeof value === "object" ? value.constructor?.name : typeof value;
  throw new TypeError(
    `${path} must be a JSON value (string, number, boolean, null, array or plain object), got ${kind}`,
  );
}

/** Checks the specs once at open time; returns the set of collection names operations may use. */
export function collectionNames<Docs>(specs: CollectionSpecs<Docs>): Set<string> {
  const names = new Set<string>();
  for (const [name, spec] of Object.entries<{ indexes: { fields: string[] }[] }>(specs)) {
    assertIdentifier("collection", name);
    for (const index of spec.indexes) {
      if (index.fields.length === 0) throw new TypeError(`empty index on ${name}`);
      for (const field of index.fields) assertIdentifier("field", field);
    }
    names.add(name);
  }
  return names;
}

export function assertCollection(names: Set<string>, name: string): void {
  if (!names.has(name)) throw new TypeError(`unknown collection: ${JSON.stringify(name)}`);
}

export type Op = "eq" | "ne" | "lt" | "lte" | "gt" | "gte";

/** One normalized condition: `in` carries a list, every other operator one scalar. */
export type Term = { field: string; op: Op; value: Scalar } | { field: string; op: "in"; values: Scalar[] };

/** A Map, not an object: a condition such as `{constructor: …}` must not find Object.prototype's members. */
const OPERATORS = new Map<string, Op | "in">([
  ["$in", "in"],
  ["$ne", "ne"],
  ["$lt", "lt"],
  ["$lte", "lte"],
  ["$gt", "gt"],
  ["$gte", "gte"],
]);

function scalar(field: string, value: unknown): Scalar {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  throw new TypeError(`condition on ${field} must be a string, finite number, boolean or null`);
}

/**
 * Normalizes a Where into terms. Keys whose value is undefined are skipped, as JSON.stringify would.
 * Only scalar values are comparable; range operators take strings or numbers (never null or booleans)
 * and should compare like with like: MongoDB only matches values of the same type, SQLite orders
 * numbers before strings.
 */
export function terms(where: Where<BaseDoc> | undefined): Term[] {
  const out: Term[] = [];
  if (where === undefined) return out;
  const conditions: Record<string, unknown> = where;
  for (const field of Object.keys(conditions)) {
    const condition = conditions[field];
    if (condition === undefined) continue;
    assertIdentifier("field", field);
    if (!isRecord(condition)) {
      out.push({ field, op: "eq", value: scalar(field, condition) });
      continue;
    }
    const keys = Object.keys(condition);
    if (keys.length === 2 && keys.includes("$gte") && keys.includes("$lt")) {
      // A half-open range: two terms on the field, both of which must hold.
      for (const key of ["$gte", "$lt"] as const) {
        const value = scalar(field, condition[key]);
        if (typeof value !== "string" && typeof value !== "number") {
          throw new TypeError(`${key} on ${field} needs a string or a number`);
        }
        out.push({ field, op: key === "$gte" ? "gte" : "lt", value });
      }
      continue;
    }
    const [key] = keys;
    const op = keys.length === 1 && key !== undefined ? OPERATORS.get(key) : undefined;
    if (op === undefined || key === undefined)
      throw new TypeError(
        `condition on ${field} must be a scalar or one of $in, $ne, $lt, $lte, $gt, $gte (or $gte with $lt)`,
      );
    const operand = condition[key];
    if (op === "in") {
      if (!Array.isArray(operand)) throw new TypeError(`$in on ${field} needs an array`);
      out.push({ field, op, values: operand.map((v) => scalar(field, v)) });
      continue;
    }
    const value = scalar(field, operand);
    if (op !== "ne" && typeof value !== "string" && typeof value !== "number") {
      throw new TypeError(`${key} on ${field} needs a string or a number`);
    }
    out.push({ field, op, value });
  }
  return out;
}

export interface NormalizedChanges {
  set: [string, unknown][];
  inc: [string, number][];
}

/** The fields every document has (port.ts, BaseDoc), and the type each must keep. */
const SYSTEM_FIELDS: Record<string, "string" | "boolean"> = { id: "string", livemode: "boolean", created_at: "string" };

/**
 * Validates update changes: identifier field names, `id` never changes, `livemode` and `created_at`
 * keep their types, set values are storable (assertStorable), a field is either set or incremented
 * (MongoDB rejects both at once), increments are finite numbers on fields other than the system ones.
 * Undefined values are skipped, as JSON.stringify would.
 */
export function normalizeChanges(changes: Changes<BaseDoc>): NormalizedChanges {
  const set: [string, unknown][] = [];
  const inc: [string, number][] = [];
  const sets: Record<string, unknown> = changes.set ?? {};
  for (const field of Object.keys(sets)) {
    const value = sets[field];
    if (value === undefined) continue;
    assertIdentifier("field", field);
    if (field === "id") throw new TypeError("a document's id cannot be changed");
    const type = Object.hasOwn(SYSTEM_FIELDS, field) ? SYSTEM_FIELDS[field] : undefined;
    if (type !== undefined && typeof value !== type) throw new TypeError(`${field} must be a ${type}`);
    assertStorable(value, field);
    set.push([field, value]);
  }
  const incs: Record<string, unknown> = changes.inc ?? {};
  for (const field of Object.keys(incs)) {
    const by = incs[field];
    if (by === undefined) continue;
    assertIdentifier("field", field);
    if (Object.hasOwn(SYSTEM_FIELDS, field)) throw new TypeError(`${field} is not a number and cannot be incremented`);
    if (typeof by !== "number" || !Number.isFinite(by)) throw new TypeError(`inc of ${field} must be a finite number`);
    if (set.some(([f]) => f === field)) throw new TypeError(`${field} is both set and incremented`);
    inc.push([field, by]);
  }
  return { set, inc };
}

/**
 * What an increment finds in the stored field: a missing field counts as 0 (MongoDB's $inc creates
 * it), while null or any other non-number is refused, as MongoDB refuses it (a TypeMismatch error,
 * which the MongoDB adapter turns into this same TypeError).
 */
export function incrementBase(id: string, field: string, current: unknown): number {
  if (current === undefined) return 0;
  if (typeof current !== "number") throw nonNumericIncrement(id, field, current === null ? "null" : typeof current);
  return current;
}

export function nonNumericIncrement(id: string, field: string, found: string): TypeError {
  return new TypeError(`cannot increment ${field} of ${id}: it holds ${found}, not a number`);
}

/** A document as an adapter reads it back: the fields every document has, checked, and the rest by name. */
export type StoredDoc = BaseDoc & Record<string, unknown>;

/**
 * A document read back from storage (parsed JSON, a driver's result), its system fields checked, so
 * that no adapter takes what it reads on trust. The check is three `typeof`s: cheap on every read.
 */
export function storedDoc(value: unknown): StoredDoc {
  if (isStoredDoc(value)) return value;
  throw new TypeError("a stored document lacks its id, livemode or created_at");
}

const isStoredDoc = (value: unknown): value is StoredDoc =>
  isRecord(value) &&
  typeof value.id === "string" &&
  typeof value.livemode === "boolean" &&
  typeof value.created_at === "string";

/** Checks the fields every document has, and their types (port.ts, BaseDoc). */
export function assertSystemFields(doc: BaseDoc): void {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc))
    throw new TypeError("a document must be an object");
  if (typeof doc.id !== "string" || doc.id === "") throw new TypeError("document needs a non-empty string id");
  if (typeof doc.livemode !== "boolean") throw new TypeError("document needs a boolean livemode");
  if (typeof doc.created_at !== "string") throw new TypeError("document needs a string created_at");
}

/**
 * Checks a document before it is inserted: its system fields (assertSystemFields), identifier field
 * names, and storable values (assertStorable). Gives back the document as fields read by name.
 */
export function assertDoc(doc: BaseDoc): Record<string, unknown> {
  assertSystemFields(doc);
  if (!isRecord(doc)) throw new TypeError("a document must be an object");
  const fields = doc;
  for (const field of Object.keys(fields)) {
    const value = fields[field];
    if (value === undefined) continue;
    assertIdentifier("field", field);
    if (typeof value !== "string") assertStorable(value, field);
  }
  return fields;
}

export function assertPage(page: Page): void {
  if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > 100) {
    throw new RangeError(`page limit must be an integer from 1 to 100, got ${page.limit}`);
  }
  if (page.startingAfter !== undefined && page.endingBefore !== undefined) {
    throw new TypeError("pass startingAfter or endingBefore, not both");
  }
}

export function assertLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }
}

/** FIFO async mutex; the lock is handed straight to the next waiter so nobody can barge in between. */
export class Mutex {
  private held = false;
  private readonly waiters: (() => void)[] = [];

  get locked(): boolean {
    return this.held;
  }

  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

/** One run of a transaction's fn; `tx` refuses work once it is over. */
export interface TxScope {
  active: boolean;
}

/**
 * Remembers, per async context, which transaction fn is running, so that a call to the outer store
 * from inside fn fails loudly: on SQLite it would wait forever for the lock fn holds, on MongoDB it
 * would silently run outside the transaction.
 *
 * The memory is an AsyncLocalStorage, and on Node 20 and 22 one in use makes Node run a hook on every
 * promise of the process (about 3 % of a request's CPU in `npm run bench:profile`'s profiles, more counting the
 * garbage). So the stores take it only where mistakes are made and caught, in development and tests
 * (`guard: true`, their default), and the server switches it off in production (server.ts): a
 * misuse fails the tests long before it ships, and does nothing different in production that it
 * would not do without the guard. txGuard(false) gives the guard that checks nothing.
 */
export interface TxGuard {
  run<T>(scope: TxScope, fn: () => Promise<T>): Promise<T>;
  assertOutside(): void;
}

class AsyncTxGuard implements TxGuard {
  private readonly context = new AsyncLocalStorage<TxScope>();

  run<T>(scope: TxScope, fn: () => Promise<T>): Promise<T> {
    return this.context.run(scope, fn);
  }

  assertOutside(): void {
    if (this.context.getStore()?.active) {
      throw new Error("store used directly inside its own transaction: use the tx argument of transaction(fn)");
    }
  }
}

const UNGUARDED: TxGuard = {
  run: (_scope, fn) => fn(),
  assertOutside() {},
};

export function txGuard(enabled: boolean): TxGuard {
  return enabled ? new AsyncTxGuard() : UNGUARDED;
}

/** What a tx operation rejects with once an earlier operation of its transaction has failed. */
export class TransactionFailedError extends Error {
  constructor(readonly first: unknown) {
    super(
      `transaction refused this operation: an earlier operation in it failed (${first instanceof Error ? first.message : String(first)})`,
      { cause: first },
    );
    this.name = "TransactionFailedError";
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * One run of a transaction's fn, shared by both adapters so that a run ends the same way on each
 * (port.ts, Store.transaction):
 * - every tx operation is tracked until it settles, and the run waits for all of them before it
 *   commits or rolls back, so an operation fn forgot to await still runs inside the transaction,
 *   never after it;
 * - once an operation has failed, every further one is refused and the run cannot commit. MongoDB
 *   has already aborted the transaction on the server at that point, so SQLite refuses as well: fn
 *   cannot catch a store error and commit half of its work on one adapter only;
 * - callbacks given to afterCommit run once this run has committed, never when it rolls back or is
 *   run again.
 */
export class TxRun implements TxScope {
  active = true;
  private failure: { error: unknown } | undefined;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly onCommit: (() => void)[] = [];

  /** Throws when no operation may start: the run is over, or an earlier operation failed. */
  check(): void {
    if (!this.active) throw new Error("transaction already finished: tx cannot be used after transaction(fn) settles");
    if (this.failure) throw new TransactionFailedError(this.failure.error);
  }

  /**
   * Runs one tx operation (synchronous on SQLite, a promise on MongoDB): refused as check() says, its
   * failure recorded as soon as it is known, and tracked until it settles. A failure inside the run
   * is reported by transaction() whether or not fn awaited the operation, so the promise handed back
   * never counts as an unhandled rejection.
   */
  track<T>(op: () => T | Promise<T>): Promise<T> {
    if (!this.active)
      return Promise.reject(new Error("transaction already finished: tx cannot be used after transaction(fn) settles"));
    let result: T | Promise<T>;
    try {
      this.check();
      result = op();
    } catch (error) {
      this.fail(error);
      return handled(Promise.reject(error));
    }
    if (!(result instanceof Promise)) return Promise.resolve(result);
    const tracked: Promise<T> = result.then(
      (value) => {
        this.inflight.delete(tracked);
        return value;
      },
      (error: unknown) => {
        this.inflight.delete(tracked);
        this.fail(error);
        throw error;
      },
    );
    this.inflight.add(tracked);
    return handled(tracked);
  }

  private fail(error: unknown): void {
    this.failure ??= { error };
  }

  /** Registers `callback` to run once this run has committed (port.ts, TxOps.afterCommit). */
  afterCommit(callback: () => void): void {
    if (typeof callback !== "function") throw new TypeError("afterCommit needs a function");
    this.check();
    this.onCommit.push(callback);
  }

  /**
   * Runs fn, then waits for every operation still in flight, then ends the run (no operation may
   * start after it). Resolves with fn's result when fn and every operation succeeded. Otherwise it
   * rejects, so the adapter rolls back: with fn's own error when fn failed, except that the first
   * failed operation's error wins when fn resolved anyway, when fn only passed on a refusal, and when
   * `firstWins` says so (MongoDB: a transient error, which makes the driver run fn again).
   */
  async settle<T>(fn: () => Promise<T>, firstWins: (error: unknown) => boolean = () => false): Promise<T> {
    let outcome: Outcome<T>;
    try {
      outcome = { ok: true, value: await fn() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    this.active = false;
    const failure = this.failure;
    if (failure !== undefined) {
      if (outcome.ok || outcome.error instanceof TransactionFailedError || firstWins(failure.error)) {
        throw failure.error;
      }
      throw outcome.error;
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /**
   * Called by the adapter once this run's commit has returned: runs the afterCommit callbacks, every
   * one of them even if one throws; the first error is then thrown, saying the commit happened.
   */
  committed(): void {
    let failed: { error: unknown } | undefined;
    for (const callback of this.onCommit.splice(0)) {
      try {
        callback();
      } catch (error) {
        failed ??= { error };
      }
    }
    if (failed !== undefined) {
      throw new Error("the transaction committed, but an afterCommit callback failed", { cause: failed.error });
    }
  }
}

/** `promise`, marked as handled: its rejection still reaches whoever awaits it. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

export function assertOrder(order: Order<BaseDoc> | undefined): void {
  if (order === undefined) return;
  assertIdentifier("field", order.by);
  if (order.direction !== "asc" && order.direction !== "desc") {
    throw new TypeError(`order direction must be "asc" or "desc", got ${JSON.stringify(order.direction)}`);
  }
}
