import type { FraudScreen } from "../charges/fraud-screen.ts";
import type { Clock } from "../kernel/clock.ts";
import type { DomainLog } from "../kernel/log.ts";
import type { MoneyRules } from "../kernel/money.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { Tokens } from "../vault/tokens.ts";
import { createCounters } from "./counters.ts";
import type { FraudEvaluations } from "./evaluations.ts";
import { type ChargeLookup, createFraudEvaluations } from "./evaluations.ts";
import { createFactGatherer } from "./facts.ts";
import type { FraudLists } from "./lists.ts";
import { createFraudLists } from "./lists.ts";
import type { FraudStore } from "./records.ts";
import type { FraudSettingsService } from "./settings.ts";
import { createFraudSettings } from "./settings.ts";

// Fraud evaluation (spec: the Fraud operations and FraudEvaluation), wired to one store: the pure
// rules and engine (rules.ts, engine.ts), the store-backed facts they read (facts.ts: lists,
// counters, history, settings), the evaluations and the screen charges use (evaluations.ts).

export type { ChargeAssessment, ChargeAttempt, FraudScreen } from "../charges/fraud-screen.ts";

export function createFraud(deps: {
  store: FraudStore;
  clock: Clock;
  tokens: Tokens;
  merchants: Merchants;
  money: MoneyRules;
  log: DomainLog;
  charges: ChargeLookup;
}): Fraud {
  const { store, clock } = deps;
  const counters = createCounters(store);
  const settings = createFraudSettings(store, clock);
  const lists = createFraudLists(store, clock);
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
    /** Deletes velocity buckets that have left every window (housekeeping), each on its environment's clock. */
    sweepCounters: async () =>
      (await counters.sweep(true, clock.now(true))) + (await counters.sweep(false, clock.now(false))),
  };
}

/** The fraud area's service (spec: the Fraud operations): settings, lists, evaluations, and the screen charges call. */
export interface Fraud {
  settings: FraudSettingsService;
  lists: FraudLists;
  evaluations: FraudEvaluations;
  screen: FraudScreen;
  /** Deletes velocity buckets that have left every window (housekeeping), each on its environment's clock. */
  sweepCounters: () => Promise<number>;
}
