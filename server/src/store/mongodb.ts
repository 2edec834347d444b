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
  MongoError,
  MongoServerError,
  type ServerHeartbeatFailedEvent,
  type ServerHeartbeatSucceededEvent,
  type Sort,
  type TransactionOptions,
  type UpdateFilter,
  WriteConcern,
} from "mongodb";
import { isRecord } from "../guards.ts";
import {
  assertCollection,
  assertDoc,
  assertLimit,
  assertOrder,
  assertPage,
  collectionNames,
  Mutex,
  nonNumericIncrement,
  normalizeChanges,
  storedDoc,
  TxRun,
  terms,
  txGuard,
} from "./common.ts";
import {
  type BaseDoc,
  type CollectionSpec,
  type CollectionSpecs,
  DuplicateKeyError,
  type IndexCondition,
  type IndexSpec,
  refuseUnlisted,
  type Store,
  type StoreOps,
  type StoreReadiness,
  type TxOps,
  UnknownCursorError,
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
 * How long opening the store waits for a writable primary before it gives up and says why there is
 * none. Short, so that `npm start` against a set that is not ready answers within seconds with the
 * likely cause instead of the driver's 30-second "Server selection timed out". A URI that sets
 * serverSelectionTimeoutMS is taken at its word, shorter or longer.
 */
export const START_TIMEOUT_MS = 8_000;

/** The start-up wait for `uri`: its own serverSelectionTimeoutMS when it sets one, else START_TIMEOUT_MS. */
export function startTimeoutFor(uri: string): number {
  const given = /[?&]serverSelectionTimeoutMS=(\d+)/i.exec(uri)?.[1];
  // A little longer than the driver's own timeout, so that its error (with its reason) comes first.
  return given === undefined ? START_TIMEOUT_MS : Number(given) + 1_000;
}

/**
 * The bound on waiting for a majority to acknowledge a write. Without it, a set that has lost its
 * majority (but whose primary has not stepped down yet) keeps every write waiting for ever, while
 * reads still answer. The driver's own `timeoutMS` has no effect in mongodb 7.x (its typings say so),
 * so the bound is the write concern's wtimeout outside transactions and maxCommitTimeMS on commits.
 */
export const WRITE_TIMEOUT_MS = 10_000;

/**
 * Majority reads and writes: a committed transaction survives a primary failover, and its reads come
 * from majority-committed data. Conditional updates stay safe either way, because concurrent
 * transactions writing one document fail with a write conflict and are retried by withTransaction.
 * The commit is bounded by maxCommitTimeMS, which also bounds the server's wait for the majority: the
 * driver retries a commit whose write concern timed out (for up to two minutes), but not one that ran
 * out of its maxTimeMS. So the wtimeout (which the driver sets to 10 s on every commit unless given
 * one) is set longer, for maxTimeMS to end the wait first.
 */
const TRANSACTION_OPTIONS: TransactionOptions = {
  readConcern: { level: "majority" },
  writeConcern: new WriteConcern("majority", 2 * WRITE_TIMEOUT_MS),
  readPreference: "primary",
  maxCommitTimeMS: WRITE_TIMEOUT_MS,
};

/** Where the readiness probe writes (a name no port collection can have: those are identifiers, without dots). */
const READINESS_COLLECTION = "store.readiness";

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
    // Two range terms on one field (a `{ $gte, $lt }` range) go into one operator object.
    else {
      const prior: unknown = filter[key];
      filter[key] = { ...(isRecord(prior) ? prior : {}), [`$${term.op}`]: term.value };
    }
  }
  return filter;
}

function and(...filters: Document[]): Filter<MongoDoc> {
  const nonEmpty = filters.filter((f) => Object.keys(f).length > 0);
  if (nonEmpty.length === 0) return {};
  const [only] = nonEmpty;
  return nonEmpty.length === 1 && only !== undefined ? only : { $and: nonEmpty };
}

/** MongoDB's code for an update operator applied to a value of the wrong type ($inc on null or a string). */
const TYPE_MISMATCH = 14;

