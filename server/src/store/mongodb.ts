// The MongoDB adapter (used when MONGODB_URI is set; docs/operating.md 'Running on MongoDB'): one collection per port
// collection, documents stored with `_id` = id. Transactions need a replica set (a single node is enough).
//
// Documents go in exactly as given (plus `_id`) and come back with `_id` projected away, so readers get
// the plain document. `ignoreUndefined` makes undefined fields vanish as they do in the SQLite adapter's
// JSON.

import {
  type ClientSession,
  type Collection,
  type Document,
  type Filter,
  MongoClient,
  MongoServerError,
  type Sort,
  type TransactionOptions,
  type UpdateFilter,
  WriteConcern,
} from "mongodb";
import {
  assertActive,
  assertCollection,
  assertDoc,
  assertLimit,
  assertOrder,
  assertPage,
  collectionNames,
  Mutex,
  normalizeChanges,
  type TxScope,
  terms,
  txGuard,
} from "./common.ts";
import {
  type BaseDoc,
  type CollectionSpecs,
  DuplicateKeyError,
  type Store,
  type StoreOps,
  type Where,
} from "./port.ts";

type Loose = Record<string, BaseDoc>;

interface MongoDoc extends Document {
  _id: string;
}

const WITHOUT_ID = { _id: 0 } as const;
const NEWEST_FIRST: Sort = { created_at: -1, _id: -1 };
const OLDEST_FIRST: Sort = { created_at: 1, _id: 1 };

/**
 * Majority reads and writes: a committed transaction survives a primary failover, and its reads come
 * from majority-committed data. Conditional updates stay safe either way, because concurrent
 * transactions writing one document fail with a write conflict and are retried by withTransaction.
 */
const TRANSACTION_OPTIONS: TransactionOptions = {
  readConcern: { level: "majority" },
  writeConcern: new WriteConcern("majority"),
  readPreference: "primary",
};

function fieldKey(field: string): string {
  return field === "id" ? "_id" : field;
}

/** MongoDB's own semantics already match the port: `{f: null}` and `$in: [null]` match missing fields, `$ne` matches them. */
function filterOf(where: Where<BaseDoc> | undefined): Document {
  const filter: Document = {};
  for (const term of terms(where)) {
    const key = fieldKey(term.field);
    if (term.op === "eq") filter[key] = term.value;
    else if (term.op === "in") filter[key] = { $in: term.values };
    else filter[key] = { [`$${term.op}`]: term.value };
  }
  return filter;
}

function and(...filters: Document[]): Filter<MongoDoc> {
  const nonEmpty = filters.filter((f) => Object.keys(f).length > 0);
  if (nonEmpty.length === 0) return {};
  return nonEmpty.length === 1 ? (nonEmpty[0] as Filter<MongoDoc>) : { $and: nonEmpty };
}

function duplicateKey(collection: string, error: unknown): unknown {
  if (!(error instanceof MongoServerError) || error.code !== 11000) return error;
  // Left as is when the driver may still retry the whole transaction.
  if (error.hasErrorLabel("TransientTransactionError")) return error;
  // Servers since 4.4 report the clashing index's key pattern and values.
  const key: unknown = error.keyPattern ?? error.keyValue;
  const fields = key !== null && typeof key === "object" ? Object.keys(key).map((k) => (k === "_id" ? "id" : k)) : [];
  return new DuplicateKeyError(collection, fields.length > 0 ? fields.join(",") : "unknown");
}

/** Results are read with `_id` projected away, leaving the document as inserted. */
function plain(doc: Document | null): BaseDoc | null {
  return doc as BaseDoc | null;
}

function plainAll(docs: Document[]): BaseDoc[] {
  return docs as BaseDoc[];
}

