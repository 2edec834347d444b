import { afterEach, describe, expect, it } from "vitest";
import type { BaseDoc, Order, Where } from "../../store/port.ts";
import { openSqliteStore } from "../../store/sqlite.ts";
import { type AppStore, COLLECTIONS, type Docs } from "../areas.ts";
import { createCounters } from "./counters.ts";
import { createFactGatherer } from "./facts.ts";
import { matchKey } from "./lists.ts";
import type { FraudListItemDoc } from "./records.ts";

// How the facts are read from the store: every list a transaction is on comes from one lookup that
// seeks the transaction's keys in the (livemode, match_key) index, whatever the size of the lists, and
// matches come newest first whatever order the store returns them in.

const open: AppStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function item(n: number, kind: FraudListItemDoc["kind"], value: string, listId = "fl_1"): FraudListItemDoc {
  return {
    id: `fli_${String(n).padStart(6, "0")}`,
    livemode: false,
    created_at: `2026-11-01T00:00:00.${String(n).padStart(6, "0")}Z`,
    list_id: listId,
    list_name: `list ${listId}`,
    kind,
    action: "flag",
    value,
    list_value: `${listId}|${value}`,
    match_key: matchKey(kind, value),
  };
}

const observed = {
  livemode: false,
  merchantId: "mch_1",
  amount: 2500,
  currency: "USD",
  pan: "4242424242424242",
  fingerprint: "fp_0123456789abcdef0123456789abcdef",
  email: "ada@example.com",
  ip: "198.18.0.7",
};

describe("gathering the facts", () => {
  it("looks the lists up through the match_key index (never a walk over every item)", async () => {
    const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    open.push(store);
    const calls: [string, unknown, number | undefined, unknown][] = [];
    const spy: AppStore = {
      ...store,
      findAll: (collection, where, limit, order) => {
        calls.push([collection, where, limit, order]);
        return store.findAll(collection, where, limit, order);
      },
    };
    await createFactGatherer(spy, createCounters(store)).gather(observed, new Date("2026-11-21T10:00:00Z"), false);
    const lookup = calls.find(([collection]) => collection === "fraud_list_items");
    expect(lookup).toBeDefined();
    const [, where, limit, order] = lookup as [string, unknown, number, unknown];
    const plan = store.explain("fraud_list_items", where as Where<BaseDoc>, limit, order as Order<BaseDoc>);
    expect(plan.join(" | ")).toContain("USING INDEX fraud_list_items__i__livemode__match_key");
    expect(plan.join(" | ")).not.toContain("fraud_list_items__list");
  });

  it("lists matches newest first, one per list and kind", async () => {
    const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    open.push(store);
    // Inserted in an order unrelated to their keys: the newest of list fl_ip is the /16 range.
    await store.insert("fraud_list_items", item(3, "ip_address", "198.18.0.0/24", "fl_ip"));
    await store.insert("fraud_list_items", item(1, "card_bin", "424242", "fl_bin"));
    await store.insert("fraud_list_items", item(7, "ip_address", "198.18.0.0/16", "fl_ip"));
    await store.insert("fraud_list_items", item(5, "email", "ada@example.com", "fl_mail"));
    await store.insert("fraud_list_items", item(2, "card_bin", "42424242", "fl_bin"));
    // Noise that matches nothing.
    for (let n = 10; n < 60; n++)
      await store.insert("fraud_list_items", item(n, "email", `u${n}@example.com`, "fl_other"));

    const { facts } = await createFactGatherer(store, createCounters(store)).gather(
      observed,
      new Date("2026-11-21T10:00:00Z"),
      false,
    );
    const mine = facts.matches.filter((m) => m.listId !== null);
    expect(mine.map((m) => [m.listId, m.kind])).toEqual([
      ["fl_ip", "ip_address"],
      ["fl_mail", "email"],
      ["fl_bin", "card_bin"],
    ]);
    // The newest matching item of fl_ip names the reason: the /16, not the older /24.
    expect(mine[0]?.fact).toBe("198.18.0.7 (in 198.18.0.0/16)");
  });
});
