import { describe, expect, it } from "vitest";
import { evaluate } from "./engine.ts";
import {
  amountAnomaly,
  cardTesting,
  countryMismatch,
  disputedCard,
  disputedMerchant,
  elevatedRiskTestCard,
  type Facts,
  LIMITS,
  type ListMatch,
  POINTS,
  RULES,
  smallAmountLimit,
  velocityCard,
  velocityIp,
  type WindowCounts,
} from "./rules.ts";

// Each rule of the fraud engine (spec: FraudEvaluation) at and around its thresholds, on plain facts.

const thresholds = { review: 65, block: 75 };
const base: Facts = { amount: 2500, currency: "USD", small: false, matches: [] };
const counts = (c: Partial<WindowCounts>): WindowCounts => ({ attempts: 1, small: 0, declines: 0, ...c });
const match = (m: Partial<ListMatch>): ListMatch => ({
  kind: "ip_address",
  action: "flag",
  listId: "fl_3Vb7Nm1Qw5Er9Ty2Ui6Op4As",
  listName: "VPN ranges",
  fact: "203.0.113.7 (in 203.0.113.0/24)",
  ...m,
});
const signals = (facts: Facts) => evaluate(facts, thresholds).signals;

describe("velocity_card", () => {
  it(`fires above ${LIMITS.cardAttempts} attempts with one card in the window, not at it`, () => {
    expect(velocityCard({ ...base, card: counts({ attempts: LIMITS.cardAttempts }) }, thresholds)).toBeNull();
    const hit = velocityCard({ ...base, card: counts({ attempts: LIMITS.cardAttempts + 1 }) }, thresholds);
    expect(hit).toMatchObject({ rule: "velocity_card", points: POINTS.velocity_card });
    expect(hit?.reason).toContain("6 charge attempts with this card in the last 10 minutes");
    expect(velocityCard(base, thresholds)).toBeNull();
  });

  it("reads the card's counts only, never the IP address's", () => {
    expect(velocityCard({ ...base, ip: counts({ attempts: 50 }) }, thresholds)).toBeNull();
  });
});

describe("velocity_ip", () => {
  it(`fires above ${LIMITS.ipAttempts} attempts from one IP address, not at it`, () => {
    expect(velocityIp({ ...base, ip: counts({ attempts: LIMITS.ipAttempts }) }, thresholds)).toBeNull();
    expect(velocityIp({ ...base, ip: counts({ attempts: LIMITS.ipAttempts + 1 }) }, thresholds)).toMatchObject({
      rule: "velocity_ip",
      points: POINTS.velocity_ip,
    });
    expect(velocityIp({ ...base, card: counts({ attempts: 50 }) }, thresholds)).toBeNull();
  });
});

describe("card_testing", () => {
  it(`fires on the ${LIMITS.smallAttempts}rd small attempt from one card or IP address, when this one is small`, () => {
    const small = { ...base, amount: 100, small: true };
    expect(cardTesting({ ...small, card: counts({ small: LIMITS.smallAttempts - 1 }) }, thresholds)).toBeNull();
    expect(cardTesting({ ...small, card: counts({ small: LIMITS.smallAttempts }) }, thresholds)).toMatchObject({
      rule: "card_testing",
      points: POINTS.card_testing,
    });
    expect(cardTesting({ ...small, ip: counts({ small: LIMITS.smallAttempts }) }, thresholds)?.reason).toContain(
      "3 small attempts from this IP address",
    );
    // A large attempt after small ones is not itself a test of the card.
    expect(cardTesting({ ...base, card: counts({ small: 10 }) }, thresholds)).toBeNull();
  });

  it(`fires from ${LIMITS.declines} declines of one card or IP address in the window, whatever the amount`, () => {
    expect(cardTesting({ ...base, card: counts({ declines: LIMITS.declines - 1 }) }, thresholds)).toBeNull();
    expect(cardTesting({ ...base, card: counts({ declines: LIMITS.declines }) }, thresholds)?.reason).toContain(
      "3 declined charges from this card",
    );
    expect(cardTesting({ ...base, ip: counts({ declines: LIMITS.declines }) }, thresholds)).not.toBeNull();
  });

  it("says small means at most 1.00 of the currency, or 100 without minor units", () => {
    expect(smallAmountLimit(2)).toBe(100);
    expect(smallAmountLimit(3)).toBe(1000);
    expect(smallAmountLimit(0)).toBe(100);
  });
});

