import type { components } from "@payments/contract/types";
import { DuplicateKeyError, type Page, type PageResult } from "../../store/port.ts";
import type { ChargeAssessment, ChargeAttempt, FraudScreen } from "../charges/fraud-screen.ts";
import type { ChargeDoc } from "../charges/records.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import type { DomainLog } from "../kernel/log.ts";
import { assertMoney, type MoneyRules } from "../kernel/money.ts";
import type { QueryParams } from "../kernel/operations.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { Tokens } from "../vault/tokens.ts";
import type { Counters } from "./counters.ts";
import { evaluate } from "./engine.ts";
import type { FactGatherer, Observed } from "./facts.ts";
import { assertIp } from "./ip.ts";
import type { FraudEvaluationDoc, FraudStore, FraudTx } from "./records.ts";
import type { FraudSettingsService } from "./settings.ts";

// Fraud evaluations (spec: FraudEvaluation; POST/GET /v1/fraud/evaluations) and the screen charges use
// (charges/fraud-screen.ts, the port charges declare). Every evaluation is stored and emits `fraud.evaluated` with exactly the fields
// FraudEvaluatedEvent fixes, in one transaction: the charge's own for a charge, its own for one made
// through the API.

/** createFraudEvaluation's body (the contract's FraudEvaluationCreate). */
export type FraudEvaluationCreate = components["schemas"]["FraudEvaluationCreate"];

/** The `fraud.evaluated` payload: exactly FraudEvaluatedEvent's fields (recordEvent adds the envelope). */
function eventPayload(e: FraudEvaluationDoc) {
  return { tx_id: e.tx_id, score: e.score, decision: e.decision, signals: e.signals };
}

async function persist(tx: FraudTx, clock: Clock, evaluation: FraudEvaluationDoc): Promise<void> {
  await tx.insert("fraud_evaluations", evaluation);
  await recordEvent(tx, clock, evaluation.livemode, "fraud.evaluated", eventPayload(evaluation));
}

export interface FraudEvaluationsDeps {
  store: FraudStore;
  log: DomainLog;
  clock: Clock;
  tokens: Tokens;
  merchants: Merchants;
  money: MoneyRules;
  settings: FraudSettingsService;
  gatherer: FactGatherer;
  counters: Counters;
  /** The charges area's charge lookup (evaluating a stored charge by `tx_id`): ChargeLookup. */
  charges: ChargeLookup;
}

/** What fraud needs of the charges area (this area declares the port; charges' service implements it). */
export interface ChargeLookup {
  /** The charge `id` of the environment, or a 404 naming `param`. */
  load(livemode: boolean, id: string, param?: string): Promise<ChargeDoc>;
}

