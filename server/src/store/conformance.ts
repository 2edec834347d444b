// The behaviour every store adapter must show, as one vitest suite that each adapter's test file runs against
// a fresh store. It uses its own small collections so it does not depend on the domain's records.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type BaseDoc,
  type CollectionSpecs,
  DuplicateKeyError,
  type Page,
  type Store,
  type StoreOps,
  type StoreReadiness,
  UnknownCursorError,
  type Where,
} from "./port.ts";

export interface AccountDoc extends BaseDoc {
  owner: string;
  status: "open" | "frozen" | "closed";
  balance: number;
  /** Unique. */
  email: string;
  nickname: string | null;
  vip: boolean;
  meta: Record<string, string>;
  /** Absent until the account closes: the "missing field" case (nullable too, so conditions may use null). */
  closed_at?: string | null;
  /** A number that may be missing or null: what an increment finds there. */
  limit?: number | null;
}

export interface EntryDoc extends BaseDoc {
  account_id: string;
  amount: number;
}

export type TestDocs = { accounts: AccountDoc; entries: EntryDoc };

export const TEST_COLLECTIONS: CollectionSpecs<TestDocs> = {
  accounts: {
    indexes: [
      { fields: ["email"], unique: true },
      { fields: ["livemode", "status"] },
      { fields: ["balance"] },
      // Most accounts never close: the "missing field" case, indexed sparsely (port.ts, IndexSpec).
      { fields: ["status", "closed_at"], sparse: true },
    ],
    // Kept as integers by SQLite, like created_at (port.ts, CollectionSpec.timestamps): the same answers.
    timestamps: ["closed_at"],
  },
  entries: { indexes: [{ fields: ["account_id"] }] },
};

const T0 = Date.UTC(2024, 0, 1);

/** created_at `n` seconds after a fixed instant, so tests control the listing order. */
function at(n: number): string {
  return new Date(T0 + n * 1000).toISOString();
}

function account(id: string, fields: Partial<AccountDoc> = {}): AccountDoc {
  return {
    id,
    livemode: false,
    created_at: at(0),
    owner: `owner of ${id}`,
    status: "open",
    balance: 0,
    email: `${id}@example.com`,
    nickname: null,
    vip: false,
    meta: { source: "conformance" },
    ...fields,
  };
}

function entry(id: string, fields: Partial<EntryDoc> = {}): EntryDoc {
  return { id, livemode: false, created_at: at(0), account_id: "acc", amount: 0, ...fields };
}