describe("amount_anomaly", () => {
  const history = { count: LIMITS.anomalyMinHistory, sum: LIMITS.anomalyMinHistory * 1000 }; // average 1000
  it("fires above 5 times the merchant's average, not at it", () => {
    expect(amountAnomaly({ ...base, amount: 5000, history }, thresholds)).toBeNull();
    const hit = amountAnomaly({ ...base, amount: 5001, history }, thresholds);
    expect(hit).toMatchObject({ rule: "amount_anomaly", points: POINTS.amount_anomaly });
    expect(hit?.reason).toContain("average of 1000 over 5 accepted charges in USD");
  });

  it(`needs at least ${LIMITS.anomalyMinHistory} accepted charges of history`, () => {
    const short = { count: LIMITS.anomalyMinHistory - 1, sum: (LIMITS.anomalyMinHistory - 1) * 1000 };
    expect(amountAnomaly({ ...base, amount: 1_000_000, history: short }, thresholds)).toBeNull();
    expect(amountAnomaly({ ...base, amount: 1_000_000 }, thresholds)).toBeNull();
  });

  it("compares in integers (no rounding of the average lets an amount through)", () => {
    // average 1000.2: 5 × 1000.2 = 5001, so 5001 does not fire and 5002 does.
    const h = { count: 5, sum: 5001 };
    expect(amountAnomaly({ ...base, amount: 5001, history: h }, thresholds)).toBeNull();
    expect(amountAnomaly({ ...base, amount: 5002, history: h }, thresholds)).not.toBeNull();
  });
});

describe("country_mismatch", () => {
  it("fires when the customer's country differs from the IP address's or the card's", () => {
    expect(countryMismatch({ ...base, customerCountry: "DE", ipCountry: "BR" }, thresholds)?.reason).toBe(
      "The customer's country is DE, the IP address's is BR.",
    );
    expect(countryMismatch({ ...base, customerCountry: "DE", cardCountry: "GB" }, thresholds)?.reason).toBe(
      "The customer's country is DE, the card's is GB.",
    );
    expect(
      countryMismatch({ ...base, customerCountry: "DE", ipCountry: "BR", cardCountry: "GB" }, thresholds)?.points,
    ).toBe(POINTS.country_mismatch);
  });

  it("does not fire when they agree or a country is unknown", () => {
    expect(
      countryMismatch({ ...base, customerCountry: "DE", ipCountry: "DE", cardCountry: "DE" }, thresholds),
    ).toBeNull();
    expect(countryMismatch({ ...base, ipCountry: "BR", cardCountry: "GB" }, thresholds)).toBeNull();
    expect(countryMismatch({ ...base, customerCountry: "DE" }, thresholds)).toBeNull();
  });
});

describe("disputed_card", () => {
  it("fires once the card has a fraudulent dispute, naming it (or how many and the newest)", () => {
    expect(disputedCard(base, thresholds)).toBeNull();
    expect(disputedCard({ ...base, cardDisputes: { count: 0, lastDisputeId: "dp_x" } }, thresholds)).toBeNull();
    expect(disputedCard({ ...base, cardDisputes: { count: 1, lastDisputeId: "dp_1" } }, thresholds)).toEqual({
      rule: "disputed_card",
      points: 50,
      reason: "A charge with this card was disputed as fraudulent (dp_1).",
    });
    expect(disputedCard({ ...base, cardDisputes: { count: 3, lastDisputeId: "dp_3" } }, thresholds)?.reason).toBe(
      "3 charges with this card were disputed as fraudulent, most recently dp_3.",
    );
  });
});

describe("disputed_merchant", () => {
  it("fires from the 3rd fraudulent dispute of the merchant's charges in the window, naming the newest", () => {
    const recent = (n: number): Facts => ({ ...base, merchantDisputes: { recent: n, lastDisputeId: "dp_9" } });
    expect(disputedMerchant(base, thresholds)).toBeNull();
    expect(disputedMerchant(recent(LIMITS.merchantDisputes - 1), thresholds)).toBeNull();
    expect(disputedMerchant(recent(LIMITS.merchantDisputes), thresholds)).toEqual({
      rule: "disputed_merchant",
      points: 25,
      reason: "3 charges of this merchant were disputed as fraudulent in the last 30 days, most recently dp_9.",
    });
    expect(disputedMerchant(recent(7), thresholds)?.reason).toMatch(/^7 charges/);
    // Alone it does not send a charge to review; with the card's own fraud dispute, it blocks.
    expect(evaluate(recent(3), thresholds)).toMatchObject({ score: 25, decision: "allow" });
    expect(evaluate({ ...recent(3), cardDisputes: { count: 1, lastDisputeId: "dp_1" } }, thresholds)).toMatchObject({
      score: 75,
      decision: "block",
    });
  });
});

