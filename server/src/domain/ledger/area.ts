import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import { inBothEnvironments } from "../kernel/area.ts";
import type { SettingsOf } from "../kernel/settings.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { SandboxClock } from "../sandbox-clock/sandbox-clock.ts";
import { type BalanceTransactions, createBalanceTransactions } from "./balance-transactions.ts";
import { type Balances, createBalances } from "./balances.ts";
import { createFeeSchedules, type FeeSchedules } from "./fee-schedules.ts";
import { ledgerHandlers } from "./handlers.ts";
import { settleDue } from "./ledger.ts";
import { type LedgerMaintenance, ledgerMaintenance } from "./maintenance.ts";
import { ledgerCollections } from "./records.ts";
import type { PaidCashouts } from "./upgrade.ts";

// The ledger (spec/resources/balances.tsp, balance-transactions.tsp, fee-schedules.tsp): balances, balance
// transactions, fee schedules and the ledger's upkeep, as the list of areas sees it (domain/areas.ts).

type Needs = { merchants: Merchants; cashouts: PaidCashouts; sandboxClock: Pick<SandboxClock, "refresh"> };
type Deps = { settings: SettingsOf<"ledger"> };

export interface LedgerServices {
  balances: Balances;
  balanceTransactions: BalanceTransactions;
  feeSchedules: FeeSchedules;
  /** The ledger's upgrade and audit, run by the admin CLI and at start-up (maintenance.ts). */
  ledger: LedgerMaintenance;
}

type Context = AreaContext<typeof ledgerCollections, Needs, Deps>;

export const ledgerArea = {
  name: "ledger",
  collections: ledgerCollections,
  idPrefixes: ["le", "txn"],
  machines: [],
  make: ({ store, clock, needs, deps }: Context): LedgerServices => ({
    balances: createBalances(store, needs.merchants),
    balanceTransactions: createBalanceTransactions(store),
    feeSchedules: createFeeSchedules(store, clock, needs.merchants, deps.settings.ledger.fees),
    // Cashouts are made after the ledger (they ask its balances): the upgrade reads them once it runs.
    ledger: ledgerMaintenance(store, clock, { listPaid: (page) => needs.cashouts.listPaid(page) }),
  }),
  handlers: ledgerHandlers,
  jobs: ({ store, clock, needs }: Context) => ({
    /** Moves pending credits whose settlement time has come to available. */
    settle: () => inBothEnvironments(needs.sandboxClock.refresh, (livemode) => settleDue(store, clock, livemode)),
  }),
} as const satisfies AreaDeclaration;
