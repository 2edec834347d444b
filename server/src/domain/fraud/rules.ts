import { entriesOf } from "../../guards.ts";
// The fraud rules (spec: the FraudEvaluation model names every signal, its points and what triggers
// it). Each rule is a pure, deterministic function of the facts gathered for one transaction: it
// returns the signal it raises, the points it adds and why, or null. Nothing here reads the store or
// the clock, so each rule is tested at and around its thresholds on plain values (rules.test.ts);
// gathering the facts (lists, counts, history) is ./facts.ts's job.

export type ListKind = "card_bin" | "card_fingerprint" | "ip_address" | "email" | "email_domain" | "country";
export type ListAction = "block" | "allow" | "flag";
export type Decision = "allow" | "review" | "request_3ds" | "block";

/** One fact of the transaction found on a value list (a stored list, or a sandbox built-in one). */
export interface ListMatch {
  kind: ListKind;
  action: ListAction;
  /** The list's id; null for the sandbox's built-in lists. */
  listId: string | null;
  listName: string;
  /**
   * The fact, as a reason may show it: "203.0.113.7 (in 203.0.113.0/24)", "the card's BIN",
   * "the customer's country DE". Never a card number or a BIN.
   */
  fact: string;
}

/** Counts of one card's or one IP address's charge attempts in the velocity window, this one included. */
export interface WindowCounts {
  attempts: number;
  /** Attempts of a small amount (see SMALL_AMOUNT). */
  small: number;
  /** Attempts the processor declined. */
  declines: number;
}

/** The merchant's accepted charges in the transaction's currency. */
export interface History {
  count: number;
  /** Their amounts added up, in minor units. */
  sum: number;
}

export interface Facts {
  amount: number;
  currency: string;
  /** Whether the amount is small (card testing uses small amounts). */
  small: boolean;
  matches: ListMatch[];
  /** The card's counts, when the card is known. */
  card?: WindowCounts | undefined;
  /** The IP address's counts, when it is known. */
  ip?: WindowCounts | undefined;
  history?: History | undefined;
  customerCountry?: string | undefined;
  /** Where the IP address is, where known. */
  ipCountry?: string | undefined;
  /** The country that issued the card, where known. */
  cardCountry?: string | undefined;
  /** The card's `fraudulent` disputes so far (issue 31), and the newest one's id. */
  cardDisputes?: { count: number; lastDisputeId: string } | undefined;
  /**
   * The merchant's `fraudulent` disputes opened in the last LIMITS.merchantDisputeDays days (issue 31),
   * and the newest one's id.
   */
  merchantDisputes?: { recent: number; lastDisputeId: string } | undefined;
  /** Sandbox test card 4000000000009235. */
  elevatedRiskTestCard?: boolean | undefined;
}

export interface Thresholds {
  review: number;
  block: number;
  /** From this score (below `block`) card charges are asked for 3-D Secure; null: never (FraudSettings). */
  request3ds?: number | null | undefined;
}

/** A rule that fired. */
export interface Hit {
  rule: string;
  points: number;
  reason: string;
  /**
   * A decision the rule makes whatever the score: `allow` (an allow-list match) wins over everything,
   * then `review` (the sandbox's elevated-risk test card). Most rules only add points.
   */
  decides?: Decision;
}

export type Rule = (facts: Facts, thresholds: Thresholds) => Hit | null;

/** Points per signal (the spec's FraudEvaluation documentation states the same numbers). */
export const POINTS = {
  blocklist_match: 100,
  allowlist_match: 0,
  highrisk_bin: 48,
  vpn_detected: 48,
  highrisk_card: 48,
  highrisk_email: 30,
  highrisk_email_domain: 30,
  highrisk_country: 30,
  velocity_card: 35,
  velocity_ip: 25,
  card_testing: 45,
  amount_anomaly: 35,
  country_mismatch: 20,
  disputed_card: 50,
  disputed_merchant: 25,
} as const;

