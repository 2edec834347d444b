import type { Charges } from "../charges/charges.ts";
import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import type { MoneyRules } from "../kernel/money.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { SandboxClock } from "../sandbox-clock/sandbox-clock.ts";
import type { Tokens } from "../vault/tokens.ts";
import { fraudHandlers } from "./handlers.ts";
import { createFraud, type Fraud } from "./index.ts";
import { fraudCollections } from "./records.ts";

// Fraud screening (spec/resources/fraud.tsp), as the list of areas sees it (domain/areas.ts).

type Needs = {
  merchants: Merchants;
  tokens: Tokens;
  charges: Pick<Charges, "load">;
  sandboxClock: Pick<SandboxClock, "refresh">;
};

export const fraudArea = {
  name: "fraud",
  collections: fraudCollections,
  idPrefixes: ["fe", "fl", "fli"],
  machines: [],
  make: ({
    store,
    clock,
    log,
    needs,
    deps,
  }: AreaContext<typeof fraudCollections, Needs, { money: MoneyRules }>): { fraud: Fraud } => ({
    fraud: createFraud({
      store,
      clock,
      tokens: needs.tokens,
      merchants: needs.merchants,
      money: deps.money,
      log,
      // Fraud is made before charges (every charge passes its screen): the lookup runs once a request comes.
      charges: { load: (livemode, id, param) => needs.charges.load(livemode, id, param) },
    }),
  }),
  handlers: fraudHandlers,
  jobs: ({ needs }: AreaContext<unknown, Needs>, { fraud }: { fraud: Fraud }) => ({
    /** Forgets velocity counts that have left every window. */
    sweepFraudCounters: async () => {
      await needs.sandboxClock.refresh();
      return fraud.sweepCounters();
    },
  }),
} as const satisfies AreaDeclaration;
