import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { createSimulatorProcessor } from "../../adapters/processor-simulator.ts";
import { openSqliteStore } from "../../store/sqlite.ts";
import { type AppStore, COLLECTIONS, type Docs } from "../areas.ts";
import type { Processor } from "../charges/processor.ts";
import type { Domain } from "../index.ts";
import type { Caller } from "../kernel/caller.ts";
import { parseVaultKeys } from "../vault/keys.ts";

// The fraud engine wired into the domain: what charges do with each decision, the review life cycle, and
// counters shared by several instances on one store. A spying processor shows whether the acquirer was
// called; a clock the test moves drives the review window and the velocity window.

const caller: Caller = {
  keyId: "kid_test",
  livemode: false,
  scopes: ["*"],
  keyPrefix: "key_test_x",
  requestId: "req_t",
};

function world() {
  const store: AppStore = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  let clock = new Date("2026-11-21T10:00:00Z");
  const authorizations: string[] = [];
  const keys = parseVaultKeys({
    masterKey: randomBytes(32).toString("base64"),
    fingerprintKey: randomBytes(32).toString("base64"),
  });
  /** One instance of the domain on the shared store (several may run at once). */
  const instance = (): Domain => {
    const simulator = createSimulatorProcessor();
    const processor: Processor = {
      ...simulator,
      authorizeCard: (request) => {
        authorizations.push(request.chargeId);
        return simulator.authorizeCard(request);
      },
    };
    return testDomain({ store, now: () => clock, vaultKeys: keys, processor }).domain;
  };
  return {
    store,
    instance,
    authorizations,
    advance(seconds: number) {
      clock = new Date(clock.getTime() + seconds * 1000);
    },
  };
}

let open: AppStore[] = [];
afterEach(async () => {
  for (const s of open) await s.close();
  open = [];
});

async function setup() {
  const w = world();
  open.push(w.store);
  const domain = w.instance();
  const merchant = await domain.merchants.create(caller, { name: "M" });
  const token = (card: string) => domain.tokens.create(caller, { card, holder: "A", exp_month: 12, exp_year: 2031 });
  const charge = async (
    card: string,
    options: { amount?: number; capture?: boolean; ip?: string; via?: Domain; tokenId?: string } = {},
  ) =>
    (options.via ?? domain).charges.create(caller, {
      merchant_id: merchant.id,
      amount: options.amount ?? 2500,
      currency: "USD",
      payment_method: { type: "card", token: options.tokenId ?? (await token(card)).id },
      capture: options.capture,
      ...(options.ip ? { customer: { ip: options.ip } } : {}),
    });
  const evaluationOf = async (id: string | null | undefined) => {
    const found = await w.store.get("fraud_evaluations", id ?? "");
    if (!found) throw new Error(`no evaluation ${id}`);
    return found;
  };
  const eventsOf = async (txId: string) =>
    (await w.store.findAll("events", {}, 1000))
      .filter((e) => e.payload.tx_id === txId)
      .map((e) => e.type)
      .reverse();
  return { ...w, domain, merchant, token, charge, evaluationOf, eventsOf };
}

