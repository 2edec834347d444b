// Validation and plumbing shared by the adapters, so that both reject the same misuse in the same way
// and translate the same normalized conditions.

import { AsyncLocalStorage } from "node:async_hooks";
import type { BaseDoc, Changes, CollectionSpecs, Order, Page, Scalar, Where } from "./port.ts";

/**
 * Collection and field names end up inside SQL text (table names, JSON paths) and Mongo filter keys,
 * so only plain identifiers are accepted: no quotes, dots, dollars or spaces can ever reach a query.
 */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function assertIdentifier(kind: "collection" | "field", name: string): void {
  if (!IDENTIFIER.test(name)) throw new TypeError(`invalid ${kind} name: ${JSON.stringify(name)}`);
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

const OPERATORS: Record<string, Op | "in"> = {
  $in: "in",
  $ne: "ne",
  $lt: "lt",
  $lte: "lte",
  $gt: "gt",
  $gte: "gte",
};

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
  for (const [field, condition] of Object.entries(where as Record<string, unknown>)) {
    if (condition === undefined) continue;
    assertIdentifier("field", field);
    if (condition === null || typeof condition !== "object") {
      out.push({ field, op: "eq", value: scalar(field, condition) });
      continue;
    }
    const keys = Object.keys(condition);
    const op = keys.length === 1 && keys[0] !== undefined ? OPERATORS[keys[0]] : undefined;
    if (op === undefined)
      throw new TypeError(`condition on ${field} must be a scalar or one of $in, $ne, $lt, $lte, $gt, $gte`);
    const operand = (condition as Record<string, unknown>)[keys[0] as string];
    if (op === "in") {
      if (!Array.isArray(operand)) throw new TypeError(`$in on ${field} needs an array`);
      out.push({ field, op, values: operand.map((v) => scalar(field, v)) });
      continue;
    }
    const value = scalar(field, operand);
    if (op !== "ne" && typeof value !== "string" && typeof value !== "number") {
      throw new TypeError(`${keys[0]} on ${field} needs a string or a number`);
    }
    out.push({ field, op, value });
  }
  return out;
}

export interface NormalizedChanges {
  set: [string, unknown][];
  inc: [string, number][];
}

/**
 * Validates update changes: identifier field names, `id` never changes, a field is either set or
 * incremented (MongoDB rejects both at once), increments are finite numbers. Undefined values are
 * skipped, as JSON.stringify would.
 */
export function normalizeChanges(changes: Changes<BaseDoc>): NormalizedChanges {
  const set: [string, unknown][] = [];
  const inc: [string, number][] = [];
  for (const [field, value] of Object.entries((changes.set ?? {}) as Record<string, unknown>)) {
    if (value === undefined) continue;
    assertIdentifier("field", field);
    if (field === "id") throw new TypeError("a document's id cannot be changed");
    set.push([field, value]);
  }
  for (const [field, by] of Object.entries((changes.inc ?? {}) as Record<string, unknown>)) {
    if (by === undefined) continue;
    assertIdentifier("field", field);
    if (typeof by !== "number" || !Number.isFinite(by)) throw new TypeError(`inc of ${field} must be a finite number`);
    if (set.some(([f]) => f === field)) throw new TypeError(`${field} is both set and incremented`);
    inc.push([field, by]);
  }
  return { set, inc };
}

export function assertDoc(doc: BaseDoc): void {
  if (typeof doc.id !== "string" || doc.id === "") throw new TypeError("document needs a non-empty string id");
  if (typeof doc.livemode !== "boolean") throw new TypeError("document needs a boolean livemode");
  if (typeof doc.created_at !== "string") throw new TypeError("document needs a string created_at");
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

export function assertActive(scope: TxScope): void {
  if (!scope.active) throw new Error("transaction already finished: tx cannot be used after transaction(fn) settles");
}

export function assertOrder(order: Order<BaseDoc> | undefined): void {
  if (order === undefined) return;
  assertIdentifier("field", order.by);
  if (order.direction !== "asc" && order.direction !== "desc") {
    throw new TypeError(`order direction must be "asc" or "desc", got ${JSON.stringify(order.direction)}`);
  }
}
