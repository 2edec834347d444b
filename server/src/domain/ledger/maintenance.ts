import type { Clock } from "../kernel/clock.ts";
import type { LedgerStore } from "./records.ts";
import { type PaidCashouts, upgradeLedger } from "./upgrade.ts";
import { type LedgerAuditStore, type LedgerReport, verifyLedger } from "./verify.ts";

/** The ledger's upkeep as the server and the admin CLI run it (domain/index.ts `ledger`). */
export interface LedgerMaintenance {
  /** Brings a database written before double entry up to date (upgrade.ts); run at open. */
  upgrade(): Promise<number>;
  /** Adds everything up again and reports every difference (`npm run admin -- ledger verify`). */
  verify(): Promise<LedgerReport>;
}

export function ledgerMaintenance(
  store: LedgerStore & LedgerAuditStore,
  clock: Clock,
  cashouts: PaidCashouts,
): LedgerMaintenance {
  return { upgrade: () => upgradeLedger(store, clock, cashouts), verify: () => verifyLedger(store) };
}
