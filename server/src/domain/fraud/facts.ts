import type { Clock } from "../kernel/clock.ts";
import { currencyExponent } from "../kernel/money.ts";
import { iso } from "../kernel/time.ts";
import type { Counters } from "./counters.ts";
import { networksOf, parseNetwork } from "./ip.ts";
import { domainAndParents, emailParts, matchKey } from "./lists.ts";
import type { FraudListItemDoc, FraudStore, FraudTx } from "./records.ts";
import type { Facts, ListKind, ListMatch, WindowCounts } from "./rules.ts";
import { LIMITS, smallAmountLimit } from "./rules.ts";
import { ELEVATED_RISK_TEST_CARD, SANDBOX_CARD_COUNTRIES, SANDBOX_IP_COUNTRIES, SANDBOX_LISTS } from "./sandbox.ts";

// Gathering the facts the rules read (./rules.ts) for one transaction: which value lists its card,
// IP address, email and countries are on, the velocity counts, the merchant's history, and the
// sandbox's built-in values. Every store read happens here, so the rules stay pure.

/** What is known of a transaction before the lists, counts and history are looked up. */
export interface Observed {
  livemode: boolean;
  merchantId: string | null;
  amount: number;
  currency: string;
  /** The card number, when the vault has it (charges, tokens): only its BIN and test-card identity are read. */
  pan?: string | undefined;
  /** The card's BIN, when there is no card number. */
  bin?: string | undefined;
  fingerprint?: string | undefined;
  cardCountry?: string | undefined;
  email?: string | undefined;
  ip?: string | undefined;
  customerCountry?: string | undefined;
  ipCountry?: string | undefined;
}

export interface Gathered {
  facts: Facts;
  /** The counter buckets this attempt was counted in (empty when nothing was counted). */
  buckets: string[];
  /**
   * Whether the merchant's history document (`fraud_merchant_stats`) existed when read, so a charge
   * need not read it again before its transaction increments it.
   */
  statsExist: boolean;
}

/** Newest first, as the store lists documents: the order the matches (and so the reasons) come in. */
function newestFirst(a: FraudListItemDoc, b: FraudListItemDoc): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** A list lookup: the item key to look for and how a reason names the fact. */
interface Probe {
  kind: ListKind;
  key: string;
  fact: string;
}

/** The sandbox ranges with a country, in canonical form. */
const SANDBOX_GEO = SANDBOX_IP_COUNTRIES.map((g) => ({ cidr: parseNetwork(g.cidr)?.cidr ?? "", country: g.country }));

function probesOf(o: Observed, ipNetworks: string[]): Probe[] {
  const probes: Probe[] = [];
  const digits = o.pan ?? o.bin;
  if (digits) {
    for (let n = 6; n <= Math.min(8, digits.length); n++) {
      probes.push({ kind: "card_bin", key: matchKey("card_bin", digits.slice(0, n)), fact: "the card's BIN" });
    }
  }
  if (o.fingerprint) {
    probes.push({
      kind: "card_fingerprint",
      key: matchKey("card_fingerprint", o.fingerprint),
      fact: `the card ${o.fingerprint}`,
    });
  }
  for (const cidr of ipNetworks) {
    probes.push({ kind: "ip_address", key: matchKey("ip_address", cidr), fact: `${o.ip} (in ${cidr})` });
  }
  const email = o.email ? emailParts(o.email) : null;
  if (email) {
    probes.push({ kind: "email", key: matchKey("email", email.email), fact: email.email });
    for (const d of domainAndParents(email.domain)) {
      const fact = d === email.domain ? `the email domain ${d}` : `the email domain ${email.domain} (under ${d})`;
      probes.push({ kind: "email_domain", key: matchKey("email_domain", d), fact });
    }
  }
  for (const [whose, country] of [
    ["the customer's", o.customerCountry],
    ["the IP address's", o.ipCountry],
    ["the card's", o.cardCountry],
  ] as const) {
    if (country)
      probes.push({ kind: "country", key: matchKey("country", country), fact: `${whose} country ${country}` });
  }
  return probes;
}

