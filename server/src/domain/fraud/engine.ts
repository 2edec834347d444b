import { type Decision, type Facts, type Hit, RULES, type Rule, type Thresholds } from "./rules.ts";

// The engine (spec: FraudEvaluation): the score is the sum of the points of the rules that fired,
// at most 100; the decision follows from the thresholds, except where a rule decides (Hit.decides): an
// allow-list match decides `allow` whatever the score, and the sandbox's elevated-risk test card
// `review`. Pure: the same facts and thresholds always give the same result.

export interface Outcome {
  score: number;
  decision: Decision;
  signals: string[];
  rules: Hit[];
}

/** The score and decision of a set of fired rules. */
export function decide(hits: readonly Hit[], thresholds: Thresholds): Outcome {
  const total = hits.reduce((sum, hit) => sum + hit.points, 0);
  const score = Math.max(0, Math.min(100, total));
  let decision: Decision = "allow";
  if (hits.some((hit) => hit.decides === "allow")) decision = "allow";
  else if (hits.some((hit) => hit.decides === "review")) decision = "review";
  else if (score >= thresholds.block) decision = "block";
  // Between review and block: the payer can prove they hold the card (3-D Secure) instead of the
  // merchant reviewing the charge by hand (FraudSettings.request_3ds_threshold).
  else if (thresholds.request3ds != null && score >= thresholds.request3ds) decision = "request_3ds";
  else if (score >= thresholds.review) decision = "review";
  return {
    score,
    decision,
    signals: hits.map((hit) => hit.rule),
    rules: hits.map(({ rule, points, reason }) => ({ rule, points, reason })),
  };
}

/** Runs every rule on the facts. */
export function evaluate(facts: Facts, thresholds: Thresholds, rules: readonly Rule[] = RULES): Outcome {
  const hits: Hit[] = [];
  for (const rule of rules) {
    const hit = rule(facts, thresholds);
    if (hit) hits.push(hit);
  }
  return decide(hits, thresholds);
}
