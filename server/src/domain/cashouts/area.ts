import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import { inBothEnvironments } from "../kernel/area.ts";
import type { MoneyRules } from "../kernel/money.ts";
import type { SettingsOf } from "../kernel/settings.ts";
import type { Balances } from "../ledger/balances.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { SandboxClock } from "../sandbox-clock/sandbox-clock.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { type Cashouts, createCashouts } from "./cashouts.ts";
import { cashoutHandlers } from "./handlers.ts";
import type { PayoutRail } from "./payout-rail.ts";
import { cashoutCollections } from "./records.ts";
import { CASHOUT_MACHINE } from "./state.ts";

// Cashouts (spec/resources/cashouts.tsp), as the list of areas sees them (domain/areas.ts).

type Needs = { merchants: Merchants; balances: Pick<Balances, "held">; sandboxClock: Pick<SandboxClock, "refresh"> };
type Deps = {
  money: MoneyRules;
  vaultKeys: VaultKeys;
  /** The payout rail cashouts are sent through (adapters/payout-rail-simulator.ts). */
  payoutRail: PayoutRail;
  settings: SettingsOf<"cashouts">;
};
type Context = AreaContext<typeof cashoutCollections, Needs, Deps>;

export const cashoutsArea = {
  name: "cashouts",
  collections: cashoutCollections,
  idPrefixes: ["co"],
  machines: [CASHOUT_MACHINE],
  make: ({ store, clock, needs, deps }: Context): { cashouts: Cashouts } => ({
    cashouts: createCashouts({
      store,
      clock,
      merchants: needs.merchants,
      balances: needs.balances,
      money: deps.money,
      vaultKeys: deps.vaultKeys,
      rail: deps.payoutRail,
      pendingSeconds: deps.settings.cashouts.pendingSeconds,
      transitSeconds: deps.settings.cashouts.transitSeconds,
    }),
  }),
  handlers: cashoutHandlers,
  jobs: ({ needs }: Context, { cashouts }: { cashouts: Cashouts }) => ({
    /** Sends pending cashouts whose time has come, and records the outcome of those in transit. */
    payouts: () =>
      inBothEnvironments(needs.sandboxClock.refresh, async (livemode) => {
        const { sent, finished } = await cashouts.advance(livemode);
        return sent + finished;
      }),
  }),
} as const satisfies AreaDeclaration;