/**
 * The port's errors for what MongoDB reports in its own terms: a duplicate key (code 11000) becomes a
 * DuplicateKeyError, an increment of a non-number (TypeMismatch) the TypeError the SQLite adapter
 * throws for it (common.ts, incrementBase). Left as is when the driver may still retry the whole
 * transaction.
 */
function portError(collection: string, updatedId: string | undefined, error: unknown): unknown {
  if (!(error instanceof MongoServerError)) return error;
  if (error.hasErrorLabel("TransientTransactionError")) return error;
  if (error.code === TYPE_MISMATCH && updatedId !== undefined) {
    return nonNumericIncrement(updatedId, "a field", `a value of another type (${error.message})`);
  }
  if (error.code !== 11000) return error;
  // Servers since 4.4 report the clashing index's key pattern and values.
  const key: unknown = error.keyPattern ?? error.keyValue;
  const fields = key !== null && typeof key === "object" ? Object.keys(key).map((k) => (k === "_id" ? "id" : k)) : [];
  return new DuplicateKeyError(collection, fields.length > 0 ? fields.join(",") : "unknown");
}

function isTransient(error: unknown): boolean {
  return error instanceof MongoError && error.hasErrorLabel("TransientTransactionError");
}

/** Results are read with `_id` projected away, leaving the document as inserted. */
function plain(doc: Document | null): BaseDoc | null {
  return doc === null ? null : storedDoc(doc);
}

function plainAll(docs: Document[]): BaseDoc[] {
  return docs.map(storedDoc);
}

// ---------------------------------------------------------------------------------------------------
// Indexes

/** One index as this adapter creates it. */
export interface IndexDefinition {
  name: string;
  key: Record<string, 1 | -1>;
  unique: boolean;
  /** The documents it covers (IndexSpec.where), as a partialFilterExpression; all when absent. */
  partial?: Record<string, IndexCondition>;
}

/** Names of the indexes this adapter creates start with this; see indexName. */
const INDEX_PREFIX = "store:";

/**
 * An index's name spells out its whole definition (`store:unique:email_1`,
 * `store:index:status_1,next_attempt_at_1,_id_1`), so a changed spec (other fields, or `unique` added
 * or removed) asks for an index of a new name, which createIndexes makes, instead of clashing with the
 * old one under the same name (which stopped the server from starting).
 */
export function indexName(key: Record<string, 1 | -1>, unique: boolean): string {
  const fields = Object.entries(key).map(([field, direction]) => `${field}_${direction}`);
  return `${INDEX_PREFIX}${unique ? "unique" : "index"}:${fields.join(",")}`;
}

/** The name the driver gives an index created without one (what earlier versions of this adapter made). */
function driverDefaultName(key: Record<string, 1 | -1>): string {
  return Object.entries(key)
    .map(([field, direction]) => `${field}_${direction}`)
    .join("_");
}

/** The listing order's index: every list() is an equality on livemode, then created_at and _id descending. */
const LIST_KEY: Record<string, 1 | -1> = { livemode: 1, created_at: -1, _id: -1 };

/**
 * The indexes one collection needs: the listing index, then the spec's. A non-unique index gets `_id`
 * appended: findAll sorts by `{field, _id}` (port.ts, Order), and only an index ending in both serves
 * that sort, so a queue read (the dispatcher's due deliveries, the outbox's pending events) walks the
 * index instead of sorting the whole backlog in memory. A unique index keeps exactly its fields, or it
 * would no longer refuse duplicates.
 */
