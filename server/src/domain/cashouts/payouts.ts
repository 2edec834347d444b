import { createHash } from "node:crypto";
import type { CashoutFailureCode } from "../records.ts";
import { accountOf, type Destination } from "./destinations.ts";

// The payout port stands for the banks and payment schemes that move a cashout's money (Cashout in spec/resources/cashouts.tsp), as
// the Processor port stands for the acquirer. The shipped adapter is a deterministic simulator: no
// money leaves this server. In production too, until a real payout adapter exists.

export interface PayoutRequest {
  cashoutId: string;
  livemode: boolean;
  amount: number;
  currency: string;
  destination: Destination;
}

export type PayoutOutcome =
  | { status: "in_transit" }
  | { status: "paid" }
  | { status: "failed"; failureCode: CashoutFailureCode; failureMessage: string };

export interface PayoutRail {
  /**
   * Hands a payout to the rail. Idempotent per cashout id: sending the same cashout again (after a crash
   * between the store's claim and this call) returns the same reference and moves no more money.
   */
  send(request: PayoutRequest): Promise<{ reference: string }>;
  /** What became of a payout sent earlier. */
  outcome(request: PayoutRequest & { reference: string }): Promise<PayoutOutcome>;
}

/** Why each failure code happens, in words a merchant may see. */
export const FAILURE_MESSAGES: Record<CashoutFailureCode, string> = {
  account_closed: "The destination account is closed.",
  no_account: "No account matches the destination.",
  declined: "The destination's bank declined the transfer.",
  could_not_process: "The transfer could not be processed.",
};

/**
 * The simulator's magic destinations (docs/cashouts.md "Sandbox helpers and magic destinations"): each always fails with its code,
 * in the sandbox and in production alike. Every one passes its kind's validation, so it gets as far as a
 * real account would. Any other destination is paid.
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