export async function openMongoStore<Docs extends Record<string, BaseDoc>>(options: {
  uri: string;
  dbName?: string;
  collections: CollectionSpecs<Docs>;
  /**
   * Refuse the outer store inside its own transaction (common.ts, txGuard). Default on; the server
   * turns it off in production, where it costs every promise a hook.
   */
  guard?: boolean;
}): Promise<Store<Docs>> {
  const names = collectionNames(options.collections);
  const client = new MongoClient(options.uri, { ignoreUndefined: true, writeConcern: { w: "majority" } });
  await client.connect();
  const db = client.db(options.dbName);
  try {
    // Fail at start-up, not at the first payment: transactions need a replica set or a sharded cluster.
    const hello = await db.admin().command({ hello: 1 });
    if (hello.setName === undefined && hello.msg !== "isdbgrid") {
      throw new Error(
        "MongoDB must be a replica set for transactions (a single node is fine: mongod --replSet rs0, then rs.initiate())",
      );
    }
    for (const [name, spec] of Object.entries<{ indexes: { fields: string[]; unique?: boolean }[] }>(
      options.collections,
    )) {
      const collection = db.collection<MongoDoc>(name);
      await collection.createIndex({ livemode: 1, created_at: -1, _id: -1 });
      for (const index of spec.indexes) {
        const keys: Record<string, 1> = {};
        for (const field of index.fields) keys[fieldKey(field)] = 1;
        await collection.createIndex(keys, index.unique ? { unique: true } : {});
      }
    }
  } catch (error) {
    await client.close();
    throw error;
  }

  function collectionOf(name: string): Collection<MongoDoc> {
    assertCollection(names, name);
    return db.collection<MongoDoc>(name);
  }

  /** The port's operations, inside the transaction of `session` when there is one. */
  function ops(session: ClientSession | undefined, run: <T>(op: () => Promise<T>) => Promise<T>): StoreOps<Loose> {
    return {
      insert: (name, doc) =>
        run(async () => {
          const collection = collectionOf(name);
          assertDoc(doc);
          try {
            await collection.insertOne({ _id: doc.id, ...doc }, { session });
          } catch (error) {
            throw duplicateKey(name, error);
          }
        }),

      get: (name, id) =>
        run(async () => plain(await collectionOf(name).findOne({ _id: id }, { projection: WITHOUT_ID, session }))),

      findOne: (name, where) =>
        run(async () =>
          plain(
            await collectionOf(name).findOne(and(filterOf(where)), {
              sort: NEWEST_FIRST,
              projection: WITHOUT_ID,
              session,
            }),
          ),
        ),

      findAll: (name, where, limit, order) =>
        run(async () => {
          const collection = collectionOf(name);
          assertLimit(limit);
          assertOrder(order);
          const direction = order?.direction === "asc" ? 1 : -1;
          const sort: Sort = order
            ? order.by === "id"
              ? { _id: direction }
              : { [order.by]: direction, _id: direction }
            : NEWEST_FIRST;
          const cursor = collection.find(and(filterOf(where)), { sort, projection: WITHOUT_ID, session });
          if (limit !== undefined) cursor.limit(limit);
          return plainAll(await cursor.toArray());
        }),

      list: (name, where, page) =>
        run(async () => {
          const collection = collectionOf(name);
          assertPage(page);
          const filter = filterOf(where);
          const cursorId = page.startingAfter ?? page.endingBefore;
          const newerFirst = page.endingBefore === undefined;
          let query = and(filter);
          if (cursorId !== undefined) {
            const cursorDoc = await collection.findOne(and({ _id: cursorId }, filter), {
              projection: { created_at: 1 },
              session,
            });
            const createdAt = cursorDoc?.created_at;
            if (typeof createdAt !== "string") return { data: [], hasMore: false };
            // Strictly beyond the cursor in (created_at, _id) order, the listing order. The separate
            // inclusive bound on created_at gives the planner an index range to scan.
            const [beyond, upTo] = newerFirst ? ["$lt", "$lte"] : ["$gt", "$gte"];
            query = and(
              filter,
              { created_at: { [upTo]: createdAt } },
              { $or: [{ created_at: { [beyond]: createdAt } }, { _id: { [beyond]: cursorId } }] },
            );
          }
          const docs = plainAll(
            await collection
              .find(query, {
                sort: newerFirst ? NEWEST_FIRST : OLDEST_FIRST,
                limit: page.limit + 1,
                projection: WITHOUT_ID,
                session,
              })
              .toArray(),
          );
          const hasMore = docs.length > page.limit;
          if (hasMore) docs.pop();
          if (!newerFirst) docs.reverse();
          return { data: docs, hasMore };
        }),

      update: (name, id, changes, expect) =>
        run(async () => {
          const collection = collectionOf(name);
          const { set, inc } = normalizeChanges(changes);
          const filter = and({ _id: id }, filterOf(expect));
          // The driver rejects an update without operators; with nothing to change this is a conditional read.
          if (set.length === 0 && inc.length === 0) {
            return plain(await collection.findOne(filter, { projection: WITHOUT_ID, session }));
          }
          const update: UpdateFilter<MongoDoc> = {};
          if (set.length > 0) update.$set = Object.fromEntries(set);
          if (inc.length > 0) update.$inc = Object.fromEntries(inc);
          try {
            return plain(
              await collection.findOneAndUpdate(filter, update, {
                returnDocument: "after",
                projection: WITHOUT_ID,
                session,
              }),
            );
          } catch (error) {
            throw duplicateKey(name, error);
          }
        }),

      delete: (name, id, expect) =>
        run(async () => {
          const result = await collectionOf(name).deleteOne(and({ _id: id }, filterOf(expect)), { session });
          return result.deletedCount === 1;
        }),

      deleteMany: (name, where) =>
        run(async () => (await collectionOf(name).deleteMany(and(filterOf(where)), { session })).deletedCount),
    };
  }

  const guard = txGuard(options.guard ?? true);

  const store: Store<Loose> = {
    kind: "mongodb",
    ...ops(undefined, async (op) => {
      guard.assertOutside();
      return op();
    }),

    async transaction(fn) {
      guard.assertOutside();
      const session = client.startSession();
      try {
        return await session.withTransaction(async () => {
          // A fresh tx per attempt: withTransaction reruns this callback on transient errors.
          const scope: TxScope = { active: true };
          // One session cannot run operations concurrently, so tx serializes them even if fn does not.
          const lock = new Mutex();
          const tx = ops(session, async (op) => {
            assertActive(scope);
            await lock.acquire();
            try {
              assertActive(scope);
              return await op();
            } finally {
              lock.release();
            }
          });
          try {
            return await guard.run(scope, () => fn(tx));
          } finally {
            scope.active = false;
          }
        }, TRANSACTION_OPTIONS);
      } finally {
        await session.endSession();
      }
    },

    // Old document versions live inside WiredTiger until it reuses the space; callers overwrite erased
    // data with random bytes first (see the port), so there is nothing more to do from here.
    async scrub() {},

    async close() {
      guard.assertOutside();
      await client.close();
    },
  };
  // The operations only depend on each collection's documents being BaseDocs, which Docs guarantees.
  return store as unknown as Store<Docs>;
}