export function indexesFor(indexes: IndexSpec[], options: { unlisted?: boolean } = {}): IndexDefinition[] {
  // No listing index for a collection nothing lists (port.ts, CollectionSpec); ensureIndexes drops one
  // an earlier version made, as it drops every index of this adapter's that is no longer wanted.
  const keys: { key: Record<string, 1 | -1>; unique: boolean; partial?: Record<string, IndexCondition> }[] =
    options.unlisted ? [] : [{ key: LIST_KEY, unique: false }];
  for (const index of indexes) {
    const key: Record<string, 1 | -1> = {};
    for (const field of index.fields) key[fieldKey(field)] = 1;
    const unique = index.unique === true;
    if (!unique && !("_id" in key)) key._id = 1;
    // The collection's own _id index already covers an index on the id alone.
    if (Object.keys(key).length === 1 && "_id" in key) continue;
    // A null condition is left out (IndexCondition): MongoDB's partial filters cannot select null.
    const conditions = Object.entries(index.where ?? {}).filter(([, v]) => v !== null);
    const partial =
      conditions.length > 0 ? Object.fromEntries(conditions.map(([f, v]) => [fieldKey(f), v])) : undefined;
    keys.push(partial ? { key, unique, partial } : { key, unique });
  }
  const byName = new Map<string, IndexDefinition>();
  for (const definition of keys) {
    // A partial index's name says what it covers, so making an index partial asks for a new name too.
    const covers = definition.partial
      ? `:where:${Object.entries(definition.partial)
          .map(([f, v]) => (v === null || typeof v === "boolean" ? `${f}=${v}` : `${f}>=${v.$gte}`))
          .join(",")}`
      : "";
    const name = indexName(definition.key, definition.unique) + covers;
    byName.set(name, { name, ...definition });
  }
  return [...byName.values()];
}

function sameKey(a: unknown, b: Record<string, 1 | -1>): boolean {
  if (a === null || typeof a !== "object") return false;
  const left = Object.entries(a);
  const right = Object.entries(b);
  return (
    left.length === right.length &&
    left.every(([field, direction], i) => {
      const other = right[i];
      return other !== undefined && other[0] === field && Number(direction) === other[1];
    })
  );
}

const NAMESPACE_NOT_FOUND = 26;
const INDEX_NOT_FOUND = 27;

/**
 * Brings one collection's indexes to `wanted` with one createIndexes call. Indexes of this adapter's
 * that are no longer wanted go (an index whose `unique` was dropped from the spec would otherwise
 * keep refusing duplicates), and so do the ones earlier versions made under the driver's default
 * names; an index with a wanted key under another name goes first, as MongoDB refuses a second index
 * on the same key. Other indexes (an operator's own) are left alone.
 */
async function ensureIndexes(
  collection: Collection<MongoDoc>,
  specs: IndexSpec[],
  wanted: IndexDefinition[],
): Promise<void> {
  let existing: Document[] = [];
  try {
    existing = await collection.listIndexes().toArray();
  } catch (error) {
    if (!(error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND)) throw error;
  }
  const wantedNames = new Set(wanted.map((index) => index.name));
  const legacyNames = new Set([
    driverDefaultName(LIST_KEY),
    ...specs.map((spec) => driverDefaultName(Object.fromEntries(spec.fields.map((f) => [fieldKey(f), 1 as const])))),
  ]);
  const unwanted = existing.filter((index) => index.name !== "_id_" && !wantedNames.has(String(index.name)));
  const clashing = unwanted.filter((index) => wanted.some((w) => sameKey(index.key, w.key)));
  const stale = unwanted.filter(
    (index) =>
      !clashing.includes(index) && (String(index.name).startsWith(INDEX_PREFIX) || legacyNames.has(String(index.name))),
  );
  const drop = async (index: Document) => {
    try {
      await collection.dropIndex(String(index.name));
    } catch (error) {
      // Another instance starting at the same time dropped it first.
      if (!(error instanceof MongoServerError && error.code === INDEX_NOT_FOUND)) throw error;
    }
  };
  await Promise.all(clashing.map(drop));
  await collection.createIndexes(
    wanted.map((index) => ({
      key: index.key,
      name: index.name,
      ...(index.unique ? { unique: true } : {}),
      ...(index.partial ? { partialFilterExpression: index.partial } : {}),
    })),
  );
  await Promise.all(stale.map(drop));
}

// ---------------------------------------------------------------------------------------------------
// Start-up: connecting, and saying why not

/** The last thing one server's monitor learned: its hello reply, or why it could not get one. */
export interface Heartbeat {
  reply?: Document;
  failure?: Error;
}

