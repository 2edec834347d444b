// The MongoDB adapter's behaviour that needs no MongoDB server: the start-up hint for each way a
// deployment can be unusable, the indexes it asks for, the bounds it puts on writes, readiness, and how
// a transaction ends. The driver (mongodb 7.9) is real; the server is a stand-in that answers as the
// test says (mongo-wire.fixture.ts), so these tests show what the adapter sends and how it reads the
// answers, not MongoDB's semantics: those are the conformance suite's, on a real replica set.

import type { Document } from "mongodb";
import { afterEach, describe, expect, it } from "vitest";
import { TEST_COLLECTIONS, type TestDocs } from "./conformance.ts";
import { type Answer, closedPort, startWireFake, type WireFake } from "./mongo-wire.fixture.ts";
import {
  indexesFor,
  indexName,
  openMongoStore,
  START_TIMEOUT_MS,
  startTimeoutFor,
  startupHint,
  WRITE_TIMEOUT_MS,
} from "./mongodb.ts";
import { DuplicateKeyError } from "./port.ts";

const fakes: WireFake[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** A healthy primary of replica set rs0, unless `hello` says otherwise. */
const PRIMARY = (address: string) => ({ isWritablePrimary: true, setName: "rs0", hosts: [address], me: address });

/** What a server answers when the test has nothing to say: empty cursors, nothing matched, ok. */
function ordinary(command: Document, name: string): Answer {
  const ns = `db.${String(command[name])}`;
  if (name === "find" || name === "listIndexes" || name === "aggregate") {
    return { ok: 1, cursor: { id: 0n, ns, firstBatch: [] } };
  }
  if (name === "findAndModify") return { ok: 1, value: null, lastErrorObject: { n: 0, updatedExisting: false } };
  if (name === "insert" || name === "update" || name === "delete") {
    return { ok: 1, n: Array.isArray(command.documents) ? command.documents.length : 1 };
  }
  return { ok: 1 };
}

async function fake(
  hello: Document | ((address: string) => Document),
  answer: (command: Document, name: string) => Answer | undefined = () => undefined,
): Promise<WireFake> {
  const started = await startWireFake({ hello, answer: (c, n) => answer(c, n) ?? ordinary(c, n) });
  fakes.push(started);
  return started;
}

/** Opening the store at `query` on the fake, expected to fail: its message. */
async function openFails(server: WireFake, query: string): Promise<string> {
  const opening = openMongoStore({ uri: `mongodb://${server.address}/${query}`, collections: TEST_COLLECTIONS });
  const error = await opening.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error("the store opened");
  return error.message;
}

function open(server: WireFake) {
  return openMongoStore<TestDocs>({
    uri: `mongodb://${server.address}/?replicaSet=rs0&serverSelectionTimeoutMS=2000`,
    dbName: "db",
    collections: TEST_COLLECTIONS,
  });
}

const name = (command: Document) => Object.keys(command)[0];

describe("opening the store names the likely cause in one line", () => {
  // serverSelectionTimeoutMS in the URI keeps each case short; without it the start waits START_TIMEOUT_MS.
  const quick = "serverSelectionTimeoutMS=300";

  it("nothing listening at the address", async () => {
    const port = await closedPort();
    const opening = openMongoStore({
      uri: `mongodb://operator:s3cret@127.0.0.1:${port}/?replicaSet=rs0&${quick}`,
      collections: TEST_COLLECTIONS,
    });
    const message = await opening.then(
      () => "opened",
      (e: Error) => e.message,
    );
    expect(message).toBe(
      `cannot connect to 127.0.0.1:${port} (connection refused, ECONNREFUSED): start mongod there, or correct the host and port in MONGODB_URI`,
    );
    expect(message).not.toContain("s3cret");
  });

  it("a standalone server, with or without a replica set name in the URI", async () => {
    const server = await fake({ isWritablePrimary: true });
    const standalone = `${server.address} is a standalone server, and money changes need transactions, which need a replica set: restart mongod with --replSet rs0 and run rs.initiate() once (a single member is enough)`;
    expect(await openFails(server, `?replicaSet=rs0&${quick}`)).toBe(standalone);
    expect(await openFails(server, `?${quick}`)).toBe(standalone);
  });

  it("a member started with --replSet whose set was never initiated", async () => {
    const server = await fake({ isWritablePrimary: false, secondary: false, isreplicaset: true });
    expect(await openFails(server, `?${quick}`)).toBe(
      `${server.address} runs as a replica set member, but the set was never initiated: run rs.initiate() once in mongosh there`,
    );
  });

  it("a set of another name", async () => {
    const server = await fake((address) => ({ ...PRIMARY(address), setName: "prod" }));
    expect(await openFails(server, `?replicaSet=rs0&${quick}`)).toBe(
      `${server.address} belongs to replica set "prod", but MONGODB_URI asks for replicaSet=rs0`,
    );
  });

  it("a set whose configured member names cannot be reached from here (the rs.initiate() host mistake)", async () => {
    // The member answers at one address and calls itself another, as a container initiated with its
    // internal host name does; here that name is a loopback port nothing listens on.
    const configured = `127.0.0.1:${await closedPort()}`;
    const server = await fake({ isWritablePrimary: true, setName: "rs0", hosts: [configured], me: configured });
    for (const query of [`?replicaSet=rs0&${quick}`, `?${quick}`]) {
      expect(await openFails(server, query)).toBe(
        `replica set "rs0" names its members ${configured} in its configuration (rs.conf()), and this machine cannot reach them by those names (${configured}: connection refused, ECONNREFUSED): reconfigure the set with host names this machine resolves (rs.reconfig), or, to use a single member as it is, add directConnection=true to MONGODB_URI`,
      );
    }
  });

  it("a set without a primary", async () => {
    const server = await fake((address) => ({ ...PRIMARY(address), isWritablePrimary: false, secondary: true }));
    expect(await openFails(server, `?replicaSet=rs0&${quick}`)).toBe(
      `replica set "rs0" has no primary (${server.address} is secondary): an election may be under way, or too few members are up to elect one`,
    );
  });

  it("a direct connection to a secondary", async () => {
    const server = await fake((address) => ({ ...PRIMARY(address), isWritablePrimary: false, secondary: true }));
    expect(await openFails(server, `?directConnection=true&${quick}`)).toBe(
      `MONGODB_URI connects directly to ${server.address}, which is secondary in replica set "rs0", and only the primary takes writes: name the set (replicaSet=rs0) instead of directConnection=true`,
    );
  });

  it("waits START_TIMEOUT_MS, or what the URI's serverSelectionTimeoutMS says, shorter or longer", () => {
    expect(startTimeoutFor("mongodb://127.0.0.1:27017/?replicaSet=rs0")).toBe(START_TIMEOUT_MS);
    expect(startTimeoutFor("mongodb://h/?replicaSet=rs0&serverSelectionTimeoutMS=500")).toBe(1_500);
    expect(startTimeoutFor("mongodb://h/?serverselectiontimeoutms=30000&tls=true")).toBe(31_000);
  });

  it("host names that do not resolve, and servers that do not answer, in words (with the code)", () => {
    const failure = (message: string, code: string) => Object.assign(new Error(message), { code });
    const notFound = failure("getaddrinfo ENOTFOUND mongo", "ENOTFOUND");
    const members = startupHint({
      seeds: ["127.0.0.1:27017"],
      replicaSet: "rs0",
      seen: new Map([
        ["127.0.0.1:27017", { reply: { isWritablePrimary: true, setName: "rs0", hosts: ["mongo:27017"] } }],
        ["mongo:27017", { failure: notFound }],
      ]),
      error: new Error("Server selection timed out after 8000 ms"),
      waitedMs: 8000,
    });
    expect(members).toContain(
      "cannot reach them by those names (mongo:27017: the host name does not resolve, ENOTFOUND)",
    );
    const seed = startupHint({
      seeds: ["db.example:27017"],
      replicaSet: undefined,
      seen: new Map([["db.example:27017", { failure: notFound }]]),
      error: new Error("Server selection timed out after 8000 ms"),
      waitedMs: 8000,
    });
    expect(seed).toBe(
      "cannot connect to db.example:27017 (the host name does not resolve, ENOTFOUND): correct the host in MONGODB_URI",
    );
    const silent = startupHint({
      seeds: ["10.0.0.9:27017"],
      replicaSet: undefined,
      seen: new Map(),
      error: new Error("start-up timed out"),
      waitedMs: 8000,
    });
    expect(silent).toBe("no MongoDB server answered at 10.0.0.9:27017 within 8 s (start-up timed out)");
  });
});

describe("indexes", () => {
  it("are named by their definition, with _id appended to the non-unique ones", () => {
    expect(indexesFor([{ fields: ["status", "next_attempt_at"] }, { fields: ["email"], unique: true }])).toEqual([
      {
        name: "store:index:livemode_1,created_at_-1,_id_-1",
        key: { livemode: 1, created_at: -1, _id: -1 },
        unique: false,
      },
      {
        name: "store:index:status_1,next_attempt_at_1,_id_1",
        key: { status: 1, next_attempt_at: 1, _id: 1 },
        unique: false,
      },
      { name: "store:unique:email_1", key: { email: 1 }, unique: true },
    ]);
    // Making an index unique (or no longer unique) asks for an index of another name.
    expect(indexName({ email: 1 }, true)).not.toBe(indexName({ email: 1 }, false));
    // `id` is stored as _id, whose own index already exists.
    expect(indexesFor([{ fields: ["id"] }]).map((index) => index.name)).toEqual([
      "store:index:livemode_1,created_at_-1,_id_-1",
    ]);
  });

  it("leave out the listing index of an unlisted collection, and cover a queue only with `where` (issue 36)", () => {
    const definitions = indexesFor(
      [{ fields: ["delivery_pending", "created_at"], where: { delivery_pending: true } }],
      { unlisted: true },
    );
    expect(definitions).toEqual([
      {
        name: "store:index:delivery_pending_1,created_at_1,_id_1:where:delivery_pending=true",
        key: { delivery_pending: 1, created_at: 1, _id: 1 },
        unique: false,
        partial: { delivery_pending: true },
      },
    ]);
  });

  it("cover the rare end of a number's range with a `where` bound (issue 36: the request log's failures)", () => {
    const definitions = indexesFor([{ fields: ["livemode", "created_at", "id"], where: { status: { $gte: 400 } } }], {
      unlisted: true,
    });
    expect(definitions).toEqual([
      {
        name: "store:index:livemode_1,created_at_1,_id_1:where:status>=400",
        key: { livemode: 1, created_at: 1, _id: 1 },
        unique: false,
        partial: { status: { $gte: 400 } },
      },
    ]);
  });

  it("are created with one createIndexes call per collection", async () => {
    const server = await fake(PRIMARY);
    const store = await open(server);
    await store.close();
    const created = server.received("createIndexes");
    expect(created.map((c) => c.createIndexes).sort()).toEqual(["accounts", "entries"]);
    const accounts = created.find((c) => c.createIndexes === "accounts");
    expect(accounts?.indexes).toEqual(
      indexesFor(TEST_COLLECTIONS.accounts.indexes).map((index) => ({
        key: index.key,
        name: index.name,
        ...(index.unique ? { unique: true } : {}),
      })),
    );
  });

  it("replace the ones an earlier version made under the driver's default names, and leave others alone", async () => {
    // What the previous adapter created on `accounts`, plus an operator's own index.
    const existing = [
      { v: 2, key: { _id: 1 }, name: "_id_" },
      { v: 2, key: { livemode: 1, created_at: -1, _id: -1 }, name: "livemode_1_created_at_-1__id_-1" },
      { v: 2, key: { email: 1 }, name: "email_1", unique: true },
      { v: 2, key: { livemode: 1, status: 1 }, name: "livemode_1_status_1" },
      { v: 2, key: { balance: 1 }, name: "balance_1" },
      { v: 2, key: { owner: 1 }, name: "by_owner" },
      { v: 2, key: { email: 1, _id: 1 }, name: "store:index:email_1,_id_1" },
    ];
    const server = await fake(PRIMARY, (command, commandName) =>
      commandName === "listIndexes" && command.listIndexes === "accounts"
        ? { ok: 1, cursor: { id: 0n, ns: "db.accounts", firstBatch: existing } }
        : undefined,
    );
    const store = await open(server);
    await store.close();
    const onAccounts = server.commands.filter((c) => Object.values(c)[0] === "accounts").map((c) => [name(c), c.index]);
    expect(onAccounts).toEqual([
      ["listIndexes", undefined],
      // Same key as a wanted index under another name: dropped first, or createIndexes would refuse it.
      ["dropIndexes", "livemode_1_created_at_-1__id_-1"],
      ["dropIndexes", "email_1"],
      ["createIndexes", undefined],
      // Made by an earlier version (default names of the spec's fields) or by this one and no longer wanted.
      ["dropIndexes", "livemode_1_status_1"],
      ["dropIndexes", "balance_1"],
      ["dropIndexes", "store:index:email_1,_id_1"],
    ]);
  });
});

describe("bounds on writes", () => {
  it("outside a transaction: majority write concern with a wtimeout", async () => {
    const server = await fake(PRIMARY);
    const store = await open(server);
    await store.insert("entries", { id: "e_1", livemode: false, created_at: "t", account_id: "a", amount: 1 });
    await store.close();
    expect(server.received("insert")[0]?.writeConcern).toEqual({ w: "majority", wtimeout: WRITE_TIMEOUT_MS });
  });

  it("a transaction's commit: majority write concern, bounded by maxTimeMS (which the driver does not retry)", async () => {
    const server = await fake(PRIMARY);
    const store = await open(server);
    await store.transaction(async (tx) => {
      await tx.insert("entries", { id: "e_1", livemode: false, created_at: "t", account_id: "a", amount: 1 });
    });
    await store.close();
    const [commit] = server.received("commitTransaction");
    expect(commit?.maxTimeMS).toBe(WRITE_TIMEOUT_MS);
    // Longer than maxTimeMS, so that the wait for the majority ends by maxTimeMS, not by a wtimeout.
    expect(commit?.writeConcern).toEqual({ w: "majority", wtimeout: 2 * WRITE_TIMEOUT_MS });
  });
});

describe("readiness", () => {
  it("resolves once a majority acknowledged its write, sent with the caller's bound", async () => {
    const server = await fake(PRIMARY);
    const store = await open(server);
    await store.ready(1500);
    await store.close();
    const [probe] = server.received("update");
    expect(probe?.update).toBe("store.readiness");
    expect(probe?.writeConcern).toEqual({ w: "majority", wtimeout: 1500 });
    expect(probe?.maxTimeMS).toBe(1500);
  });

  it("rejects when the write is not acknowledged in time, or comes back with a write concern error", async () => {
    let mode: "hang" | "wtimeout" = "hang";
    const server = await fake(PRIMARY, (_command, commandName) => {
      if (commandName !== "update") return undefined;
      if (mode === "hang") return "hang";
      return {
        ok: 1,
        n: 1,
        writeConcernError: { code: 64, codeName: "WriteConcernFailed", errmsg: "waiting for replication timed out" },
      };
    });
    const store = await open(server);
    await expect(store.ready(200)).rejects.toThrow("MongoDB did not acknowledge a majority write within 200 ms");
    mode = "wtimeout";
    await expect(store.ready(200)).rejects.toThrow(/waiting for replication timed out/);
    await store.close();
  });
});

describe("a transaction's end", () => {
  const entry = (id: string) => ({ id, livemode: false, created_at: "t", account_id: "a", amount: 1 });

  it("sends the operations fn did not await before the commit, inside the transaction", async () => {
    const server = await fake(PRIMARY);
    const store = await open(server);
    await store.transaction(async (tx) => {
      await tx.insert("entries", entry("e_1"));
      // The second waits for the first (one session runs one operation at a time) until after fn returned.
      void tx.insert("entries", entry("e_forgotten_1"));
      void tx.insert("entries", entry("e_forgotten_2"));
    });
    await store.close();
    const sent = server.commands.filter((c) =>
      ["insert", "commitTransaction", "abortTransaction"].includes(name(c) ?? ""),
    );
    expect(sent.map((c) => [name(c), c.documents?.[0]?._id])).toEqual([
      ["insert", "e_1"],
      ["insert", "e_forgotten_1"],
      ["insert", "e_forgotten_2"],
      ["commitTransaction", undefined],
    ]);
    expect(sent.every((c) => c.txnNumber !== undefined && c.autocommit === false)).toBe(true);
  });

  it("after a failed operation, sends nothing more, aborts, and rejects with that failure even if fn caught it", async () => {
    const server = await fake(PRIMARY, (command, commandName) =>
      commandName === "insert" && command.documents?.[0]?._id === "e_taken"
        ? {
            ok: 1,
            n: 0,
            writeErrors: [
              {
                index: 0,
                code: 11000,
                errmsg: 'E11000 duplicate key error collection: db.entries index: _id_ dup key: { _id: "e_taken" }',
                keyPattern: { _id: 1 },
                keyValue: { _id: "e_taken" },
              },
            ],
          }
        : undefined,
    );
    const store = await open(server);
    let refusal: unknown;
    const attempt = store.transaction(async (tx) => {
      await tx.insert("entries", entry("e_taken")).catch(() => {});
      refusal = await tx.insert("entries", entry("e_after")).catch((e: unknown) => e);
      return "carried on";
    });
    await expect(attempt).rejects.toBeInstanceOf(DuplicateKeyError);
    await store.close();
    expect(String(refusal)).toMatch(/an earlier operation in it failed/);
    const sent = server.commands.filter((c) =>
      ["insert", "commitTransaction", "abortTransaction"].includes(name(c) ?? ""),
    );
    expect(sent.map((c) => [name(c), c.documents?.[0]?._id])).toEqual([
      ["insert", "e_taken"],
      ["abortTransaction", undefined],
    ]);
  });

  it("runs afterCommit callbacks once, for the run that committed, when the driver retried a transient failure", async () => {
    let commits = 0;
    const server = await fake(PRIMARY, (_command, commandName) => {
      if (commandName !== "commitTransaction") return undefined;
      commits++;
      return commits === 1
        ? {
            ok: 0,
            code: 112,
            codeName: "WriteConflict",
            errmsg: "write conflict",
            errorLabels: ["TransientTransactionError"],
          }
        : undefined;
    });
    const store = await open(server);
    const events: string[] = [];
    let runs = 0;
    const result = await store.transaction(async (tx) => {
      const run = ++runs;
      await tx.insert("entries", entry(`e_${run}`));
      tx.afterCommit(() => events.push(`committed run ${run}`));
      return run;
    });
    await store.close();
    expect(result).toBe(2);
    expect(events).toEqual(["committed run 2"]);
    expect(server.received("commitTransaction")).toHaveLength(2);
  });

  it("an increment MongoDB refuses (a null or non-numeric field) is the port's TypeError", async () => {
    const server = await fake(PRIMARY, (_command, commandName) =>
      commandName === "findAndModify"
        ? {
            ok: 0,
            code: 14,
            codeName: "TypeMismatch",
            errmsg:
              "Cannot apply $inc to a value of non-numeric type. {_id: \"acc_1\"} has the field 'balance' of non-numeric type null",
          }
        : undefined,
    );
    const store = await open(server);
    await expect(store.update("accounts", "acc_1", { inc: { balance: 1 } })).rejects.toThrow(TypeError);
    await store.close();
  });
});