/** The id of a card's fraud-dispute record (FraudCardDisputesDoc). */
export const cardDisputesId = (livemode: boolean, fingerprint: string) =>
  `${livemode ? "live" : "test"}:${fingerprint}`;

/** The id of a merchant's fraud-dispute record (FraudMerchantDisputesDoc). */
export const merchantDisputesId = (livemode: boolean, merchantId: string) =>
  `${livemode ? "live" : "test"}:${merchantId}`;

/** How many opening times a merchant's record keeps: more than the rule needs (LIMITS.merchantDisputes). */
export const MERCHANT_DISPUTES_KEPT = 20;

/**
 * Counts a `fraudulent` dispute against its card (when the charge had one) and its merchant, inside the
 * transaction that opens the dispute (domain/disputes): the card's next charges raise disputed_card, the
 * merchant's disputed_merchant once it has enough of them recently (rules.ts).
 */
export async function recordFraudDispute(
  tx: FraudTx,
  clock: Clock,
  dispute: { livemode: boolean; fingerprint: string | null; merchantId: string; disputeId: string },
): Promise<void> {
  if (dispute.fingerprint) {
    const id = cardDisputesId(dispute.livemode, dispute.fingerprint);
    const raised = await tx.update("fraud_card_disputes", id, {
      inc: { count: 1 },
      set: { last_dispute_id: dispute.disputeId },
    });
    if (!raised) {
      await tx.insert("fraud_card_disputes", {
        id,
        livemode: dispute.livemode,
        created_at: clock.createdAt(dispute.livemode),
        count: 1,
        last_dispute_id: dispute.disputeId,
      });
    }
  }
  const id = merchantDisputesId(dispute.livemode, dispute.merchantId);
  const at = iso(clock.now(dispute.livemode));
  const current = await tx.get("fraud_merchant_disputes", id);
  if (!current) {
    await tx.insert("fraud_merchant_disputes", {
      id,
      livemode: dispute.livemode,
      created_at: clock.createdAt(dispute.livemode),
      opened: [at],
      last_dispute_id: dispute.disputeId,
    });
    return;
  }
  // Conditional on the list read: another dispute's opening in between makes this transaction fail and
  // retry, rather than lose one of the two.
  const opened = [...current.opened, at].slice(-MERCHANT_DISPUTES_KEPT);
  const written = await tx.update(
    "fraud_merchant_disputes",
    id,
    { set: { opened, last_dispute_id: dispute.disputeId } },
    { last_dispute_id: current.last_dispute_id },
  );
  if (!written) throw new Error(`fraud_merchant_disputes ${id} changed during the dispute's opening`);
}

/** How many of `opened` fall in the disputed_merchant window ending at `at`. */
export function recentDisputes(opened: readonly string[], at: Date): number {
  const since = iso(new Date(at.getTime() - LIMITS.merchantDisputeDays * 86_400_000));
  const now = iso(at);
  return opened.filter((t) => t >= since && t <= now).length;
}