/** A network error's code (ECONNREFUSED, ENOTFOUND, ...), looked for along the cause chain. */
function networkCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = "code" in e ? e.code : undefined;
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
    const named = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNRESET|ETIMEDOUT)\b/.exec(
      e.message,
    );
    if (named?.[1]) return named[1];
    if (e.name === "MongoNetworkTimeoutError") return "ETIMEDOUT";
  }
  return undefined;
}

const CODE_WORDS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name does not resolve",
  EHOSTUNREACH: "no route to the host",
  ENETUNREACH: "no route to the host",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "no answer in time",
};

/** Why one address could not be used, in words, with the code kept for searching. */
function failureWords(failure: Error): string {
  const code = networkCode(failure);
  if (code === undefined) return failure.message;
  return `${CODE_WORDS[code] ?? "network error"}, ${code}`;
}

function isStandalone(reply: Document): boolean {
  return reply.setName === undefined && reply.isreplicaset !== true && reply.msg !== "isdbgrid";
}

function role(reply: Document): string {
  if (reply.isWritablePrimary === true || reply.ismaster === true) return "primary";
  if (reply.secondary === true) return "secondary";
  if (reply.arbiterOnly === true) return "arbiter";
  return "neither primary nor secondary";
}

const STANDALONE =
  "is a standalone server, and money changes need transactions, which need a replica set: restart mongod with --replSet rs0 and run rs.initiate() once (a single member is enough)";

/**
 * The one-line reason opening the store failed, naming the likely cause from what the driver's
 * monitors saw of each server (its hello reply, or why there was none): a standalone server, a
 * member whose set was never initiated, another set's name, members whose configured host names
 * (rs.conf()) this machine cannot reach, a set without a primary, or no server answering at all.
 * Never includes the URI, which may hold a password: only host names, ports and set names.
 */
export function startupHint(options: {
  seeds: string[];
  replicaSet: string | undefined;
  seen: ReadonlyMap<string, Heartbeat>;
  error: unknown;
  waitedMs: number;
}): string {
  const { seeds, replicaSet, seen, error } = options;
  const replies = [...seen].flatMap(([address, h]) => (h.reply ? [{ address, reply: h.reply }] : []));
  const fallback = error instanceof Error ? error.message : String(error);

  const standalone = replies.find((r) => isStandalone(r.reply));
  if (standalone) return `${standalone.address} ${STANDALONE}`;

  const ghost = replies.find((r) => r.reply.setName === undefined && r.reply.isreplicaset === true);
  if (ghost) {
    return `${ghost.address} runs as a replica set member, but the set was never initiated: run rs.initiate() once in mongosh there`;
  }

  const otherSet =
    replicaSet === undefined
      ? undefined
      : replies.find((r) => typeof r.reply.setName === "string" && r.reply.setName !== replicaSet);
  if (otherSet) {
    return `${otherSet.address} belongs to replica set "${otherSet.reply.setName}", but MONGODB_URI asks for replicaSet=${replicaSet}`;
  }

  const members = replies.find((r) => typeof r.reply.setName === "string");
  if (members) {
    const setName = String(members.reply.setName);
    const listed = [
      ...new Set(
        [members.reply.hosts, members.reply.passives, members.reply.arbiters].flatMap((list) =>
          Array.isArray(list) ? list.map(String) : [],
        ),
      ),
    ];
    const unreachable = listed.filter((address) => seen.get(address)?.reply === undefined);
    if (unreachable.length > 0) {
      const why = unreachable
        .map((address) => {
          const failure = seen.get(address)?.failure;
          return `${address}: ${failure ? failureWords(failure) : "no answer yet"}`;
        })
        .join("; ");
      return `replica set "${setName}" names its members ${listed.join(", ")} in its configuration (rs.conf()), and this machine cannot reach them by those names (${why}): reconfigure the set with host names this machine resolves (rs.reconfig), or, to use a single member as it is, add directConnection=true to MONGODB_URI`;
    }
    const primary = replies.find((r) => role(r.reply) === "primary");
    if (!primary) {
      const roles = replies.map((r) => `${r.address} is ${role(r.reply)}`).join(", ");
      return `replica set "${setName}" has no primary (${roles}): an election may be under way, or too few members are up to elect one`;
    }
    // A primary answered: the failure is not about the topology (authentication, TLS, ...).
    return fallback;
  }

  const failures = seeds.flatMap((address) => {
    const failure = seen.get(address)?.failure;
    return failure ? [{ address, failure }] : [];
  });
  if (failures.length > 0) {
    const words = failures.map(({ address, failure }) => `${address} (${failureWords(failure)})`).join(", ");
    const code = networkCode(failures[0]?.failure);
    const advice =
      code === "ENOTFOUND" || code === "EAI_AGAIN"
        ? "correct the host in MONGODB_URI"
        : code === "ETIMEDOUT" || code === "EHOSTUNREACH" || code === "ENETUNREACH"
          ? "check the address in MONGODB_URI and any firewall between here and there"
          : code === "ECONNREFUSED"
            ? "start mongod there, or correct the host and port in MONGODB_URI"
            : "check MONGODB_URI's host, port and TLS settings";
    return `cannot connect to ${words}: ${advice}`;
  }
  if (replies.length === 0) {
    const at = seeds.length > 0 ? ` at ${seeds.join(", ")}` : "";
    return `no MongoDB server answered${at} within ${Math.round(options.waitedMs / 1000)} s (${fallback})`;
  }
  return fallback;
}