describe("charges and the fraud engine", () => {
  it("blocks test card 4100000000000019 without calling the processor, and records why", async () => {
    const t = await setup();
    const charge = await t.charge("4100000000000019");
    expect(charge).toMatchObject({ status: "blocked", failure_code: "fraud_blocked", amount_captured: 0 });
    expect(t.authorizations).not.toContain(charge.id);
    const evaluation = await t.evaluationOf(charge.fraud_evaluation_id);
    expect(evaluation).toMatchObject({ tx_id: charge.id, source: "charge", score: 100, decision: "block" });
    expect(evaluation.signals).toEqual(["blocklist_match"]);
    expect(charge.failure_message).toContain(evaluation.id);
    expect(await t.eventsOf(charge.id)).toEqual(["fraud.evaluated", "payment.failed"]);
    const event = (await t.store.findAll("events", { type: "fraud.evaluated" }, 10))[0];
    expect(Object.keys(event?.payload ?? {}).sort()).toEqual(["decision", "score", "signals", "tx_id"]);
  });

  it("calls the processor for an allowed card and links the evaluation", async () => {
    const t = await setup();
    const charge = await t.charge("4242424242424242");
    expect(charge.status).toBe("captured");
    expect(t.authorizations).toContain(charge.id);
    expect((await t.evaluationOf(charge.fraud_evaluation_id)).decision).toBe("allow");
    expect(await t.eventsOf(charge.id)).toEqual(["fraud.evaluated", "payment.authorized", "payment.captured"]);
  });

  it("holds test card 4000000000009235 for review: authorized, not captured, capture and void refused", async () => {
    const t = await setup();
    const charge = await t.charge("4000000000009235", { capture: true });
    expect(charge).toMatchObject({ status: "authorized", amount_captured: 0, review: { status: "open" } });
    expect(charge.review?.expires_at).toBe("2026-11-28T10:00:00.000000Z");
    expect((await t.evaluationOf(charge.fraud_evaluation_id)).signals).toEqual(["test_card_elevated_risk"]);
    await expect(t.domain.charges.capture(caller, charge.id)).rejects.toMatchObject({
      code: "invalid_state_transition",
      message: expect.stringContaining("approve the review"),
    });
    await expect(t.domain.charges.void(caller, charge.id)).rejects.toMatchObject({
      message: expect.stringContaining("reject the review"),
    });
    const approved = await t.domain.charges.approveReview(caller, charge.id);
    expect(approved).toMatchObject({ status: "captured", amount_captured: 2500, review: { status: "approved" } });
    expect(approved.review_expires_at).toBeNull();
    const balance = await t.store.get("balances", `${t.merchant.id}:USD`);
    expect(balance?.available).toBe(2500);
    await expect(t.domain.charges.approveReview(caller, charge.id)).rejects.toMatchObject({
      code: "invalid_state_transition",
    });
  });

  it("approving a review of a capture: false charge leaves it authorized for a later capture", async () => {
    const t = await setup();
    const charge = await t.charge("4000000000009235", { capture: false });
    const approved = await t.domain.charges.approveReview(caller, charge.id);
    expect(approved).toMatchObject({ status: "authorized", review: { status: "approved" } });
    expect((await t.domain.charges.capture(caller, charge.id, 1000)).amount_captured).toBe(1000);
  });

  it("rejects a review into a void, and an open review expires into a void once its window passes", async () => {
    const t = await setup();
    const rejected = await t.domain.charges.rejectReview(caller, (await t.charge("4000000000009235")).id);
    expect(rejected).toMatchObject({ status: "voided", amount_captured: 0, review: { status: "rejected" } });
    expect(await t.eventsOf(rejected.id)).toEqual(["fraud.evaluated", "payment.authorized", "payment.voided"]);

    const held = await t.charge("4000000000009235");
    await t.domain.fraud.settings.update(caller, { review_window_seconds: 3600 });
    t.advance(7 * 86400 - 1);
    expect(await t.domain.jobs.expireReviews()).toBe(0);
    t.advance(1);
    const second = await t.instance().jobs.expireReviews();
    expect(second).toBe(1);
    expect(await t.domain.jobs.expireReviews()).toBe(0);
    const expired = await t.domain.charges.get(caller, held.id);
    expect(expired).toMatchObject({ status: "voided", review: { status: "expired" } });
    // The window of the settings at the time of the charge applies; a later change does not move it.
    const short = await t.charge("4000000000009235");
    expect(short.review?.expires_at).toBe("2026-11-28T11:00:00.000000Z");
  });

  it("counts velocity in the store: two instances on one store see the same attempts", async () => {
    const t = await setup();
    const other = t.instance();
    const token = await t.token("4242424242424242");
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await t.charge("", { tokenId: token.id, via: i % 2 ? other : t.domain }));
    const signals = await Promise.all(results.map(async (c) => (await t.evaluationOf(c.fraud_evaluation_id)).signals));
    expect(signals.slice(0, 5)).toEqual([[], [], [], [], []]);
    expect(signals[5]).toEqual(["velocity_card"]);
    // Another token of the same card is the same card (fingerprint).
    expect((await t.evaluationOf((await t.charge("4242424242424242")).fraud_evaluation_id)).signals).toContain(
      "velocity_card",
    );
    // Ten minutes on, the window has moved past them.
    t.advance(600);
    expect((await t.evaluationOf((await t.charge("4242424242424242")).fraud_evaluation_id)).signals).toEqual([]);
  });

  it("does not let a concurrent burst slip under the velocity limit", async () => {
    const t = await setup();
    const token = await t.token("5555555555554444");
    const burst = await Promise.all(Array.from({ length: 10 }, () => t.charge("", { tokenId: token.id })));
    const fired = await Promise.all(
      burst.map(async (c) => (await t.evaluationOf(c.fraud_evaluation_id)).signals.includes("velocity_card")),
    );
    expect(fired.filter(Boolean).length).toBeGreaterThanOrEqual(5);
  });

  it("counts declines for card testing, and small attempts from one IP address", async () => {
    const t = await setup();
    const declined = await t.token("4000000000000002");
    for (let i = 0; i < 3; i++) {
      expect((await t.charge("", { tokenId: declined.id })).status).toBe("declined");
    }
    const fourth = await t.charge("", { tokenId: declined.id });
    expect((await t.evaluationOf(fourth.fraud_evaluation_id)).signals).toEqual(["card_testing"]);

    const small = [];
    for (let i = 0; i < 3; i++) small.push(await t.charge("4242424242424242", { amount: 100, ip: "192.0.2.44" }));
    const last = await t.evaluationOf(small[2]?.fraud_evaluation_id);
    expect(last.signals).toEqual(["card_testing"]);
    expect(last.rules[0]?.reason).toContain("3 small attempts from this IP address");
  });

  it("raises amount_anomaly against the merchant's accepted charges only", async () => {
    const t = await setup();
    for (let i = 0; i < 5; i++) await t.charge("4242424242424242", { amount: 1000 });
    // Blocked charges teach nothing about the merchant's amounts.
    await t.charge("4100000000000019", { amount: 1_000_000 });
    const big = await t.charge("5555555555554444", { amount: 5001 });
    expect((await t.evaluationOf(big.fraud_evaluation_id)).signals).toEqual(["amount_anomaly"]);
  });

  it("adds an accepted charge to the merchant's history only once its transaction commits, outside it", async () => {
    const t = await setup();
    const history = () => t.store.get("fraud_merchant_stats", `${t.merchant.id}:USD`);
    // Seen from inside the charge's transaction, the history is not written there (no write to the one
    // document every charge of the merchant would share: docs/operating.md "Running on MongoDB").
    const written: string[] = [];
    const transaction = t.store.transaction.bind(t.store);
    t.store.transaction = (fn) =>
      transaction((tx) =>
        fn({
          ...tx,
          update: (collection, ...rest) => {
            written.push(collection);
            return tx.update(collection, ...rest);
          },
        } as typeof tx),
      );
    const charge = await t.charge("4242424242424242", { amount: 1200 });
    expect(charge.status).toBe("captured");
    expect(written).not.toContain("fraud_merchant_stats");
    expect(await history()).toMatchObject({ count: 1, sum: 1200 });
    await t.charge("4000000000000002", { amount: 700 }); // declined: not the merchant's accepted amounts
    expect(await history()).toMatchObject({ count: 1, sum: 1200 });
  });

  it("leaves the history alone when the charge's transaction rolls back", async () => {
    const t = await setup();
    const history = () => t.store.get("fraud_merchant_stats", `${t.merchant.id}:USD`);
    await t.charge("4242424242424242", { amount: 1000 });
    const failing = t.domain.charges.create(
      caller,
      {
        merchant_id: t.merchant.id,
        amount: 3000,
        currency: "USD",
        payment_method: { type: "card", token: (await t.token("4242424242424242")).id },
      },
      {
        inTransaction: async () => {
          throw new Error("rolled back after the evaluation was recorded");
        },
      },
    );
    await expect(failing).rejects.toThrow(/rolled back/);
    expect(await history()).toMatchObject({ count: 1, sum: 1000 });
  });

  it("evaluates a charge again through the API without changing it or counting an attempt", async () => {
    const t = await setup();
    const charge = await t.charge("4242424242424242", { ip: "203.0.113.9" });
    const before = await t.store.get("charges", charge.id);
    const counters = await t.store.findAll("fraud_counters", {}, 100);
    const again = await t.domain.fraud.evaluations.create(caller, { tx_id: charge.id });
    expect(again).toMatchObject({ tx_id: charge.id, source: "transaction", signals: ["vpn_detected"], score: 48 });
    expect(await t.store.get("charges", charge.id)).toEqual(before);
    expect(await t.store.findAll("fraud_counters", {}, 100)).toEqual(counters);
  });

  it("sweeps velocity buckets once they have left every window", async () => {
    const t = await setup();
    await t.charge("4242424242424242", { ip: "192.0.2.1" });
    expect(await t.store.findAll("fraud_counters", {}, 10)).toHaveLength(2);
    t.advance(600);
    expect(await t.domain.jobs.sweepFraudCounters()).toBe(0);
    t.advance(120);
    expect(await t.domain.jobs.sweepFraudCounters()).toBe(2);
  });
});