/** The thresholds of the count-based rules. */
export const LIMITS = {
  /** The velocity window: the last 10 minutes (counted in whole minutes, see ./counters.ts). */
  windowSeconds: 600,
  /** velocity_card fires above this many attempts with one card in the window. */
  cardAttempts: 5,
  /** velocity_ip fires above this many attempts from one IP address in the window. */
  ipAttempts: 10,
  /** card_testing fires on the n-th small attempt from one card or IP address in the window. */
  smallAttempts: 3,
  /** card_testing fires once one card or IP address has this many declines in the window. */
  declines: 3,
  /** amount_anomaly needs at least this many accepted charges of the merchant in the currency ... */
  anomalyMinHistory: 5,
  /** ... and fires when the amount is more than this many times their average. */
  anomalyMultiple: 5,
  /** disputed_merchant fires from this many `fraudulent` disputes of the merchant's charges ... */
  merchantDisputes: 3,
  /** ... opened in the last this many days (on the environment's clock). */
  merchantDisputeDays: 30,
} as const;

/** What a flag-list match raises, per kind of list (spec: FraudListAction.flag). */
export const FLAG_SIGNALS: Record<ListKind, keyof typeof POINTS> = {
  card_bin: "highrisk_bin",
  ip_address: "vpn_detected",
  card_fingerprint: "highrisk_card",
  email: "highrisk_email",
  email_domain: "highrisk_email_domain",
  country: "highrisk_country",
};

/**
 * The largest small amount, in minor units: 1.00 of the currency (100 for a currency without minor
 * units, such as JPY). `exponent` is the currency's ISO 4217 exponent.
 */
export function smallAmountLimit(exponent: number): number {
  return exponent === 0 ? 100 : 10 ** exponent;
}

function describe(match: ListMatch): string {
  const where =
    match.listId === null
      ? `a sandbox built-in ${match.action} list (${match.listName})`
      : `the ${match.action} list '${match.listName}' (${match.listId})`;
  return `${match.fact} is on ${where}`;
}