class StartTimeout extends Error {
  override name = "StartTimeout";
}

/**
 * Connects within startTimeoutFor(uri) to a primary that can run transactions, or throws an Error whose
 * message is the one-line hint (startupHint): the server prints it as `MONGODB_URI: cannot use
 * MongoDB: <hint>`.
 */
async function connect(uri: string): Promise<MongoClient> {
  const client = new MongoClient(uri, {
    ignoreUndefined: true,
    writeConcern: { w: "majority", wtimeoutMS: WRITE_TIMEOUT_MS },
  });
  const seen = new Map<string, Heartbeat>();
  const succeeded = (event: ServerHeartbeatSucceededEvent) => seen.set(event.connectionId, { reply: event.reply });
  const failed = (event: ServerHeartbeatFailedEvent) => seen.set(event.connectionId, { failure: event.failure });
  client.on("serverHeartbeatSucceeded", succeeded);
  client.on("serverHeartbeatFailed", failed);
  const stopListening = () => {
    client.off("serverHeartbeatSucceeded", succeeded);
    client.off("serverHeartbeatFailed", failed);
  };
  let timer: NodeJS.Timeout | undefined;
  const started = Date.now();
  try {
    const connecting = client.connect();
    // Whatever the race below decides, a late rejection of connect() (after close) is not a crash.
    connecting.catch(() => {});
    await Promise.race([
      connecting,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new StartTimeout("start-up timed out")), startTimeoutFor(uri));
      }),
    ]);
    // Fail at start-up, not at the first payment: transactions need a replica set or a sharded cluster,
    // and writes a primary.
    const hello = await client.db("admin").command({ hello: 1 });
    const address = `${client.options.hosts[0] ?? "the server"}`;
    if (isStandalone(hello)) throw new Error(`${address} ${STANDALONE}`);
    if (hello.msg !== "isdbgrid" && hello.isWritablePrimary !== true) {
      throw new Error(
        `MONGODB_URI connects directly to ${address}, which is ${role(hello)} in replica set "${hello.setName}", and only the primary takes writes: name the set (replicaSet=${hello.setName}) instead of directConnection=true`,
      );
    }
    stopListening();
    return client;
  } catch (error) {
    stopListening();
    await client.close().catch(() => {});
    if (error instanceof Error && !(error instanceof StartTimeout) && error.name !== "MongoServerSelectionError") {
      // Not about reaching a primary (the checks above, authentication, a malformed URI): said as it is.
      throw error;
    }
    const hint = startupHint({
      seeds: client.options.hosts.map(String),
      replicaSet: client.options.replicaSet,
      seen,
      error,
      waitedMs: Date.now() - started,
    });
    throw new Error(hint, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------------
// The store

export async function openMongoStore<Docs extends Record<string, BaseDoc>>(options: {
  uri: string;
  dbName?: string;
  collections: CollectionSpecs<Docs>;
  /**
   * Refuse the outer store inside its own transaction (common.ts, txGuard). Default on; the server
   * turns it off in production, where it costs every promise a hook.
   */
  guard?: boolean;
}): Promise<Store<Docs> & StoreReadiness> {
  const names = collectionNames(options.collections);
  const unlisted = new Set(
    Object.entries<CollectionSpec>(options.collections)
      .filter(([, spec]) => spec.unlisted)
      .map(([name]) => name),
  );
  const client = await connect(options.uri);
  const db = client.db(options.dbName);
  try {
    // One createIndexes call per collection, all collections at once.
    await Promise.all(
      Object.entries<CollectionSpec>(options.collections).map(([name, spec]) =>
        ensureIndexes(db.collection<MongoDoc>(name), spec.indexes, indexesFor(spec.indexes, spec)),
      ),
    );
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
            throw portError(name, undefined, error);
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
          // Served by an index without an in-memory sort when one ends in the order's field and _id
          // (indexesFor appends _id to every non-unique index).
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
          if (unlisted.has(name)) refuseUnlisted(name);
          const collection = collectionOf(name);
          assertPage(page);
          const filter = filterOf(where);
          const cursorId = page.startingAfter ?? page.endingBefore;
          const newerFirst = page.endingBefore === undefined;
          let query = and(filter);
          if (cursorId !== undefined) {
            // Looked up in the environment only, whatever the filter (Page in port.ts).
            const environment = where.livemode === undefined ? {} : filterOf({ livemode: where.livemode });
            const cursorDoc = await collection.findOne(and({ _id: cursorId }, environment), {
              projection: { created_at: 1 },
              session,
            });
            const createdAt = cursorDoc?.created_at;
            if (typeof createdAt !== "string") {
              throw new UnknownCursorError(
                name,
                page.startingAfter === undefined ? "endingBefore" : "startingAfter",
                cursorId,
              );
            }
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
            throw portError(name, id, error);
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

  const store: Store<Loose> & StoreReadiness = {
    kind: "mongodb",
    ...ops(undefined, async (op) => {
      guard.assertOutside();
      return op();
    }),

    async transaction(fn) {
      guard.assertOutside();
      const session = client.startSession();
      // The run that committed is the last one: withTransaction runs the callback again on transient errors.
      let last: TxRun | undefined;
      try {
        const result = await session.withTransaction(async () => {
          const run = new TxRun();
          last = run;
          // One session cannot run operations concurrently, so tx serializes them even if fn does not.
          const lock = new Mutex();
          const tx: TxOps<Loose> = {
            ...ops(session, (op) =>
              run.track(async () => {
                await lock.acquire();
                try {
                  // Refused here too: an earlier operation may have failed while this one waited.
                  run.check();
                  return await op();
                } finally {
                  lock.release();
                }
              }),
            ),
            afterCommit: (callback) => run.afterCommit(callback),
          };
          return await guard.run(run, () => run.settle(() => fn(tx), isTransient));
        }, TRANSACTION_OPTIONS);
        last?.committed();
        return result;
      } finally {
        await session.endSession();
      }
    },

    async ready(timeoutMs) {
      guard.assertOutside();
      let timer: NodeJS.Timeout | undefined;
      // A majority-acknowledged write, bounded on the server (wtimeout, maxTimeMS) and here (selecting
      // a primary is bounded by neither).
      const write = db
        .collection<{ _id: string; at: Date }>(READINESS_COLLECTION)
        .updateOne(
          { _id: "probe" },
          { $set: { at: new Date() } },
          { upsert: true, writeConcern: { w: "majority", wtimeoutMS: timeoutMs }, maxTimeMS: timeoutMs },
        );
      write.catch(() => {});
      try {
        await Promise.race([
          write,
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`MongoDB did not acknowledge a majority write within ${timeoutMs} ms`)),
              timeoutMs,
            );
          }),
        ]);
      } finally {
        clearTimeout(timer);
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
  // cast: the operations only depend on each collection's documents being BaseDocs, which Docs guarantees.
  return store as unknown as Store<Docs> & StoreReadiness;
}
