import { describe, expect, it } from "vitest";
import { recordingObserver, refusal, testDomain } from "../../../test-support/domain.ts";
import { openSqliteStore } from "../../store/sqlite.ts";
import { type AppStore, COLLECTIONS, type Docs } from "../areas.ts";

// Charge outcomes as the domain reports them to its observer (kernel/observer.ts; the metrics'
// payments_charge_outcomes_total, docs/operating.md "Metrics"): once per committed change, with the
// status the change left the charge in, and never for a change that did not commit.

function setup(store?: AppStore) {
  const seen = recordingObserver();
  const t = testDomain({ observer: seen.observer, ...(store ? { store } : {}) });
  const { domain, caller } = t;
  const merchant = () => domain.merchants.create(caller(), { name: "M" });
  const byCard = async (pan: string, capture = true, livemode = false) => {
    const m = await domain.merchants.create(caller(livemode), { name: "M" });
    const token = await domain.tokens.create(caller(livemode), {
      card: pan,
      holder: "A",
      exp_month: 12,
      exp_year: 2031,
    });
    return domain.charges.create(caller(livemode), {
      merchant_id: m.id,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
      capture,
    });
  };
  return { ...t, seen, merchant, byCard, charges: () => seen.of("charge") };
}

describe("charge outcomes reported to the observer", () => {
  it("reports a charge's status at creation, in its environment", async () => {
    const s = setup();
    await s.byCard("4242424242424242");
    await s.byCard("4000000000000002");
    await s.byCard("4100000000000019");
    await s.byCard("4242424242424242", false, true);
    expect(s.charges()).toEqual([
      ["charge", "captured", false],
      ["charge", "declined", false],
      ["charge", "blocked", false],
      ["charge", "authorized", true],
    ]);
  });

  it("reports each status a charge moves to: capture, partial and full refund, void", async () => {
    const s = setup();
    const held = await s.byCard("4242424242424242", false);
    await s.domain.charges.capture(s.caller(), held.id);
    await s.domain.charges.refund(s.caller(), held.id, { amount: 100 });
    await s.domain.charges.refund(s.caller(), held.id, { amount: 100 });
    await s.domain.charges.refund(s.caller(), held.id, {});
    const other = await s.byCard("4242424242424242", false);
    await s.domain.charges.void(s.caller(), other.id);
    expect(s.charges()).toEqual([
      ["charge", "authorized", false],
      ["charge", "captured", false],
      // A second partial refund leaves the status as it was: not a new outcome.
      ["charge", "partially_refunded", false],
      ["charge", "refunded", false],
      ["charge", "authorized", false],
      ["charge", "voided", false],
    ]);
  });

  it("reports a local payment's completion and expiry", async () => {
    const s = setup();
    const m = await s.merchant();
    const pix = () =>
      s.domain.charges.create(s.caller(), {
        merchant_id: m.id,
        amount: 1000,
        currency: "BRL",
        payment_method: { type: "pix" },
      });
    const paid = await pix();
    await s.domain.charges.complete(s.caller(), paid.id);
    const unpaid = await pix();
    s.advance(30 * 86_400);
    await s.domain.charges.expireDue(false);
    expect(s.charges()).toEqual([
      ["charge", "pending", false],
      ["charge", "captured", false],
      ["charge", "pending", false],
      ["charge", "expired", false],
    ]);
    expect((await s.domain.charges.get(s.caller(), unpaid.id)).status).toBe("expired");
  });

  it("reports nothing for a change that is refused or rolled back", async () => {
    // A store whose next transaction fails at its end, after every write of the change was made.
    const real = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    let failNext = false;
    const store: AppStore = {
      ...real,
      transaction: (fn) =>
        real.transaction(async (tx) => {
          const result = await fn(tx);
          if (failNext) {
            failNext = false;
            throw new Error("the commit failed");
          }
          return result;
        }),
    };
    const s = setup(store);
    const charge = await s.byCard("4242424242424242");
    const before = s.charges().length;
    // Refused before any write: a captured charge cannot be voided.
    expect((await refusal(s.domain.charges.void(s.caller(), charge.id))).code).toBe("invalid_state_transition");
    failNext = true;
    await expect(s.domain.charges.refund(s.caller(), charge.id, {})).rejects.toThrow("the commit failed");
    expect((await s.domain.charges.get(s.caller(), charge.id)).status).toBe("captured");
    expect(s.charges()).toHaveLength(before);
    // The same refund, committed, is reported.
    await s.domain.charges.refund(s.caller(), charge.id, {});
    expect(s.charges().slice(before)).toEqual([["charge", "refunded", false]]);
  });
});