function listRule(rule: keyof typeof POINTS, select: (m: ListMatch) => boolean, decides?: Decision): Rule {
  return (facts) => {
    const found = facts.matches.filter(select);
    if (found.length === 0) return null;
    const hit: Hit = { rule, points: POINTS[rule], reason: `${found.map(describe).join("; ")}.` };
    if (decides) hit.decides = decides;
    return hit;
  };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

const minutes = `${LIMITS.windowSeconds / 60} minutes`;

export const velocityCard: Rule = (facts) => {
  const n = facts.card?.attempts ?? 0;
  if (n <= LIMITS.cardAttempts) return null;
  return {
    rule: "velocity_card",
    points: POINTS.velocity_card,
    reason: `${plural(n, "charge attempt")} with this card in the last ${minutes} (more than ${LIMITS.cardAttempts}).`,
  };
};

export const velocityIp: Rule = (facts) => {
  const n = facts.ip?.attempts ?? 0;
  if (n <= LIMITS.ipAttempts) return null;
  return {
    rule: "velocity_ip",
    points: POINTS.velocity_ip,
    reason: `${plural(n, "charge attempt")} from this IP address in the last ${minutes} (more than ${LIMITS.ipAttempts}).`,
  };
};

export const cardTesting: Rule = (facts) => {
  const found: string[] = [];
  for (const [who, counts] of [
    ["this card", facts.card],
    ["this IP address", facts.ip],
  ] as const) {
    if (!counts) continue;
    if (facts.small && counts.small >= LIMITS.smallAttempts) {
      found.push(`${plural(counts.small, "small attempt")} from ${who}`);
    }
    if (counts.declines >= LIMITS.declines) found.push(`${plural(counts.declines, "declined charge")} from ${who}`);
  }
  if (found.length === 0) return null;
  return {
    rule: "card_testing",
    points: POINTS.card_testing,
    reason: `${found.join("; ")} in the last ${minutes}.`,
  };
};

export const amountAnomaly: Rule = (facts) => {
  const h = facts.history;
  if (!h || h.count < LIMITS.anomalyMinHistory) return null;
  // amount > multiple × (sum / count), in integers.
  if (facts.amount * h.count <= LIMITS.anomalyMultiple * h.sum) return null;
  return {
    rule: "amount_anomaly",
    points: POINTS.amount_anomaly,
    reason:
      `${facts.amount} ${facts.currency} (minor units) is more than ${LIMITS.anomalyMultiple} times the merchant's ` +
      `average of ${Math.round(h.sum / h.count)} over ${h.count} accepted charges in ${facts.currency}.`,
  };
};

export const countryMismatch: Rule = (facts) => {
  const c = facts.customerCountry;
  if (!c) return null;
  const others: string[] = [];
  if (facts.ipCountry && facts.ipCountry !== c) others.push(`the IP address's is ${facts.ipCountry}`);
  if (facts.cardCountry && facts.cardCountry !== c) others.push(`the card's is ${facts.cardCountry}`);
  if (others.length === 0) return null;
  return {
    rule: "country_mismatch",
    points: POINTS.country_mismatch,
    reason: `The customer's country is ${c}, ${others.join(" and ")}.`,
  };
};

/**
 * A card whose cardholder's bank already disputed a charge as `fraudulent` (issue 31): the card is known
 * stolen or its holder disowns payments, so its next charges carry 50 points (with one more signal, a
 * review at the default thresholds).
 */
export const disputedCard: Rule = (facts) => {
  const d = facts.cardDisputes;
  if (!d || d.count === 0) return null;
  return {
    rule: "disputed_card",
    points: POINTS.disputed_card,
    reason:
      d.count === 1
        ? `A charge with this card was disputed as fraudulent (${d.lastDisputeId}).`
        : `${d.count} charges with this card were disputed as fraudulent, most recently ${d.lastDisputeId}.`,
  };
};

/**
 * A merchant whose charges cardholders' banks keep disputing as `fraudulent` (issue 31): its rate of
 * fraud disputes, counted over the last 30 days as the card networks' dispute monitoring counts them per
 * month, says its checkout lets stolen cards through, so each of its next charges carries 25 points
 * (alone no review at the default thresholds; with a card or IP signal, one). A count over time, not a
 * ratio to the merchant's charges: the ratio would need the merchant's charges per window, one more write
 * per charge, for a signal that exists to catch a burst of fraud.
 */
export const disputedMerchant: Rule = (facts) => {
  const d = facts.merchantDisputes;
  if (!d || d.recent < LIMITS.merchantDisputes) return null;
  return {
    rule: "disputed_merchant",
    points: POINTS.disputed_merchant,
    reason: `${d.recent} charges of this merchant were disputed as fraudulent in the last ${LIMITS.merchantDisputeDays} days, most recently ${d.lastDisputeId}.`,
  };
};

/**
 * Sandbox test card 4000000000009235 always goes to review (unless an allow list matches): it adds the
 * review threshold's points and decides `review`, so other signals (velocity from repeated tests) can
 * raise its score but not turn it into a block.
 */
export const elevatedRiskTestCard: Rule = (facts, thresholds) =>
  facts.elevatedRiskTestCard
    ? {
        rule: "test_card_elevated_risk",
        points: thresholds.review,
        reason: "Sandbox test card 4000000000009235 carries elevated risk: it always goes to review.",
        decides: "review",
      }
    : null;

/** Every rule, in the order their signals are listed. */
export const RULES: readonly Rule[] = [
  listRule("blocklist_match", (m) => m.action === "block"),
  listRule("allowlist_match", (m) => m.action === "allow", "allow"),
  ...entriesOf(FLAG_SIGNALS).map(([kind, signal]) => listRule(signal, (m) => m.action === "flag" && m.kind === kind)),
  velocityCard,
  velocityIp,
  cardTesting,
  amountAnomaly,
  countryMismatch,
  disputedCard,
  disputedMerchant,
  elevatedRiskTestCard,
];