describe("fraud settings", () => {
  it("starts at 65 / 75 / 7 days and refuses a review threshold not below the block threshold", async () => {
    const t = await setup();
    expect(await t.domain.fraud.settings.get(caller)).toMatchObject({
      reviewThreshold: 65,
      blockThreshold: 75,
      reviewWindowSeconds: 604800,
      updatedAt: null,
    });
    await expect(t.domain.fraud.settings.update(caller, { review_threshold: 75 })).rejects.toMatchObject({
      param: "review_threshold",
    });
    await expect(t.domain.fraud.settings.update(caller, { block_threshold: 65 })).rejects.toMatchObject({
      param: "block_threshold",
    });
    expect(await t.domain.fraud.settings.update(caller, { review_threshold: 30, block_threshold: 40 })).toMatchObject({
      reviewThreshold: 30,
      blockThreshold: 40,
    });
    // Production keeps its own.
    expect((await t.domain.fraud.settings.get({ ...caller, livemode: true })).reviewThreshold).toBe(65);
    // The thresholds apply to the next evaluation: a VPN's 48 points now block.
    const charge = await t.charge("4242424242424242", { ip: "203.0.113.1" });
    expect(charge.status).toBe("blocked");
  });
});

describe("the request_3ds decision (FraudSettings.request_3ds_threshold)", () => {
  it("is off by default, and must lie between the review and block thresholds", async () => {
    const t = await setup();
    expect((await t.domain.fraud.settings.get(caller)).request3dsThreshold).toBeNull();
    for (const value of [65, 75, 20]) {
      await expect(t.domain.fraud.settings.update(caller, { request_3ds_threshold: value })).rejects.toMatchObject({
        param: "request_3ds_threshold",
      });
    }
    await t.domain.fraud.settings.update(caller, { request_3ds_threshold: 70 });
    await expect(t.domain.fraud.settings.update(caller, { block_threshold: 70 })).rejects.toMatchObject({
      param: "block_threshold",
    });
    expect(await t.domain.fraud.settings.update(caller, { request_3ds_threshold: null })).toMatchObject({
      request3dsThreshold: null,
    });
  });

  it("turns a risky card charge into a 3-D Secure challenge, and the evaluation explains why", async () => {
    const t = await setup();
    await t.domain.fraud.settings.update(caller, { review_threshold: 30, request_3ds_threshold: 40 });
    // A VPN address scores 48: at or above 40, below 75.
    const risky = await t.charge("4000000000003055", { ip: "203.0.113.7" });
    expect(risky.status).toBe("requires_action");
    expect(risky.next_action?.type).toBe("redirect_to_url");
    const evaluation = await t.evaluationOf(risky.fraud_evaluation_id);
    expect(evaluation).toMatchObject({ decision: "request_3ds", score: 48, signals: ["vpn_detected"] });
    expect(evaluation.rules[0]?.reason).toMatch(/203\.0\.113\.7/);
    // The same card without the risk: authenticated frictionless, no challenge.
    const calm = await t.charge("4000000000003055", { ip: "192.0.2.1" });
    expect(calm.status).toBe("captured");
    expect(calm.three_d_secure?.result).toBe("authenticated");
    // A card not enrolled: the issuer's attempt stands in, and the charge goes on.
    const attempted = await t.charge("4242424242424242", { ip: "203.0.113.8" });
    expect(attempted).toMatchObject({ status: "captured" });
    expect(attempted.three_d_secure).toMatchObject({ result: "attempted", liability_shift: true });
    expect((await t.evaluationOf(attempted.fraud_evaluation_id)).decision).toBe("request_3ds");
  });
});