describe("test_card_elevated_risk", () => {
  it("adds exactly the review threshold, so the test card reaches review whatever the thresholds", () => {
    expect(elevatedRiskTestCard(base, thresholds)).toBeNull();
    expect(elevatedRiskTestCard({ ...base, elevatedRiskTestCard: true }, { review: 40, block: 90 })?.points).toBe(40);
    expect(evaluate({ ...base, elevatedRiskTestCard: true }, thresholds)).toMatchObject({
      score: 65,
      decision: "review",
    });
  });
});

describe("list rules", () => {
  it("a block-list match adds 100 points and blocks", () => {
    const outcome = evaluate({ ...base, matches: [match({ action: "block", kind: "card_fingerprint" })] }, thresholds);
    expect(outcome).toMatchObject({ score: 100, decision: "block", signals: ["blocklist_match"] });
    expect(outcome.rules[0]?.reason).toContain("is on the block list 'VPN ranges' (fl_3Vb7Nm1Qw5Er9Ty2Ui6Op4As)");
  });

  it("an allow-list match decides allow, even over a block list, and says so", () => {
    const outcome = evaluate(
      { ...base, matches: [match({ action: "block" }), match({ action: "allow", kind: "email" })] },
      thresholds,
    );
    expect(outcome).toMatchObject({ score: 100, decision: "allow", signals: ["blocklist_match", "allowlist_match"] });
    expect(outcome.rules.find((r) => r.rule === "allowlist_match")?.points).toBe(0);
  });

  it("a flag match raises the signal of its list's kind", () => {
    const kinds = {
      card_bin: "highrisk_bin",
      ip_address: "vpn_detected",
      card_fingerprint: "highrisk_card",
      email: "highrisk_email",
      email_domain: "highrisk_email_domain",
      country: "highrisk_country",
    } as const;
    for (const [kind, signal] of Object.entries(kinds)) {
      expect(signals({ ...base, matches: [match({ kind: kind as ListMatch["kind"] })] })).toEqual([signal]);
    }
  });

  it("reproduces the contract's blocked example: highrisk_bin and vpn_detected score 96 and block", () => {
    const outcome = evaluate(
      { ...base, matches: [match({ kind: "card_bin" }), match({ kind: "ip_address" })] },
      thresholds,
    );
    expect(outcome).toMatchObject({ score: 96, decision: "block", signals: ["highrisk_bin", "vpn_detected"] });
  });

  it("names a sandbox built-in list as such", () => {
    const outcome = evaluate(
      { ...base, matches: [match({ listId: null, listName: "VPN range, RFC 5737 TEST-NET-3" })] },
      thresholds,
    );
    expect(outcome.rules[0]?.reason).toBe(
      "203.0.113.7 (in 203.0.113.0/24) is on a sandbox built-in flag list (VPN range, RFC 5737 TEST-NET-3).",
    );
  });
});

describe("the engine on realistic combinations", () => {
  it("allows a clean charge with no signal and score 0", () => {
    expect(evaluate(base, thresholds)).toEqual({ score: 0, decision: "allow", signals: [], rules: [] });
  });

  it("reviews a VPN with a country mismatch (68) and blocks card testing at velocity (80)", () => {
    expect(
      evaluate({ ...base, matches: [match({})], customerCountry: "DE", ipCountry: "BR" }, thresholds),
    ).toMatchObject({
      score: 68,
      decision: "review",
    });
    const testing = { ...base, amount: 50, small: true, card: counts({ attempts: 6, small: 6 }) };
    expect(evaluate(testing, thresholds)).toMatchObject({
      score: 80,
      decision: "block",
      signals: ["velocity_card", "card_testing"],
    });
  });

  it("decides at the thresholds exactly: review from 65, block from 75", () => {
    const at = (points: number) => evaluate(base, thresholds, [() => ({ rule: "x", points, reason: "r" })]).decision;
    expect([at(64), at(65), at(74), at(75)]).toEqual(["allow", "review", "review", "block"]);
  });

  it("lists its rules in one fixed order", () => {
    expect(RULES.length).toBe(16);
  });
});
