import { createHash } from "node:crypto";
import { accountOf, type Destination } from "../domain/cashouts/destinations.ts";
import { FAILURE_MESSAGES, type PayoutRail } from "../domain/cashouts/payout-rail.ts";
import type { CashoutFailureCode } from "../domain/cashouts/records.ts";

// The shipped payout rail (the port in domain/cashouts/payout-rail.ts): a deterministic simulator. No
// money leaves this server; the magic destinations below fail, every other is paid.

/**
 * The simulator's magic destinations (docs/cashouts.md "Sandbox helpers and magic destinations"): each
 * always fails with its code, in the sandbox and in production alike. Every one passes its kind's
 * validation, so it gets as far as a real account would. Any other destination is paid.
 */
export const FAILING_DESTINATIONS: Readonly<Record<string, CashoutFailureCode>> = {
  "iban:DE41370400440000000001": "account_closed",
  "iban:DE14370400440000000002": "no_account",
  "us_bank_account:000111111113": "account_closed",
  "us_bank_account:000111111116": "no_account",
  "pix:account.closed@example.com": "account_closed",
  "pix:no.account@example.com": "no_account",
  "clabe:002010000000000014": "account_closed",
  "clabe:002010000000000027": "no_account",
};

/** The failure the simulator gives a destination, or undefined when it pays it. */
export function simulatedFailure(destination: Destination): CashoutFailureCode | undefined {
  return FAILING_DESTINATIONS[`${destination.type}:${accountOf(destination)}`];
}

/** A deterministic simulator: the outcome depends only on the destination, never on chance or memory. */
export function createSimulatorPayoutRail(): PayoutRail {
  return {
    async send(request) {
      const digest = createHash("sha256").update(request.cashoutId).digest("hex").slice(0, 16);
      return { reference: `sim_po_${digest}` };
    },
    async outcome(request) {
      const failureCode = simulatedFailure(request.destination);
      if (failureCode === undefined) return { status: "paid" };
      return { status: "failed", failureCode, failureMessage: FAILURE_MESSAGES[failureCode] };
    },
  };
}