function ids(docs: BaseDoc[]): string[] {
  return docs.map((d) => d.id);
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Generous for MongoDB, where concurrent transactions on one document retry on write conflicts. */
const CONCURRENCY_TIMEOUT = 60_000;

export function describeStoreConformance(name: string, open: () => Promise<Store<TestDocs> & StoreReadiness>): void {
  describe(`store conformance: ${name}`, () => {
    let store: Store<TestDocs> & StoreReadiness;

    beforeAll(async () => {
      store = await open();
    });

    afterAll(async () => {
      await store?.close();
    });

    beforeEach(async () => {
      await store.deleteMany("accounts", {});
      await store.deleteMany("entries", {});
    });

    describe("insert and read", () => {
      it("returns exactly the inserted document from get, and null for an unknown id", async () => {
        const doc = account("acc_1", { nickname: null, vip: true, balance: 1234, meta: { a: "1", b: "2" } });
        await store.insert("accounts", doc);
        expect(await store.get("accounts", "acc_1")).toStrictEqual(doc);
        expect(await store.get("accounts", "acc_missing")).toBeNull();
        expect(await store.get("entries", "acc_1")).toBeNull();
      });

      it("keeps fields absent when they were absent, and undefined fields are not stored", async () => {
        await store.insert("accounts", { ...account("acc_1"), closed_at: undefined });
        const got = await store.get("accounts", "acc_1");
        expect(got).not.toBeNull();
        expect(Object.keys(got ?? {})).not.toContain("closed_at");
        expect(Object.keys(got ?? {})).not.toContain("_id");
      });

      it("hands out copies: mutating a returned or inserted document changes nothing stored", async () => {
        const doc = account("acc_1", { meta: { k: "v" } });
        await store.insert("accounts", doc);
        doc.meta.k = "changed by caller";
        const got = await store.get("accounts", "acc_1");
        if (got === null) throw new Error("inserted document missing");
        got.balance = 999;
        expect(await store.get("accounts", "acc_1")).toStrictEqual(account("acc_1", { meta: { k: "v" } }));
      });

      it("findOne returns the newest match or null; findAll returns every match newest first, up to limit", async () => {
        await store.insert("accounts", account("acc_1", { created_at: at(1) }));
        await store.insert("accounts", account("acc_3", { created_at: at(3) }));
        await store.insert("accounts", account("acc_2", { created_at: at(2), status: "frozen" }));
        expect((await store.findOne("accounts", { status: "open" }))?.id).toBe("acc_3");
        expect(await store.findOne("accounts", { status: "closed" })).toBeNull();
        expect(ids(await store.findAll("accounts", {}))).toEqual(["acc_3", "acc_2", "acc_1"]);
        expect(ids(await store.findAll("accounts", {}, 2))).toEqual(["acc_3", "acc_2"]);
        expect(ids(await store.findAll("accounts", { status: "open" }))).toEqual(["acc_3", "acc_1"]);
        expect(await store.findAll("accounts", { status: "closed" })).toEqual([]);
      });

      it("findAll in a given order: by a field, then id; missing and null first when ascending", async () => {
        await store.insert("accounts", account("acc_1", { created_at: at(1), balance: 300, nickname: "cat" }));
        await store.insert("accounts", account("acc_2", { created_at: at(2), balance: 100 }));
        await store.insert("accounts", account("acc_3", { created_at: at(3), balance: 200, nickname: "ann" }));
        await store.insert("accounts", account("acc_4", { created_at: at(4), balance: 100, nickname: "bob" }));
        expect(ids(await store.findAll("accounts", {}, undefined, { by: "balance", direction: "asc" }))).toEqual([
          "acc_2",
          "acc_4",
          "acc_3",
          "acc_1",
        ]);
        expect(ids(await store.findAll("accounts", {}, 3, { by: "balance", direction: "desc" }))).toEqual([
          "acc_1",
          "acc_3",
          "acc_4",
        ]);
        expect(ids(await store.findAll("accounts", {}, undefined, { by: "nickname", direction: "asc" }))).toEqual([
          "acc_2",
          "acc_3",
          "acc_4",
          "acc_1",
        ]);
        expect(
          ids(await store.findAll("accounts", { balance: { $lte: 200 } }, 2, { by: "created_at", direction: "asc" })),
        ).toEqual(["acc_2", "acc_3"]);
        expect(ids(await store.findAll("accounts", {}, 2, { by: "id", direction: "desc" }))).toEqual([
          "acc_4",
          "acc_3",
        ]);
        const badOrder = (order: unknown) => order as { by: "balance"; direction: "asc" };
        await expect(
          store.findAll("accounts", {}, 1, badOrder({ by: "balance; DROP TABLE accounts", direction: "asc" })),
        ).rejects.toThrow(TypeError);
        await expect(
          store.findAll("accounts", {}, 1, badOrder({ by: "balance", direction: "sideways" })),
        ).rejects.toThrow(TypeError);
      });

      it("keeps collections apart: the same id may exist in two collections", async () => {
        await store.insert("accounts", account("shared"));
        await store.insert("entries", entry("shared", { amount: 5 }));
        expect((await store.get("accounts", "shared"))?.email).toBe("shared@example.com");
        expect((await store.get("entries", "shared"))?.amount).toBe(5);
      });
    });

    describe("conditions", () => {
      beforeEach(async () => {
        await store.insert(
          "accounts",
          account("acc_1", { created_at: at(1), balance: 100, nickname: "ann", vip: true }),
        );
        await store.insert("accounts", account("acc_2", { created_at: at(2), status: "frozen", balance: 200 }));
        await store.insert(
          "accounts",
          account("acc_3", { created_at: at(3), status: "closed", balance: 300, nickname: "cat", closed_at: at(30) }),
        );
        await store.insert("accounts", account("acc_4", { created_at: at(4), balance: 0, nickname: "dan", vip: true }));
      });

      async function match(where: Where<AccountDoc>): Promise<string[]> {
        return ids(await store.findAll("accounts", where));
      }

      it("equality on strings, numbers and several fields at once", async () => {
        expect(await match({ status: "open" })).toEqual(["acc_4", "acc_1"]);
        expect(await match({ balance: 200 })).toEqual(["acc_2"]);
        expect(await match({ status: "open", vip: true, balance: 0 })).toEqual(["acc_4"]);
        expect(await match({ status: "open", balance: 200 })).toEqual([]);
        expect(await match({ id: "acc_2" })).toEqual(["acc_2"]);
        expect(await match({})).toEqual(["acc_4", "acc_3", "acc_2", "acc_1"]);
      });

      it("null matches null and missing fields", async () => {
        expect(await match({ nickname: null })).toEqual(["acc_2"]);
        expect(await match({ closed_at: null })).toEqual(["acc_4", "acc_2", "acc_1"]);
      });

      it("booleans", async () => {
        expect(await match({ vip: true })).toEqual(["acc_4", "acc_1"]);
        expect(await match({ vip: false })).toEqual(["acc_3", "acc_2"]);
        expect(await match({ vip: { $ne: true } })).toEqual(["acc_3", "acc_2"]);
        expect(await match({ vip: { $in: [false] } })).toEqual(["acc_3", "acc_2"]);
      });

      it("$in, including null and the empty list", async () => {
        expect(await match({ status: { $in: ["frozen", "closed"] } })).toEqual(["acc_3", "acc_2"]);
        expect(await match({ id: { $in: ["acc_1", "acc_3", "acc_9"] } })).toEqual(["acc_3", "acc_1"]);
        expect(await match({ nickname: { $in: [null, "ann"] } })).toEqual(["acc_2", "acc_1"]);
        expect(await match({ balance: { $in: [0, 300] } })).toEqual(["acc_4", "acc_3"]);
        expect(await match({ status: { $in: [] } })).toEqual([]);
      });

      it("$ne matches null and missing fields; $ne null means present", async () => {
        expect(await match({ status: { $ne: "open" } })).toEqual(["acc_3", "acc_2"]);
        expect(await match({ nickname: { $ne: "ann" } })).toEqual(["acc_4", "acc_3", "acc_2"]);
        expect(await match({ closed_at: { $ne: at(99) } })).toEqual(["acc_4", "acc_3", "acc_2", "acc_1"]);
        expect(await match({ nickname: { $ne: null } })).toEqual(["acc_4", "acc_3", "acc_1"]);
        expect(await match({ closed_at: { $ne: null } })).toEqual(["acc_3"]);
      });

      it("$lt, $lte, $gt, $gte on numbers", async () => {
        expect(await match({ balance: { $lt: 200 } })).toEqual(["acc_4", "acc_1"]);
        expect(await match({ balance: { $lte: 200 } })).toEqual(["acc_4", "acc_2", "acc_1"]);
        expect(await match({ balance: { $gt: 100 } })).toEqual(["acc_3", "acc_2"]);
        expect(await match({ balance: { $gte: 100 } })).toEqual(["acc_3", "acc_2", "acc_1"]);
        expect(await match({ balance: { $gt: 300 } })).toEqual([]);
        expect(await match({ balance: { $gte: 99.5 }, status: "open" })).toEqual(["acc_1"]);
      });

      it("$lt, $lte, $gt, $gte on strings; range conditions never match a missing field", async () => {
        expect(await match({ created_at: { $lt: at(2) } })).toEqual(["acc_1"]);
        expect(await match({ created_at: { $lte: at(2) } })).toEqual(["acc_2", "acc_1"]);
        expect(await match({ created_at: { $gt: at(2) } })).toEqual(["acc_4", "acc_3"]);
        expect(await match({ created_at: { $gte: at(2) } })).toEqual(["acc_4", "acc_3", "acc_2"]);
        expect(await match({ nickname: { $gte: "b" } })).toEqual(["acc_4", "acc_3"]);
        expect(await match({ closed_at: { $gt: "" } })).toEqual(["acc_3"]);
      });

      it("a half-open range { $gte, $lt } on one field", async () => {
        expect(await match({ created_at: { $gte: at(2), $lt: at(4) } })).toEqual(["acc_3", "acc_2"]);
        expect(await match({ balance: { $gte: 100, $lt: 300 } })).toEqual(["acc_2", "acc_1"]);
        expect(await match({ created_at: { $gte: at(3), $lt: at(3) } })).toEqual([]);
      });

      it("finds the same through a sparse index: documents without the field are left out of it, not of queries", async () => {
        expect(await match({ status: "closed", closed_at: { $lte: at(30) } })).toEqual(["acc_3"]);
        expect(await match({ status: "closed", closed_at: at(30) })).toEqual(["acc_3"]);
        expect(await match({ status: "open", closed_at: null })).toEqual(["acc_4", "acc_1"]);
        expect(await match({ status: { $in: ["open", "frozen"] }, closed_at: { $ne: at(30) } })).toEqual([
          "acc_4",
          "acc_2",
          "acc_1",
        ]);
        await store.update("accounts", "acc_2", { set: { status: "closed", closed_at: at(20) } });
        expect(await match({ status: "closed", closed_at: { $gte: at(10) } })).toEqual(["acc_3", "acc_2"]);
        await store.update("accounts", "acc_3", { set: { closed_at: null } });
        expect(await match({ status: "closed", closed_at: { $gte: at(10) } })).toEqual(["acc_2"]);
        expect(await match({ status: "closed", closed_at: null })).toEqual(["acc_3"]);
      });

      it("skips undefined conditions", async () => {
        expect(await match({ status: undefined, vip: true })).toEqual(["acc_4", "acc_1"]);
      });

      it("rejects unknown operators, object values, hostile field names and unknown collections", async () => {
        const loose = store as unknown as Store<Record<string, BaseDoc>>;
        const where = (w: Record<string, unknown>) => w as Where<BaseDoc>;
        await expect(loose.findAll("accounts", where({ status: { $regex: "o" } }))).rejects.toThrow(TypeError);
        await expect(loose.findAll("accounts", where({ meta: { source: "conformance" } }))).rejects.toThrow(TypeError);
        await expect(loose.findAll("accounts", where({ balance: { $gt: null } }))).rejects.toThrow(TypeError);
        await expect(loose.findAll("accounts", where({ "status') OR 1=1 --": "x" }))).rejects.toThrow(TypeError);
        await expect(loose.findAll("accounts", where({ "meta.source": "conformance" }))).rejects.toThrow(TypeError);
        await expect(loose.findAll("accounts", where({ $where: "1" }))).rejects.toThrow(TypeError);
        await expect(loose.findAll('accounts" --', {})).rejects.toThrow(TypeError);
        await expect(loose.get("nope", "acc_1")).rejects.toThrow(TypeError);
        await expect(loose.insert("nope", account("acc_9"))).rejects.toThrow(TypeError);
        expect(await match({})).toHaveLength(4);
      });
    });

    describe("livemode partitioning", () => {
      beforeEach(async () => {
        await store.insert("accounts", account("acc_t1", { created_at: at(1) }));
        await store.insert("accounts", account("acc_l1", { created_at: at(2), livemode: true }));
        await store.insert("accounts", account("acc_t2", { created_at: at(3) }));
        await store.insert("accounts", account("acc_l2", { created_at: at(4), livemode: true }));
      });

      it("where livemode selects one environment in find, list and deleteMany", async () => {
        expect(ids(await store.findAll("accounts", { livemode: true }))).toEqual(["acc_l2", "acc_l1"]);
        expect(ids(await store.findAll("accounts", { livemode: false }))).toEqual(["acc_t2", "acc_t1"]);
        expect((await store.findOne("accounts", { livemode: true, status: "open" }))?.id).toBe("acc_l2");
        const page = await store.list("accounts", { livemode: false }, { limit: 10 });
        expect(ids(page.data)).toEqual(["acc_t2", "acc_t1"]);
        expect(await store.deleteMany("accounts", { livemode: false })).toBe(2);
        expect(ids(await store.findAll("accounts", {}))).toEqual(["acc_l2", "acc_l1"]);
      });

      it("a cursor or conditional write from the other environment finds nothing", async () => {
        await expect(
          store.list("accounts", { livemode: false }, { limit: 10, startingAfter: "acc_l2" }),
        ).rejects.toBeInstanceOf(UnknownCursorError);
        expect(await store.update("accounts", "acc_l1", { set: { status: "frozen" } }, { livemode: false })).toBeNull();
        expect(await store.delete("accounts", "acc_l1", { livemode: false })).toBe(false);
        expect((await store.get("accounts", "acc_l1"))?.status).toBe("open");
      });

      it("moving a document to the other environment moves it in every query", async () => {
        await store.update("accounts", "acc_t1", { set: { livemode: true } });
        await store.update("accounts", "acc_l2", { set: { livemode: false } });
        expect(ids(await store.findAll("accounts", { livemode: true }))).toEqual(["acc_l1", "acc_t1"]);
        expect(ids(await store.findAll("accounts", { livemode: false }))).toEqual(["acc_l2", "acc_t2"]);
        const page = await store.list("accounts", { livemode: true }, { limit: 10 });
        expect(ids(page.data)).toEqual(["acc_l1", "acc_t1"]);
      });
    });

    describe("list", () => {
      // Newest first: l_a (t5), l_b (t4), then l_p, l_m, l_k sharing t3 (id descending), l_y (t2), l_z (t1).
      // Ids deliberately disagree with time, and a live document shares t3 with the tie.
      const ORDER = ["l_a", "l_b", "l_p", "l_m", "l_k", "l_y", "l_z"];
      beforeEach(async () => {
        const docs = [
          account("l_m", { created_at: at(3), status: "frozen" }),
          account("l_z", { created_at: at(1) }),
          account("l_b", { created_at: at(4) }),
          account("l_p", { created_at: at(3) }),
          account("l_n", { created_at: at(3), livemode: true }),
          account("l_a", { created_at: at(5) }),
          account("l_k", { created_at: at(3) }),
          account("l_y", { created_at: at(2) }),
        ];
        for (const doc of docs) await store.insert("accounts", doc);
      });

      const test = { livemode: false } as const;

      it("pages forward with startingAfter, ties broken by id", async () => {
        const pages: { data: string[]; hasMore: boolean }[] = [];
        let cursor: string | undefined;
        // Bounded, so a cursor that fails to advance fails the test instead of looping forever.
        for (let i = 0; i < 10; i++) {
          const page = await store.list("accounts", test, { limit: 2, startingAfter: cursor });
          pages.push({ data: ids(page.data), hasMore: page.hasMore });
          if (!page.hasMore) break;
          cursor = page.data.at(-1)?.id;
        }
        expect(pages).toEqual([
          { data: ["l_a", "l_b"], hasMore: true },
          { data: ["l_p", "l_m"], hasMore: true },
          { data: ["l_k", "l_y"], hasMore: true },
          { data: ["l_z"], hasMore: false },
        ]);
        expect(await store.list("accounts", test, { limit: 2, startingAfter: "l_z" })).toEqual({
          data: [],
          hasMore: false,
        });
      });

      it("pages backward with endingBefore, still newest first", async () => {
        const pages: { data: string[]; hasMore: boolean }[] = [];
        let cursor = "l_z";
        // Bounded, so a cursor that fails to advance fails the test instead of looping forever.
        for (let i = 0; i < 10; i++) {
          const page = await store.list("accounts", test, { limit: 2, endingBefore: cursor });
          pages.push({ data: ids(page.data), hasMore: page.hasMore });
          if (!page.hasMore) break;
          cursor = page.data[0]?.id ?? "";
        }
        expect(pages).toEqual([
          { data: ["l_k", "l_y"], hasMore: true },
          { data: ["l_p", "l_m"], hasMore: true },
          { data: ["l_a", "l_b"], hasMore: false },
        ]);
        expect(await store.list("accounts", test, { limit: 2, endingBefore: "l_a" })).toEqual({
          data: [],
          hasMore: false,
        });
      });

      it("hasMore is exact at the limit in both directions", async () => {
        const all = await store.list("accounts", test, { limit: 7 });
        expect({ data: ids(all.data), hasMore: all.hasMore }).toEqual({ data: ORDER, hasMore: false });
        expect((await store.list("accounts", test, { limit: 6 })).hasMore).toBe(true);
        const older = await store.list("accounts", test, { limit: 3, startingAfter: "l_m" });
        expect({ data: ids(older.data), hasMore: older.hasMore }).toEqual({
          data: ["l_k", "l_y", "l_z"],
          hasMore: false,
        });
        const newer = await store.list("accounts", test, { limit: 3, endingBefore: "l_m" });
        expect({ data: ids(newer.data), hasMore: newer.hasMore }).toEqual({
          data: ["l_a", "l_b", "l_p"],
          hasMore: false,
        });
        const fewer = await store.list("accounts", test, { limit: 2, endingBefore: "l_m" });
        expect({ data: ids(fewer.data), hasMore: fewer.hasMore }).toEqual({ data: ["l_b", "l_p"], hasMore: true });
      });

      it("applies where together with the cursor", async () => {
        const open = { livemode: false, status: "open" } as const;
        const page = await store.list("accounts", open, { limit: 2, startingAfter: "l_p" });
        expect({ data: ids(page.data), hasMore: page.hasMore }).toEqual({ data: ["l_k", "l_y"], hasMore: true });
        const back = await store.list("accounts", open, { limit: 10, endingBefore: "l_k" });
        expect(ids(back.data)).toEqual(["l_a", "l_b", "l_p"]);
      });

      it("breaks created_at ties by id whatever the filter", async () => {
        // Filters no index serves, so the order cannot come from an index walk by accident.
        for (const where of [{}, { vip: false }, { balance: { $gte: 0 } }] as Where<AccountDoc>[]) {
          expect(ids(await store.findAll("accounts", where))).toEqual([
            "l_a",
            "l_b",
            "l_p",
            "l_n",
            "l_m",
            "l_k",
            "l_y",
            "l_z",
          ]);
          const page = await store.list("accounts", where, { limit: 3, startingAfter: "l_b" });
          expect(ids(page.data)).toEqual(["l_p", "l_n", "l_m"]);
          const back = await store.list("accounts", where, { limit: 3, endingBefore: "l_y" });
          expect(ids(back.data)).toEqual(["l_n", "l_m", "l_k"]);
        }
      });

      it("an unknown cursor, or one of the other environment, throws UnknownCursorError naming which", async () => {
        const refused = (page: Page) =>
          store.list("accounts", test, page).then(
            () => "listed",
            (err: unknown) => (err instanceof UnknownCursorError ? `${err.cursor} ${err.id}` : String(err)),
          );
        expect(await refused({ limit: 5, startingAfter: "nope" })).toBe("startingAfter nope");
        expect(await refused({ limit: 5, endingBefore: "nope" })).toBe("endingBefore nope");
        // l_n is live: not this environment's.
        expect(await refused({ limit: 5, endingBefore: "l_n" })).toBe("endingBefore l_n");
        expect(await refused({ limit: 5, startingAfter: "l_n" })).toBe("startingAfter l_n");
      });

      it("a cursor that has left the filter still marks the place", async () => {
        // l_m is frozen: no longer in the open accounts' list, yet its place in it is known.
        const open = { livemode: false, status: "open" } as const;
        expect(ids((await store.list("accounts", open, { limit: 5, startingAfter: "l_m" })).data)).toEqual([
          "l_k",
          "l_y",
          "l_z",
        ]);
        expect(ids((await store.list("accounts", open, { limit: 5, endingBefore: "l_m" })).data)).toEqual([
          "l_a",
          "l_b",
          "l_p",
        ]);
      });

      it("rejects a limit outside 1-100 and two cursors at once", async () => {
        await expect(store.list("accounts", test, { limit: 0 })).rejects.toThrow(RangeError);
        await expect(store.list("accounts", test, { limit: 101 })).rejects.toThrow(RangeError);
        await expect(store.list("accounts", test, { limit: 2.5 })).rejects.toThrow(RangeError);
        await expect(
          store.list("accounts", test, { limit: 5, startingAfter: "l_a", endingBefore: "l_z" }),
        ).rejects.toThrow(TypeError);
      });
    });

    describe("update", () => {
      beforeEach(async () => {
        await store.insert("accounts", account("acc_1", { balance: 1000, nickname: "ann" }));
        await store.insert("accounts", account("acc_2"));
      });

      it("sets fields and returns the updated document, which get then returns", async () => {
        const updated = await store.update("accounts", "acc_1", {
          set: { status: "frozen", nickname: null, meta: { reason: "review" }, closed_at: at(9) },
        });
        const expected = account("acc_1", {
          balance: 1000,
          status: "frozen",
          nickname: null,
          meta: { reason: "review" },
          closed_at: at(9),
        });
        expect(updated).toStrictEqual(expected);
        expect(await store.get("accounts", "acc_1")).toStrictEqual(expected);
        const meta = { reason: "mine" };
        const copy = await store.update("accounts", "acc_1", { set: { meta } });
        meta.reason = "changed by caller";
        expect(copy?.meta).toEqual({ reason: "mine" });
        expect(await store.get("accounts", "acc_2")).toStrictEqual(account("acc_2"));
      });

      it("increments numbers, alone or together with set", async () => {
        expect((await store.update("accounts", "acc_1", { inc: { balance: 250 } }))?.balance).toBe(1250);
        expect((await store.update("accounts", "acc_1", { inc: { balance: -1300 } }))?.balance).toBe(-50);
        const both = await store.update("accounts", "acc_1", { set: { status: "closed" }, inc: { balance: 50 } });
        expect(both).toMatchObject({ status: "closed", balance: 0 });
        expect(await store.get("accounts", "acc_1")).toMatchObject({ status: "closed", balance: 0 });
      });

      it("applies changes only when expect matches", async () => {
        const met = await store.update("accounts", "acc_1", { inc: { balance: -400 } }, { balance: { $gte: 400 } });
        expect(met?.balance).toBe(600);
        const unmet = await store.update("accounts", "acc_1", { inc: { balance: -700 } }, { balance: { $gte: 700 } });
        expect(unmet).toBeNull();
        const wrongStatus = await store.update("accounts", "acc_1", { set: { vip: true } }, { status: "frozen" });
        expect(wrongStatus).toBeNull();
        expect(await store.get("accounts", "acc_1")).toMatchObject({ balance: 600, vip: false });
      });

      it("returns null for a missing id and creates nothing", async () => {
        expect(await store.update("accounts", "acc_missing", { set: { status: "frozen" } })).toBeNull();
        expect(await store.get("accounts", "acc_missing")).toBeNull();
      });

      it("with no changes, returns the document when it exists and matches", async () => {
        expect(await store.update("accounts", "acc_1", {})).toStrictEqual(
          account("acc_1", { balance: 1000, nickname: "ann" }),
        );
        expect(await store.update("accounts", "acc_1", {}, { status: "closed" })).toBeNull();
        expect(await store.update("accounts", "acc_missing", {})).toBeNull();
      });

      it("reorders listings when created_at changes", async () => {
        await store.update("accounts", "acc_2", { set: { created_at: at(-5) } });
        await store.update("accounts", "acc_1", { set: { created_at: at(5) } });
        expect(ids((await store.list("accounts", {}, { limit: 10 })).data)).toEqual(["acc_1", "acc_2"]);
        expect(ids(await store.findAll("accounts", { created_at: { $lt: at(0) } }))).toEqual(["acc_2"]);
      });

      it("rejects changing the id, and setting a unique field to a taken value", async () => {
        const loose = store as unknown as Store<Record<string, BaseDoc>>;
        await expect(loose.update("accounts", "acc_1", { set: { id: "acc_x" } })).rejects.toThrow(TypeError);
        const clash = store.update("accounts", "acc_1", { set: { email: "acc_2@example.com" } });
        await expect(clash).rejects.toBeInstanceOf(DuplicateKeyError);
        await expect(clash).rejects.toMatchObject({ collection: "accounts", key: "email" });
        expect((await store.get("accounts", "acc_1"))?.email).toBe("acc_1@example.com");
      });
    });

    describe("delete", () => {
      beforeEach(async () => {
        await store.insert("accounts", account("acc_1", { status: "closed" }));
        await store.insert("accounts", account("acc_2", { status: "closed" }));
        await store.insert("accounts", account("acc_3", { status: "open" }));
      });

      it("deletes by id, true once and false after", async () => {
        expect(await store.delete("accounts", "acc_1")).toBe(true);
        expect(await store.get("accounts", "acc_1")).toBeNull();
        expect(await store.delete("accounts", "acc_1")).toBe(false);
        expect(await store.delete("accounts", "acc_missing")).toBe(false);
        expect(ids(await store.findAll("accounts", {}))).toEqual(["acc_3", "acc_2"]);
      });

      it("deletes only when expect matches", async () => {
        expect(await store.delete("accounts", "acc_3", { status: "closed" })).toBe(false);
        expect(await store.get("accounts", "acc_3")).not.toBeNull();
        expect(await store.delete("accounts", "acc_2", { status: "closed" })).toBe(true);
        expect(await store.get("accounts", "acc_2")).toBeNull();
      });

      it("deleteMany removes every match and counts them", async () => {
        expect(await store.deleteMany("accounts", { status: "closed" })).toBe(2);
        expect(await store.deleteMany("accounts", { status: "closed" })).toBe(0);
        expect(ids(await store.findAll("accounts", {}))).toEqual(["acc_3"]);
      });
    });

    describe("duplicate keys", () => {
      // What a claim on a named slot relies on (event-stream slots, domain/webhooks/stream-leases.ts):
      // of racing inserts of one id exactly one succeeds, and of racing conditional updates made with
      // the same expectation exactly one applies.
      it("of racing inserts of one id, and racing conditional updates with one expectation, exactly one wins", async () => {
        const inserts = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) => store.insert("accounts", account("slot_1", { owner: `holder ${i}` }))),
        );
        expect(inserts.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        for (const r of inserts) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(DuplicateKeyError);
        const held = await store.get("accounts", "slot_1");
        const takeovers = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            store.update("accounts", "slot_1", { set: { owner: `taker ${i}` } }, { owner: held?.owner }),
          ),
        );
        expect(takeovers.filter((r) => r !== null)).toHaveLength(1);
      });

      it("rejects a second document with the same id, keeping the first", async () => {
        const first = account("acc_1", { balance: 10 });
        await store.insert("accounts", first);
        const again = store.insert("accounts", account("acc_1", { email: "other@example.com" }));
        await expect(again).rejects.toBeInstanceOf(DuplicateKeyError);
        await expect(again).rejects.toMatchObject({ collection: "accounts", key: "id" });
        expect(await store.get("accounts", "acc_1")).toStrictEqual(first);
        expect(await store.findAll("accounts", {})).toHaveLength(1);
      });

      it("rejects a document whose unique field is taken", async () => {
        await store.insert("accounts", account("acc_1", { email: "same@example.com" }));
        const clash = store.insert("accounts", account("acc_2", { email: "same@example.com" }));
        await expect(clash).rejects.toBeInstanceOf(DuplicateKeyError);
        await expect(clash).rejects.toMatchObject({ collection: "accounts", key: "email" });
        expect(await store.get("accounts", "acc_2")).toBeNull();
      });

      it(
        "lets exactly one of many concurrent inserts of one id succeed",
        async () => {
          const results = await Promise.allSettled(
            Array.from({ length: 20 }, (_, i) => store.insert("entries", entry("e_once", { amount: i }))),
          );
          expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
          const rejected = results.filter((r) => r.status === "rejected");
          expect(rejected).toHaveLength(19);
          for (const r of rejected) expect(r.reason).toBeInstanceOf(DuplicateKeyError);
        },
        CONCURRENCY_TIMEOUT,
      );
    });

    describe("transactions", () => {
      beforeEach(async () => {
        await store.insert("accounts", account("acc_1", { balance: 1000 }));
      });

      it("commits every write and returns fn's result", async () => {
        const result = await store.transaction(async (tx) => {
          await tx.update("accounts", "acc_1", { inc: { balance: -300 } });
          await tx.insert("entries", entry("e_1", { account_id: "acc_1", amount: -300 }));
          await tx.insert("accounts", account("acc_2", { balance: 300 }));
          return "done";
        });
        expect(result).toBe("done");
        expect((await store.get("accounts", "acc_1"))?.balance).toBe(700);
        expect((await store.get("accounts", "acc_2"))?.balance).toBe(300);
        expect(ids(await store.findAll("entries", {}))).toEqual(["e_1"]);
      });

      it("rolls back every earlier write when fn throws, and rethrows the same error", async () => {
        const failure = new Error("card declined");
        const attempt = store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1", { account_id: "acc_1", amount: -300 }));
          await tx.update("accounts", "acc_1", { inc: { balance: -300 }, set: { status: "frozen" } });
          await tx.insert("accounts", account("acc_2"));
          await tx.delete("accounts", "acc_1");
          throw failure;
        });
        await expect(attempt).rejects.toBe(failure);
        expect(await store.get("accounts", "acc_1")).toStrictEqual(account("acc_1", { balance: 1000 }));
        expect(await store.get("accounts", "acc_2")).toBeNull();
        expect(await store.findAll("entries", {})).toEqual([]);
        await store.insert("entries", entry("e_after"));
        expect(ids(await store.findAll("entries", {}))).toEqual(["e_after"]);
      });

      it("rolls back when a store error such as a duplicate key propagates out of fn", async () => {
        const attempt = store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1"));
          await tx.insert("accounts", account("acc_1"));
        });
        await expect(attempt).rejects.toBeInstanceOf(DuplicateKeyError);
        expect(await store.findAll("entries", {})).toEqual([]);
      });

      it("writes a ledger posting all or nothing: its lines and its conditional balance changes", async () => {
        // The shape of domain/ledger/postings.ts: a balance moved by a conditional increment, one entry per
        // line, then a second conditional debit that the balance does not cover, which ends the run.
        await store.insert("accounts", account("acc_2", { balance: 50 }));
        const post = (debit: number) =>
          store.transaction(async (tx) => {
            const credited = await tx.update("accounts", "acc_1", { inc: { balance: debit } });
            await tx.insert("entries", entry(`e_credit_${debit}`, { account_id: "acc_1", amount: debit }));
            await tx.insert("entries", entry(`e_debit_${debit}`, { account_id: "acc_2", amount: -debit }));
            const debited = await tx.update(
              "accounts",
              "acc_2",
              { inc: { balance: -debit } },
              { balance: { $gte: debit } },
            );
            if (!debited) throw new Error("insufficient balance");
            return credited;
          });
        await expect(post(80)).rejects.toThrow("insufficient balance");
        expect((await store.get("accounts", "acc_1"))?.balance).toBe(1000);
        expect((await store.get("accounts", "acc_2"))?.balance).toBe(50);
        expect(await store.findAll("entries", {})).toEqual([]);
        await post(50);
        expect((await store.get("accounts", "acc_1"))?.balance).toBe(1050);
        expect((await store.get("accounts", "acc_2"))?.balance).toBe(0);
        const lines = await store.findAll("entries", {});
        expect(lines.reduce((sum, e) => sum + e.amount, 0)).toBe(0);
        expect(ids(lines).sort()).toEqual(["e_credit_50", "e_debit_50"]);
      });

      it("sees its own writes", async () => {
        const seen = await store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1", { account_id: "acc_1", amount: 5, created_at: at(1) }));
          await tx.insert("entries", entry("e_2", { account_id: "acc_1", amount: 7, created_at: at(2) }));
          const updated = await tx.update("accounts", "acc_1", { inc: { balance: 12 } });
          return {
            entry: await tx.get("entries", "e_1"),
            listed: ids((await tx.list("entries", { account_id: "acc_1" }, { limit: 10 })).data),
            found: ids(await tx.findAll("entries", { amount: { $gt: 5 } })),
            one: (await tx.findOne("accounts", { balance: 1012 }))?.id,
            updated: updated?.balance,
            reread: (await tx.get("accounts", "acc_1"))?.balance,
          };
        });
        expect(seen).toEqual({
          entry: entry("e_1", { account_id: "acc_1", amount: 5, created_at: at(1) }),
          listed: ["e_2", "e_1"],
          found: ["e_2"],
          one: "acc_1",
          updated: 1012,
          reread: 1012,
        });
      });

      it("never shows another reader half of a transaction", async () => {
        const firstWritten = deferred();
        const gate = deferred();
        const done = store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1", { created_at: at(1) }));
          firstWritten.resolve();
          await gate.promise;
          await tx.insert("entries", entry("e_2", { created_at: at(2) }));
        });
        await firstWritten.promise;
        const during = store.findAll("entries", {});
        await new Promise((resolve) => setTimeout(resolve, 20));
        gate.resolve();
        await done;
        // SQLite makes the reader wait for the commit, MongoDB shows the snapshot from before it.
        expect([[], ["e_2", "e_1"]]).toContainEqual(ids(await during));
        expect(ids(await store.findAll("entries", {}))).toEqual(["e_2", "e_1"]);
      });

      it("refuses the outer store inside fn, rolling back, instead of hanging", async () => {
        const outer = store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1"));
          await store.get("accounts", "acc_1");
        });
        await expect(outer).rejects.toThrow(/inside its own transaction/);
        const nested = store.transaction(async () => store.transaction(async () => "inner"));
        await expect(nested).rejects.toThrow(/inside its own transaction/);
        expect(await store.findAll("entries", {})).toEqual([]);
      });

      it("refuses tx once the transaction is over", async () => {
        let leaked: StoreOps<TestDocs> | undefined;
        await store.transaction(async (tx) => {
          leaked = tx;
        });
        if (leaked === undefined) throw new Error("fn did not run");
        await expect(leaked.insert("entries", entry("e_late"))).rejects.toThrow(/already finished/);
        expect(await store.get("entries", "e_late")).toBeNull();
      });
    });

    describe("how a transaction ends", () => {
      beforeEach(async () => {
        await store.insert("accounts", account("acc_1", { balance: 1000 }));
      });

      it("runs operations fn did not await inside the transaction, before it commits", async () => {
        await store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1", { created_at: at(1) }));
          // Forgotten awaits: the second waits for the first on MongoDB, past fn's return.
          void tx.insert("entries", entry("e_2", { created_at: at(2) }));
          void tx.update("accounts", "acc_1", { inc: { balance: -1 } });
        });
        expect(ids(await store.findAll("entries", {}))).toEqual(["e_2", "e_1"]);
        expect((await store.get("accounts", "acc_1"))?.balance).toBe(999);
      });

      it("rolls back the operations fn did not await when fn fails", async () => {
        const failure = new Error("card declined");
        const attempt = store.transaction(async (tx) => {
          void tx.insert("entries", entry("e_1"));
          void tx.update("accounts", "acc_1", { inc: { balance: -1 } });
          throw failure;
        });
        await expect(attempt).rejects.toBe(failure);
        expect(await store.findAll("entries", {})).toEqual([]);
        expect((await store.get("accounts", "acc_1"))?.balance).toBe(1000);
      });

      it("fails and rolls back when an operation fn did not await fails", async () => {
        const attempt = store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1"));
          void tx.insert("accounts", account("acc_1"));
          return "returned normally";
        });
        await expect(attempt).rejects.toBeInstanceOf(DuplicateKeyError);
        expect(await store.findAll("entries", {})).toEqual([]);
      });

      it("after a failed operation refuses every further one, and rolls back even if fn caught the failure", async () => {
        let refusal: unknown;
        const attempt = store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1"));
          await tx.insert("accounts", account("acc_1")).catch(() => {});
          refusal = await tx.insert("entries", entry("e_2")).then(
            () => "accepted",
            (error: unknown) => error,
          );
          return "carried on";
        });
        await expect(attempt).rejects.toBeInstanceOf(DuplicateKeyError);
        expect(refusal).toBeInstanceOf(Error);
        expect(String(refusal)).toMatch(/an earlier operation in it failed/);
        expect(await store.findAll("entries", {})).toEqual([]);
        expect(await store.get("accounts", "acc_1")).toStrictEqual(account("acc_1", { balance: 1000 }));
      });

      it("rejects with fn's own error when fn turned the failure into one", async () => {
        const own = new Error("that account already exists");
        const attempt = store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1"));
          try {
            await tx.insert("accounts", account("acc_1"));
          } catch {
            throw own;
          }
        });
        await expect(attempt).rejects.toBe(own);
        expect(await store.findAll("entries", {})).toEqual([]);
      });

      it("calls afterCommit callbacks once the commit is done, and never for a rollback", async () => {
        const events: string[] = [];
        const done = store
          .transaction(async (tx) => {
            await tx.insert("entries", entry("e_1"));
            tx.afterCommit(() => events.push("after commit"));
            events.push("fn returned");
            return "result";
          })
          .then((result) => {
            events.push(`resolved with ${result}`);
          });
        await done;
        expect(events).toEqual(["fn returned", "after commit", "resolved with result"]);

        const rolledBack: string[] = [];
        await expect(
          store.transaction(async (tx) => {
            tx.afterCommit(() => rolledBack.push("after commit"));
            throw new Error("rolled back");
          }),
        ).rejects.toThrow("rolled back");
        await expect(
          store.transaction(async (tx) => {
            tx.afterCommit(() => rolledBack.push("after commit"));
            await tx.insert("accounts", account("acc_1"));
          }),
        ).rejects.toBeInstanceOf(DuplicateKeyError);
        expect(rolledBack).toEqual([]);
      });

      it("refuses afterCommit once the run is over; a throwing callback leaves the commit in place and says so", async () => {
        let leaked: Parameters<Parameters<typeof store.transaction>[0]>[0] | undefined;
        await store.transaction(async (tx) => {
          leaked = tx;
        });
        expect(() => leaked?.afterCommit(() => {})).toThrow(/already finished/);

        const attempt = store.transaction(async (tx) => {
          await tx.insert("entries", entry("e_1"));
          tx.afterCommit(() => {
            throw new Error("callback bug");
          });
        });
        await expect(attempt).rejects.toThrow("the transaction committed, but an afterCommit callback failed");
        expect(ids(await store.findAll("entries", {}))).toEqual(["e_1"]);
      });
    });

    describe("what every adapter refuses alike", () => {
      const loose = () => store as unknown as Store<Record<string, BaseDoc>>;

      beforeEach(async () => {
        await store.insert("accounts", account("acc_1", { balance: 10, limit: null }));
      });

      it("an increment of a null or non-numeric field; a missing field counts as 0", async () => {
        const inc = (field: string) => loose().update("accounts", "acc_1", { inc: { [field]: 5 } } as never);
        await expect(inc("limit")).rejects.toThrow(TypeError);
        await expect(inc("owner")).rejects.toThrow(TypeError);
        await expect(inc("meta")).rejects.toThrow(TypeError);
        expect(await store.get("accounts", "acc_1")).toStrictEqual(account("acc_1", { balance: 10, limit: null }));
        await store.insert("accounts", account("acc_2"));
        const started = (await loose().update("accounts", "acc_2", {
          inc: { limit: 5 },
        } as never)) as AccountDoc | null;
        expect(started?.limit).toBe(5);
      });

      it("changing the type of a system field, or incrementing one", async () => {
        const update = (changes: object) => loose().update("accounts", "acc_1", changes as never);
        await expect(update({ set: { livemode: "yes" } })).rejects.toThrow(TypeError);
        await expect(update({ set: { created_at: 5 } })).rejects.toThrow(TypeError);
        await expect(update({ set: { livemode: null } })).rejects.toThrow(TypeError);
        await expect(update({ inc: { created_at: 1 } })).rejects.toThrow(TypeError);
        await expect(update({ inc: { livemode: 1 } })).rejects.toThrow(TypeError);
        expect(await store.get("accounts", "acc_1")).toStrictEqual(account("acc_1", { balance: 10, limit: null }));
      });

      it("_id and __proto__ as field names, anywhere", async () => {
        const refused = [
          loose().insert("accounts", { ...account("acc_9"), _id: "other" } as BaseDoc),
          loose().insert("accounts", JSON.parse(JSON.stringify(account("acc_9")).replace("{", '{"__proto__":{},'))),
          loose().findAll("accounts", { _id: "acc_1" } as Where<BaseDoc>),
          loose().update("accounts", "acc_1", { set: { _id: "other" } } as never),
          loose().update("accounts", "acc_1", { set: JSON.parse('{"__proto__": {"balance": 1}}') }),
          loose().findAll("accounts", {}, 10, { by: "_id" as "id", direction: "asc" }),
        ];
        for (const attempt of refused) await expect(attempt).rejects.toThrow(TypeError);
        expect(ids(await store.findAll("accounts", {}))).toEqual(["acc_1"]);
        expect(await store.get("accounts", "acc_1")).toStrictEqual(account("acc_1", { balance: 10, limit: null }));
      });

      it("operator names that are only members of every object ({constructor: …})", async () => {
        for (const operator of ["constructor", "toString", "hasOwnProperty", "__proto__", "valueOf"]) {
          const where = JSON.parse(`{"status": {"${operator}": "open"}}`) as Where<BaseDoc>;
          await expect(loose().findAll("accounts", where)).rejects.toThrow(TypeError);
        }
      });

      it("keys BSON or MongoDB's updates refuse (a NUL character, a leading $, a dot), in inserts and updates", async () => {
        for (const key of ["a\u0000b", "$where", "a.b"]) {
          const meta = { [key]: "x" };
          await expect(store.insert("accounts", account("acc_9", { meta }))).rejects.toThrow(TypeError);
          await expect(store.update("accounts", "acc_1", { set: { meta } })).rejects.toThrow(TypeError);
          const nested = { outer: { [key]: "x" } } as unknown as Record<string, string>;
          await expect(store.update("accounts", "acc_1", { set: { meta: nested } })).rejects.toThrow(TypeError);
        }
        expect(await store.get("accounts", "acc_9")).toBeNull();
        expect(await store.get("accounts", "acc_1")).toStrictEqual(account("acc_1", { balance: 10, limit: null }));
      });

      it("values JSON and BSON would give back differently (a Date, NaN, Infinity, undefined in a list)", async () => {
        const values: unknown[] = [
          new Date(),
          Number.NaN,
          Number.POSITIVE_INFINITY,
          ["a", undefined],
          Buffer.from("x"),
        ];
        for (const value of values) {
          await expect(loose().insert("entries", { ...entry("e_9"), extra: value } as BaseDoc)).rejects.toThrow(
            TypeError,
          );
          await expect(loose().update("accounts", "acc_1", { set: { nickname: value } } as never)).rejects.toThrow(
            TypeError,
          );
        }
        expect(await store.get("entries", "e_9")).toBeNull();
        expect(await store.get("accounts", "acc_1")).toStrictEqual(account("acc_1", { balance: 10, limit: null }));
      });
    });

    describe("readiness", () => {
      it("answers on a store that takes writes", async () => {
        await expect(store.ready(5_000)).resolves.toBeUndefined();
      });
    });

    describe("concurrency", () => {
      const EXPECTED_BALANCES = Array.from({ length: 20 }, (_, i) => i * 500);

      it(
        "100 concurrent transactions debiting 500 from 10000 under a condition: exactly 20 succeed",
        async () => {
          await store.insert("accounts", account("acc_c", { balance: 10_000 }));
          const results = await Promise.all(
            Array.from({ length: 100 }, (_, i) =>
              store.transaction(async (tx) => {
                const after = await tx.update(
                  "accounts",
                  "acc_c",
                  { inc: { balance: -500 } },
                  { balance: { $gte: 500 } },
                );
                if (after === null) return null;
                await tx.insert("entries", entry(`e_${i}`, { account_id: "acc_c", amount: -500 }));
                return after.balance;
              }),
            ),
          );
          const balances = results.filter((b) => b !== null).sort((a, b) => a - b);
          // Each success saw a different balance: no two debits read the same value.
          expect(balances).toEqual(EXPECTED_BALANCES);
          expect((await store.get("accounts", "acc_c"))?.balance).toBe(0);
          expect(await store.findAll("entries", { account_id: "acc_c" })).toHaveLength(20);
        },
        CONCURRENCY_TIMEOUT,
      );

      it(
        "100 concurrent conditional updates outside transactions: exactly 20 succeed",
        async () => {
          await store.insert("accounts", account("acc_c", { balance: 10_000 }));
          const results = await Promise.all(
            Array.from({ length: 100 }, () =>
              store.update("accounts", "acc_c", { inc: { balance: -500 } }, { balance: { $gte: 500 } }),
            ),
          );
          const balances = results.flatMap((doc) => (doc === null ? [] : [doc.balance])).sort((a, b) => a - b);
          expect(balances).toEqual(EXPECTED_BALANCES);
          expect((await store.get("accounts", "acc_c"))?.balance).toBe(0);
        },
        CONCURRENCY_TIMEOUT,
      );

      it(
        "concurrent transfers between two accounts conserve the total and never overdraw",
        async () => {
          await store.insert("accounts", account("acc_a", { balance: 1000 }));
          await store.insert("accounts", account("acc_b", { balance: 1000 }));
          // Two of every three transfers go from a to b, so a runs dry and some debits must be refused.
          const transfers = Array.from({ length: 30 }, (_, i) => {
            const [from, to] = i % 3 === 0 ? ["acc_b", "acc_a"] : ["acc_a", "acc_b"];
            return store.transaction(async (tx) => {
              const debited = await tx.update("accounts", from, { inc: { balance: -150 } }, { balance: { $gte: 150 } });
              if (debited === null) return 0;
              await tx.update("accounts", to, { inc: { balance: 150 } });
              return to === "acc_a" ? 150 : -150;
            });
          });
          const moves = await Promise.all(transfers);
          const movedToA = moves.reduce<number>((sum, m) => sum + m, 0);
          const a = (await store.get("accounts", "acc_a"))?.balance;
          const b = (await store.get("accounts", "acc_b"))?.balance;
          expect(a).toBe(1000 + movedToA);
          expect(b).toBe(1000 - movedToA);
          expect(a).toBeGreaterThanOrEqual(0);
          expect(b).toBeGreaterThanOrEqual(0);
          // All 30 succeeding would leave a at -500.
          expect(moves.filter((m) => m === 0).length).toBeGreaterThan(0);
        },
        CONCURRENCY_TIMEOUT,
      );
    });
  });
}
