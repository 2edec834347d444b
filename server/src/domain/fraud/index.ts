import type { AppStore } from "../collections.ts";
import type { Now } from "../kernel/caller.ts";
import type { DomainLog } from "../kernel/log.ts";
import type { MoneyRules } from "../kernel/money.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { Tokens } from "../vault/tokens.ts";
import { createCounters } from "./counters.ts";
import { createFraudEvaluations } from "./evaluations.ts";
import { createFactGatherer } from "./facts.ts";
import { createFraudLists } from "./lists.ts";
import { createFraudSettings } from "./settings.ts";

// Fraud evaluation (spec: the Fraud operations and FraudEvaluation), wired to one store: the pure
// rules and engine (rules.ts, engine.ts), the store-backed facts they read (facts.ts: lists,
// counters, history, settings), the evaluations and the screen charges use (evaluations.ts).

export type { ChargeAssessment, ChargeAttempt, FraudScreen } from "./port.ts";

export function createFraud(deps: {
  store: AppStore;
  now: Now;
  tokens: Tokens;
  merchants: Merchants;
  money: MoneyRules;
  log: DomainLog;
}) {
  const { store, now } = deps;
  const counters = createCounters(store);
  const settings = createFraudSettings(store, now);
  const lists = createFraudLists(store, now);
  const evaluations = createFraudEvaluations({
    ...deps,
    settings,
    counters,
    gatherer: createFactGatherer(store, counters),
  });
  return {
    settings,
    lists,
    evaluations,
    screen: evaluations.screen,
    /** Deletes velocity buckets that have left every window (housekeeping). */
    sweepCounters: () => counters.sweep(now()),
  };
}

export type Fraud = ReturnType<typeof createFraud>;