export function createFraudEvaluations(deps: FraudEvaluationsDeps): FraudEvaluations {
  const { clock, settings, gatherer, counters } = deps;

  /** Runs the rules on the observed facts and builds the (unstored) evaluation. */
  async function run(
    observed: Observed,
    ids: { txId: string; source: FraudEvaluationDoc["source"] },
    count: boolean,
  ): Promise<{ evaluation: FraudEvaluationDoc; buckets: string[]; statsExist: boolean; reviewWindowSeconds: number }> {
    const at = clock.now(observed.livemode);
    const [config, gathered] = await Promise.all([
      settings.load(observed.livemode),
      gatherer.gather(observed, at, count),
    ]);
    const thresholds = {
      review: config.reviewThreshold,
      block: config.blockThreshold,
      request3ds: config.request3dsThreshold,
    };
    const outcome = evaluate(gathered.facts, thresholds);
    return {
      evaluation: {
        id: newId("fe"),
        livemode: observed.livemode,
        created_at: clock.createdAt(observed.livemode),
        tx_id: ids.txId,
        source: ids.source,
        merchant_id: observed.merchantId,
        amount: observed.amount,
        currency: observed.currency,
        score: outcome.score,
        decision: outcome.decision,
        signals: outcome.signals,
        rules: outcome.rules,
        thresholds,
      },
      buckets: gathered.buckets,
      statsExist: gathered.statsExist,
      reviewWindowSeconds: config.reviewWindowSeconds,
    };
  }

  /** The facts of an existing charge: its card's BIN is read from the vault while the token exists. */
  async function observedCharge(charge: ChargeDoc): Promise<Observed> {
    let pan: string | undefined;
    if (charge.payment_method.token) {
      try {
        pan = (await deps.tokens.pan(charge.livemode, charge.payment_method.token)).pan;
      } catch (err) {
        // A deleted token: the card's BIN is gone with it; the fingerprint on the charge remains.
        if (!(err instanceof DomainError && err.code === "not_found")) throw err;
      }
    }
    return {
      livemode: charge.livemode,
      merchantId: charge.merchant_id,
      amount: charge.amount,
      currency: charge.currency,
      pan,
      fingerprint: charge.payment_method.fingerprint,
      email: charge.customer?.email,
      ip: charge.customer?.ip,
      customerCountry: charge.customer?.country,
    };
  }

  /** The facts of a prospective transaction, checked field by field (400s and 404s name the field). */
  async function observedFacts(caller: Caller, input: FraudEvaluationCreate): Promise<Observed> {
    if (input.amount === undefined) throw invalid("amount", "is required unless tx_id is sent");
    if (input.currency === undefined) throw invalid("currency", "is required unless tx_id is sent");
    assertMoney(input.amount, input.currency, deps.money);
    const card = input.card ?? {};
    if (card.token !== undefined) {
      for (const field of ["bin", "fingerprint"] as const) {
        if (card[field] !== undefined)
          throw invalid(`card.${field}`, "send either card.token or what is known of the card, not both");
      }
    }
    assertIp(input.customer?.ip, "customer.ip");
    if (input.merchant_id !== undefined) await deps.merchants.load(caller.livemode, input.merchant_id, "merchant_id");
    let pan: string | undefined;
    let fingerprint = card.fingerprint;
    if (card.token !== undefined) {
      const found = await deps.tokens.pan(caller.livemode, card.token, "card.token");
      pan = found.pan;
      fingerprint = found.token.fingerprint;
    }
    return {
      livemode: caller.livemode,
      merchantId: input.merchant_id ?? null,
      amount: input.amount,
      currency: input.currency,
      pan,
      bin: card.bin,
      fingerprint,
      cardCountry: card.country,
      email: input.customer?.email,
      ip: input.customer?.ip,
      customerCountry: input.customer?.country,
      ipCountry: input.customer?.ip_country,
    };
  }

  async function load(livemode: boolean, id: string): Promise<FraudEvaluationDoc> {
    return inEnvironment(await deps.store.get("fraud_evaluations", id), livemode, "fraud evaluation", id);
  }

  const screen: FraudScreen = {
    async assessCharge(attempt: ChargeAttempt): Promise<ChargeAssessment> {
      const { evaluation, buckets, statsExist, reviewWindowSeconds } = await run(
        {
          livemode: attempt.livemode,
          merchantId: attempt.merchantId,
          amount: attempt.amount,
          currency: attempt.currency,
          pan: attempt.card?.pan,
          fingerprint: attempt.card?.fingerprint,
          email: attempt.customer?.email,
          ip: attempt.customer?.ip,
          customerCountry: attempt.customer?.country,
        },
        { txId: attempt.chargeId, source: "charge" },
        true,
      );
      const statsId = `${attempt.merchantId}:${attempt.currency}`;
      // The history document must exist before the charge's transaction increments it; gathering the
      // facts has just read it (merchant history), so it is made only when that read found none.
      if (evaluation.decision !== "block" && !statsExist) await ensureStats(attempt.livemode, statsId);
      return {
        evaluationId: evaluation.id,
        decision: evaluation.decision,
        score: evaluation.score,
        signals: evaluation.signals,
        reviewWindowSeconds,
        async record(tx, charge) {
          await persist(tx, clock, evaluation);
          if (charge.status === "declined") {
            for (const bucket of buckets) await counters.decline(tx, bucket);
          } else if (charge.status !== "blocked") {
            // An accepted charge joins the merchant's history (amount_anomaly) once its transaction has
            // committed, outside it: in it, every charge of one merchant would write the same document,
            // and on MongoDB a burst of them would turn into write conflicts retried until they fail
            // (docs/operating.md "Running on MongoDB"). One document's increment is atomic on its own; a
            // crash between the commit and it leaves the history a charge short, which a heuristic of
            // averages tolerates, and the charge and its money never depend on it.
            tx.afterCommit(() => {
              deps.store
                .update("fraud_merchant_stats", statsId, { inc: { count: 1, sum: charge.amount } })
                .catch((err: unknown) =>
                  deps.log.warn({ err, stats: statsId }, "could not add a charge to the merchant's history"),
                );
            });
          }
        },
      };
    },
  };

  /**
   * Makes the merchant's history document exist before the charge's transaction increments it (the
   * caller has just found none; another instance may have made it since: the duplicate is fine).
   */
  async function ensureStats(livemode: boolean, id: string): Promise<void> {
    try {
      await deps.store.insert("fraud_merchant_stats", {
        id,
        livemode,
        created_at: clock.createdAt(livemode),
        count: 0,
        sum: 0,
      });
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
    }
  }

  return {
    screen,

    /**
     * POST /v1/fraud/evaluations: `tx_id` alone re-evaluates an existing charge without changing it;
     * otherwise the facts describe a prospective transaction, which gets a `tx_id` of its own. Counts
     * are read, never added to: an evaluation is a question, not an attempt.
     */
    async create(caller: Caller, input: FraudEvaluationCreate): Promise<FraudEvaluationDoc> {
      let observed: Observed;
      let ids: { txId: string; source: FraudEvaluationDoc["source"] };
      if (input.tx_id !== undefined) {
        const extra = (["merchant_id", "amount", "currency", "card", "customer"] as const).find(
          (field) => input[field] !== undefined,
        );
        if (extra) throw invalid(extra, "send either tx_id alone or the facts of a transaction, not both");
        const charge = await deps.charges.load(caller.livemode, input.tx_id, "tx_id");
        observed = await observedCharge(charge);
        ids = { txId: charge.id, source: "transaction" };
      } else {
        observed = await observedFacts(caller, input);
        ids = { txId: newId("tx"), source: "facts" };
      }
      const { evaluation } = await run(observed, ids, false);
      return commit(deps.store, caller, async (tx) => {
        await persist(tx, clock, evaluation);
        return evaluation;
      });
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    list: (
      caller: Caller,
      filter: Pick<QueryParams<"listFraudEvaluations">, "tx_id" | "decision">,
      page: Page,
    ): Promise<PageResult<FraudEvaluationDoc>> =>
      deps.store.list(
        "fraud_evaluations",
        {
          livemode: caller.livemode,
          ...(filter.tx_id ? { tx_id: filter.tx_id } : {}),
          ...(filter.decision ? { decision: filter.decision } : {}),
        },
        page,
      ),
  };
}

/** Fraud evaluations (spec: FraudEvaluation) and the screen charges call (charges/fraud-screen.ts). */
export interface FraudEvaluations {
  screen: FraudScreen;
  /**
   * POST /v1/fraud/evaluations: `tx_id` alone re-evaluates an existing charge without changing it;
   * otherwise the facts describe a prospective transaction, which gets a `tx_id` of its own. Counts
   * are read, never added to: an evaluation is a question, not an attempt.
   */
  create(caller: Caller, input: FraudEvaluationCreate): Promise<FraudEvaluationDoc>;
  get: (caller: Caller, id: string) => Promise<FraudEvaluationDoc>;
  list: (
    caller: Caller,
    filter: Pick<QueryParams<"listFraudEvaluations">, "tx_id" | "decision">,
    page: Page,
  ) => Promise<PageResult<FraudEvaluationDoc>>;
}
