import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide } from "./engine.ts";
import type { Hit } from "./rules.ts";

// Properties of the engine (spec: FraudEvaluation): the score is within 0-100 whatever fires, never
// falls when a rule fires more points or another rule fires, and the decision never gets milder as
// the score rises (unless an allow list matches, which decides allow).

const hit = fc.record({
  rule: fc.constantFrom(
    "highrisk_bin",
    "vpn_detected",
    "velocity_card",
    "card_testing",
    "amount_anomaly",
    "country_mismatch",
    "blocklist_match",
  ),
  points: fc.integer({ min: 0, max: 100 }),
  reason: fc.constant("r"),
});
const hits = fc.array(hit, { maxLength: 14 });
// The 3-D Secure threshold, when set, lies strictly between the two (FraudSettings.request_3ds_threshold).
const thresholds = fc
  .tuple(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 1, max: 100 }), fc.option(fc.integer({ min: 1, max: 100 })))
  .filter(
    ([review, block, request3ds]) =>
      review < block && (request3ds === null || (review < request3ds && request3ds < block)),
  )
  .map(([review, block, request3ds]) => ({ review, block, request3ds }));
const severity = { allow: 0, review: 1, request_3ds: 2, block: 3 } as const;

describe("fraud engine properties", () => {
  it("keeps the score an integer within 0-100 and equal to the capped sum of points", () => {
    fc.assert(
      fc.property(hits, thresholds, (hs, t) => {
        const { score } = decide(hs, t);
        expect(Number.isInteger(score)).toBe(true);
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(100);
        expect(score).toBe(
          Math.min(
            100,
            hs.reduce((s, h) => s + h.points, 0),
          ),
        );
      }),
    );
  });

  it("is monotonic: another fired rule, or more points on one, never lowers the score or softens the decision", () => {
    fc.assert(
      fc.property(hits, hit, fc.integer({ min: 0, max: 100 }), thresholds, (hs, extra, more, t) => {
        const before = decide(hs, t);
        const added = decide([...hs, extra], t);
        expect(added.score).toBeGreaterThanOrEqual(before.score);
        expect(severity[added.decision]).toBeGreaterThanOrEqual(severity[before.decision]);
        if (hs.length > 0) {
          const raised: Hit[] = hs.map((h, i) => (i === 0 ? { ...h, points: Math.min(100, h.points + more) } : h));
          const after = decide(raised, t);
          expect(after.score).toBeGreaterThanOrEqual(before.score);
          expect(severity[after.decision]).toBeGreaterThanOrEqual(severity[before.decision]);
        }
      }),
    );
  });

  it("lets a rule that decides review hold whatever the score, and an allow list still win over it", () => {
    fc.assert(
      fc.property(hits, thresholds, fc.boolean(), (hs, t, allowed) => {
        const review: Hit = { rule: "test_card_elevated_risk", points: t.review, reason: "r", decides: "review" };
        const allow: Hit = { rule: "allowlist_match", points: 0, reason: "r", decides: "allow" };
        const { decision, score } = decide(allowed ? [...hs, review, allow] : [...hs, review], t);
        expect(decision).toBe(allowed ? "allow" : "review");
        expect(score).toBeGreaterThanOrEqual(t.review);
      }),
    );
  });

  it("decides by the thresholds, and an allow-list match always allows", () => {
    fc.assert(
      fc.property(hits, thresholds, fc.boolean(), (hs, t, allowed) => {
        const all: Hit[] = allowed
          ? [...hs, { rule: "allowlist_match", points: 0, reason: "r", decides: "allow" }]
          : hs;
        const { score, decision, signals } = decide(all, t);
        const expected = allowed
          ? "allow"
          : score >= t.block
            ? "block"
            : t.request3ds !== null && score >= t.request3ds
              ? "request_3ds"
              : score >= t.review
                ? "review"
                : "allow";
        expect(decision).toBe(expected);
        expect(signals).toEqual(all.map((h) => h.rule));
      }),
    );
  });
});
