import type { Document } from "mongodb";
import { afterEach, describe, expect, it } from "vitest";
import { type Answer, startWireFake, type WireFake } from "../../store/mongo-wire.fixture.ts";
import { indexesFor, indexName, openMongoStore } from "../../store/mongodb.ts";
import { whereOf } from "./balance-transactions.ts";
import { type BalanceTransactionDoc, ledgerCollections } from "./records.ts";

// listBalanceTransactions' created-time window on MongoDB, with no MongoDB server (none can run on the
// build machines: docs/operating.md "Running on MongoDB"): what the adapter sends for the filter whereOf
// makes (`created_gte` and `created_lt`, a half-open range), and that the index it needs is declared and
// asked for at open. The server is the wire stand-in of the store's own tests (store/mongo-wire.fixture.ts):
// it records the commands and answers with empty results, so this shows what the adapter asks, not how
// MongoDB answers; the conformance suite checks the range's semantics wherever MONGODB_URI is set.

type Docs = { balance_transactions: BalanceTransactionDoc };
const COLLECTIONS = { balance_transactions: ledgerCollections.balance_transactions };

const fakes: WireFake[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

function ordinary(command: Document, name: string): Answer {
  const ns = `db.${String(command[name])}`;
  if (name === "find" || name === "listIndexes") return { ok: 1, cursor: { id: 0n, ns, firstBatch: [] } };
  return { ok: 1 };
}

async function openOnFake() {
  const server = await startWireFake({
    hello: (address) => ({ isWritablePrimary: true, setName: "rs0", hosts: [address], me: address }),
    answer: ordinary,
  });
  fakes.push(server);
  const store = await openMongoStore<Docs>({
    uri: `mongodb://${server.address}/?replicaSet=rs0&serverSelectionTimeoutMS=2000`,
    dbName: "db",
    collections: COLLECTIONS,
  });
  return { server, store };
}

const MERCHANT = "mch_0VcDwNOsPrDfqshAUMoGCd7D";
const window = { merchant_id: MERCHANT, created_gte: "2026-11-01T00:00:00Z", created_lt: "2026-12-01T00:00:00+01:00" };

describe("listBalanceTransactions' created window on the MongoDB adapter", () => {
  it("sends `created_gte` and `created_lt` as one `{ $gte, $lt }` on created_at, in the stored format, beside the equalities", async () => {
    const { server, store } = await openOnFake();
    try {
      await store.findAll("balance_transactions", whereOf(true, window), 10);
      await store.list("balance_transactions", whereOf(true, window), { limit: 10 });
      const finds = server.received("find").filter((c) => c.find === "balance_transactions");
      expect(finds).toHaveLength(2);
      for (const find of finds) {
        // Both bounds in one operator object (not the second replacing the first), written as
        // kernel/time.ts iso writes created_at (fixed width, UTC), so the string comparison is a time one.
        expect(find.filter).toEqual({
          livemode: true,
          merchant_id: MERCHANT,
          created_at: { $gte: "2026-11-01T00:00:00.000000Z", $lt: "2026-11-30T23:00:00.000000Z" },
        });
      }
      // The list is newest first: the sort the index below serves after its equality prefix.
      expect(finds[1]?.sort).toEqual({ created_at: -1, _id: -1 });
      // One bound alone is one operator.
      await store.findAll("balance_transactions", whereOf(false, { created_lt: "2026-11-02T00:00:00Z" }), 10);
      expect(server.received("find").at(-1)?.filter).toEqual({
        livemode: false,
        created_at: { $lt: "2026-11-02T00:00:00.000000Z" },
      });
    } finally {
      await store.close();
    }
  });

  it("declares the index the window needs, and asks for it at open", async () => {
    // The merchant's page and time range: equality on livemode and merchant_id, then the range on
    // created_at (ledger/records.ts), with _id appended so the listing's tie-break is in the index.
    const key = { livemode: 1, merchant_id: 1, created_at: 1, _id: 1 } as const;
    expect(indexesFor(ledgerCollections.balance_transactions.indexes)).toContainEqual(
      expect.objectContaining({ key, name: indexName(key, false) }),
    );
    const { server, store } = await openOnFake();
    try {
      const [create] = server.received("createIndexes").filter((c) => c.createIndexes === "balance_transactions");
      expect(((create?.indexes ?? []) as Document[]).map((i) => i.key)).toContainEqual(key);
    } finally {
      await store.close();
    }
  });
});
