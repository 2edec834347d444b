import type { Destination } from "./destinations.ts";
import type { CashoutFailureCode } from "./records.ts";

// The payout port stands for the banks and payment schemes that move a cashout's money (Cashout in
// spec/resources/cashouts.tsp), as the Processor port stands for the acquirer. The shipped adapter is a
// deterministic simulator (adapters/payout-rail-simulator.ts): no money leaves this server. In
// production too, until a real payout adapter exists.

/** Why a rail cannot pay a destination: the create request's field at fault and the reason, in words. */
export interface PayoutRefusal {
  param: string;
  reason: string;
}

export interface PayoutRequest {
  /**
   * `<cashout id>:payout`, the same on every attempt (as the acquirer port's keys, charges/processor.ts
   * acquirerKey): a rail that takes idempotency keys applies a payout sent twice once.
   */
  idempotencyKey: string;
  cashoutId: string;
  /** The merchant being paid out (Adyen's `shopperReference`: one per account holder). */
  merchantId: string;
  livemode: boolean;
  amount: number;
  currency: string;
  destination: Destination;
}

export type PayoutOutcome =
  | { status: "in_transit" }
  | { status: "paid" }
  | { status: "failed"; failureCode: CashoutFailureCode; failureMessage: string };

/**
 * The rail refused the payout request itself (Adyen: a 4xx answer to the submission, or to its
 * confirmation after which the submission was declined): nothing was paid and sending it again will not
 * help, so the cashout fails (`could_not_process`) with its amount back in `available` (payouts.ts
 * sendOrFail). A call whose outcome is unknown (time-out, 5xx) is never this: it is thrown as any other
 * error and the payout job sends it again under the same idempotency keys.
 */
export class PayoutRefused extends Error {
  /** What the merchant is shown (the cashout's `failure_message`): ours, never the rail's raw text. */
  readonly failureMessage: string;
  constructor(message: string, failureMessage: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PayoutRefused";
    this.failureMessage = failureMessage;
  }
}

/** The payout's idempotency key: derived from the cashout, never fresh per attempt. */
export const payoutKey = (cashoutId: string) => `${cashoutId}:payout`;

export interface PayoutRail {
  /**
   * Hands a payout to the rail. Idempotent per cashout id: sending the same cashout again (after a crash
   * between the store's claim and this call) returns the same reference and moves no more money.
   * Throws PayoutRefused when the rail refused the request and nothing was paid.
   */
  send(request: PayoutRequest): Promise<{ reference: string }>;
  /** What became of a payout sent earlier. */
  outcome(request: PayoutRequest & { reference: string }): Promise<PayoutOutcome>;
  /**
   * Why this rail cannot pay `destination` in that environment (a destination type its payout API does
   * not cover, or a field it requires that the destination lacks), naming the request's field at fault,
   * or null: such a cashout is refused when it is created (400), never sent or simulated.
   */
  refuses?(livemode: boolean, destination: Destination): PayoutRefusal | null;
}

/** Why each failure code happens, in words a merchant may see. */
export const FAILURE_MESSAGES: Record<CashoutFailureCode, string> = {
  account_closed: "The destination account is closed.",
  no_account: "No account matches the destination.",
  declined: "The destination's bank declined the transfer.",
  could_not_process: "The transfer could not be processed.",
};