export function createFactGatherer(store: FraudStore, counters: Counters): FactGatherer {
  return {
    /**
     * The facts of one transaction. `count`: the attempt is counted in the velocity counters first
     * (charges); otherwise the counts are only read (evaluations through the API).
     */
    async gather(observed: Observed, at: Date, count: boolean): Promise<Gathered> {
      const sandbox = !observed.livemode;
      const ipNetworks = observed.ip ? networksOf(observed.ip) : [];
      const o: Observed = { ...observed };
      if (sandbox && ipNetworks.length > 0 && !o.ipCountry) {
        o.ipCountry = SANDBOX_GEO.find((g) => ipNetworks.includes(g.cidr))?.country;
      }
      if (sandbox && o.pan && !o.cardCountry) o.cardCountry = SANDBOX_CARD_COUNTRIES[o.pan];

      const exponent = currencyExponent(o.currency) ?? 2;
      const small = o.amount <= smallAmountLimit(exponent);
      const buckets: string[] = [];
      const window = async (kind: "card" | "ip", value: string | undefined): Promise<WindowCounts | undefined> => {
        if (!value) return undefined;
        if (!count) return counters.read(o.livemode, kind, value, at);
        const { counts, bucketId } = await counters.count(o.livemode, kind, value, small, at);
        buckets.push(bucketId);
        return counts;
      };

      const probes = probesOf(o, ipNetworks);
      const keys = [...new Set(probes.map((p) => p.key))];
      const [items, card, ip, stats, disputed, merchantDisputes] = await Promise.all([
        keys.length > 0
          ? // Ordered by match_key, the index's own order: ordered by creation, SQLite would walk every
            // item of the environment in that order instead of seeking the few keys (a 10,000-item
            // list made each evaluation tens of milliseconds). Sorted newest first here.
            store
              .findAll("fraud_list_items", { livemode: o.livemode, match_key: { $in: keys } }, 1000, {
                by: "match_key",
                direction: "asc",
              })
              .then((found) => found.sort(newestFirst))
          : Promise.resolve([]),
        window("card", o.fingerprint),
        // The address's own network (/32 or /128) names it canonically: `::ffff:1.2.3.4` is `1.2.3.4`.
        window("ip", ipNetworks[0]),
        o.merchantId ? store.get("fraud_merchant_stats", `${o.merchantId}:${o.currency}`) : Promise.resolve(null),
        o.fingerprint
          ? store.get("fraud_card_disputes", cardDisputesId(o.livemode, o.fingerprint))
          : Promise.resolve(null),
        o.merchantId
          ? store.get("fraud_merchant_disputes", merchantDisputesId(o.livemode, o.merchantId))
          : Promise.resolve(null),
      ]);

      const factsOf = (key: string) =>
        probes
          .filter((p) => p.key === key)
          .map((p) => p.fact)
          .filter((f, i, all) => all.indexOf(f) === i)
          .join(" and ");
      const matches: ListMatch[] = [];
      const seen = new Set<string>();
      for (const item of items) {
        // The card's BIN may match one list at several lengths: one match per list and kind is enough.
        const once = `${item.list_id}|${item.kind}`;
        if (seen.has(once)) continue;
        seen.add(once);
        matches.push({
          kind: item.kind,
          action: item.action,
          listId: item.list_id,
          listName: item.list_name,
          fact: factsOf(item.match_key),
        });
      }
      if (sandbox) {
        const probed = new Set(keys);
        for (const builtIn of SANDBOX_LISTS) {
          const key = matchKey(builtIn.kind, builtIn.value);
          if (!probed.has(key)) continue;
          matches.push({
            kind: builtIn.kind,
            action: builtIn.action,
            listId: null,
            listName: builtIn.name,
            fact: factsOf(key),
          });
        }
      }

      const facts: Facts = {
        amount: o.amount,
        currency: o.currency,
        small,
        matches,
        card,
        ip,
        history: stats && stats.count > 0 ? { count: stats.count, sum: stats.sum } : undefined,
        customerCountry: o.customerCountry,
        ipCountry: o.ipCountry,
        cardCountry: o.cardCountry,
        cardDisputes: disputed ? { count: disputed.count, lastDisputeId: disputed.last_dispute_id } : undefined,
        merchantDisputes: merchantDisputes
          ? { recent: recentDisputes(merchantDisputes.opened, at), lastDisputeId: merchantDisputes.last_dispute_id }
          : undefined,
        elevatedRiskTestCard: sandbox && o.pan === ELEVATED_RISK_TEST_CARD,
      };
      return { facts, buckets, statsExist: stats !== null };
    },
  };
}

/** The store-backed facts the fraud rules read. */
export interface FactGatherer {
  /**
   * The facts of one transaction. `count`: the attempt is counted in the velocity counters first
   * (charges); otherwise the counts are only read (evaluations through the API).
   */
  gather(observed: Observed, at: Date, count: boolean): Promise<Gathered>;
}
