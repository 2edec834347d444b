import { DuplicateKeyError } from "../../store/port.ts";
import type { Clock } from "../kernel/clock.ts";
import { iso } from "../kernel/time.ts";
import { type MerchantBucket, merchantAccount, platformAccount } from "./accounts.ts";
import { balanceId, type Line, postPosting } from "./postings.ts";
import type { LedgerStore, LedgerTx } from "./records.ts";

// Every money movement the platform makes, as a posting (postings.ts) across the accounts of accounts.ts,
// written in the same transaction as the state change that caused it. One function per movement: the
// accounting of each lives here once, and the use cases (charges/, cashouts/) call it.

export { balanceId };

const CLEARING = platformAccount("acquirer:clearing");
const FEE_REVENUE = platformAccount("platform:fee_revenue");
const IN_TRANSIT = platformAccount("cashouts:in_transit");
const PAID_OUT = platformAccount("cashouts:paid_out");

/**
 * Creates the merchant's balance in `currency` if it does not exist yet. Done outside the money
 * transaction: a duplicate-key failure inside a MongoDB transaction would abort it, while here the
 * loser of a race simply finds the winner's document.
 */
export async function ensureBalance(
  store: LedgerStore,
  livemode: boolean,
  merchantId: string,
  currency: string,
  clock: Clock,
) {
  const id = balanceId(merchantId, currency);
  if (await store.get("balances", id)) return;
  const at = clock.createdAt(livemode);
  try {
    await store.insert("balances", {
      id,
      livemode,
      created_at: at,
      updated_at: at,
      merchant_id: merchantId,
      currency,
      available: 0,
      pending: 0,
    });
  } catch (err) {
    if (!(err instanceof DuplicateKeyError)) throw err;
  }
}

/** The money side of one merchant's object: its environment, merchant and currency. */
interface Owner {
  livemode: boolean;
  merchantId: string;
  currency: string;
}

/**
 * A capture (captureCharge, a local payment completed, a charge captured at creation or on review): the
 * acquirer owes the platform the captured amount; the merchant is credited it less the platform's fee,
 * in `pending` until `availableOn` (or in `available` at once when that is null); the fee is revenue.
 */
export function postCapture(
  tx: LedgerTx,
  clock: Clock,
  capture: Owner & { chargeId: string; amount: number; fee: number; availableOn: string | null },
) {
  const net = capture.amount - capture.fee;
  const bucket = capture.availableOn === null ? "available" : "pending";
  const lines: Line[] = [{ account: CLEARING, amount: -capture.amount }];
  if (net !== 0) {
    lines.push({ account: merchantAccount(capture.merchantId, bucket), amount: net, availableOn: capture.availableOn });
  }
  if (capture.fee !== 0) lines.push({ account: FEE_REVENUE, amount: capture.fee });
  return postPosting(tx, clock, {
    livemode: capture.livemode,
    currency: capture.currency,
    type: "capture",
    sourceId: capture.chargeId,
    lines,
    fee: capture.fee,
  });
}

/**
 * A capture the acquirer reports failed after it was recorded (Adyen's CAPTURE_FAILED, or a CAPTURE
 * refused: charges/acquirer-outcomes.ts): the capture's posting is undone. The acquirer owes nothing for
 * it (`acquirer:clearing` debited back), the fee is not earned, and the merchant's credit is taken back,
 * first from what is still unsettled in `pending`, then from `available`. Never below zero: when the
 * balance no longer covers it, `insufficient_balance` rolls the whole change back (a person reconciles).
 * One posting per bucket, as for a refund (balance transactions move one bucket each).
 */
export async function postCaptureReversal(tx: LedgerTx, clock: Clock, capture: Owner & { chargeId: string }) {
  const original = await tx.findOne("postings", { source_id: capture.chargeId, type: "capture" });
  if (!original) throw new Error(`charge ${capture.chargeId} has no capture posting to reverse`);
  const amount = -(original.lines.find((l) => l.account === "acquirer:clearing")?.amount ?? 0);
  const fee = original.fee;
  const net = amount - fee;
  const fromPending = net > 0 ? await drawFromPendingCredit(tx, { chargeId: capture.chargeId, amount: net }) : 0;
  const parts: [MerchantBucket, number][] = [
    ["pending", fromPending],
    ["available", net - fromPending],
  ];
  // The fee comes back from revenue in the first posting (the merchant never had it).
  let feeLeft = fee;
  const postings: string[] = [];
  for (const [bucket, part] of parts) {
    if (part <= 0) continue;
    const lines: Line[] = [
      { account: merchantAccount(capture.merchantId, bucket), amount: -part },
      { account: CLEARING, amount: part + feeLeft },
    ];
    if (feeLeft !== 0) lines.push({ account: FEE_REVENUE, amount: -feeLeft });
    feeLeft = 0;
    const { posting } = await postPosting(tx, clock, {
      livemode: capture.livemode,
      currency: capture.currency,
      type: "capture_reversal",
      sourceId: capture.chargeId,
      lines,
    });
    postings.push(posting.id);
  }
  if (feeLeft !== 0) {
    // All of it was the fee: only the platform's accounts move.
    const { posting } = await postPosting(tx, clock, {
      livemode: capture.livemode,
      currency: capture.currency,
      type: "capture_reversal",
      sourceId: capture.chargeId,
      lines: [
        { account: FEE_REVENUE, amount: -feeLeft },
        { account: CLEARING, amount: feeLeft },
      ],
    });
    postings.push(posting.id);
  }
  return postings;
}

/**
 * A refund (createRefund): the platform owes the acquirer the refunded amount, taken from the merchant.
 * The money comes first from this charge's own capture credit if it has not settled yet (production),
 * then from `available`: a merchant can refund a same-day order. A refund never overdraws (a debit
 * `available` does not cover is refused with `insufficient_balance`); fees are not returned (docs/money.md).
 */
export async function postRefund(
  tx: LedgerTx,
  clock: Clock,
  refund: Owner & { chargeId: string; refundId: string; amount: number },
) {
  const fromPending = await drawFromPendingCredit(tx, refund);
  // One posting per bucket: a balance transaction moves `available` or `pending`, never both, so the
  // reconciliation of cashouts stays exact (balance-transactions.ts). A refund drawing on both (its
  // charge's unsettled credit did not cover it) is two postings, two balance transactions.
  const parts: [MerchantBucket, number][] = [
    ["pending", fromPending],
    ["available", refund.amount - fromPending],
  ];
  let last: Awaited<ReturnType<typeof postPosting>> | undefined;
  for (const [bucket, amount] of parts) {
    if (amount <= 0) continue;
    last = await postPosting(tx, clock, {
      livemode: refund.livemode,
      currency: refund.currency,
      type: "refund",
      sourceId: refund.refundId,
      lines: [
        { account: merchantAccount(refund.merchantId, bucket), amount: -amount },
        { account: CLEARING, amount },
      ],
    });
  }
  if (!last) throw new Error(`a refund of ${refund.amount} moves no money`);
  return last;
}

/**
 * A refund the acquirer reports failed after it was made (charges/acquirer-outcomes.ts, Adyen's
 * REFUND_FAILED): the money never left, so the platform owes the acquirer nothing for it and the merchant
 * has it back, in `available` (what the refund drew from an unsettled capture credit comes back available
 * too: it was the merchant's, and the credit's settlement no longer counts it).
 */
export function postRefundReversal(tx: LedgerTx, clock: Clock, refund: Owner & { refundId: string; amount: number }) {
  return postPosting(tx, clock, {
    livemode: refund.livemode,
    currency: refund.currency,
    type: "refund_reversal",
    sourceId: refund.refundId,
    lines: [
      { account: CLEARING, amount: -refund.amount },
      { account: merchantAccount(refund.merchantId, "available"), amount: refund.amount },
    ],
  });
}

/** A cashout (createCashout): its amount leaves `available` (refused unless covered) and is in transit. */
export function postCashout(tx: LedgerTx, clock: Clock, cashout: Owner & { cashoutId: string; amount: number }) {
  return postPosting(tx, clock, {
    livemode: cashout.livemode,
    currency: cashout.currency,
    type: "cashout",
    sourceId: cashout.cashoutId,
    lines: [
      { account: merchantAccount(cashout.merchantId, "available"), amount: -cashout.amount },
      { account: IN_TRANSIT, amount: cashout.amount },
    ],
  });
}

/** A cashout canceled or failed: its amount comes back from transit to `available`. */
export function postCashoutReversal(
  tx: LedgerTx,
  clock: Clock,
  cashout: Owner & { cashoutId: string; amount: number },
) {
  return postCashoutBack(tx, clock, cashout, IN_TRANSIT);
}

/**
 * A paid cashout the destination's bank sent back (Adyen's PAIDOUT_REVERSED: the account was closed or
 * refused the credit after the payout left): its amount comes back from `cashouts:paid_out` to the
 * merchant's `available`, shown as a `cashout_reversal` like a failed cashout's.
 */
export function postCashoutReturn(tx: LedgerTx, clock: Clock, cashout: Owner & { cashoutId: string; amount: number }) {
  return postCashoutBack(tx, clock, cashout, PAID_OUT);
}

/** A cashout's amount back to the merchant's `available` from where it stood (in transit, or paid out). */
function postCashoutBack(
  tx: LedgerTx,
  clock: Clock,
  cashout: Owner & { cashoutId: string; amount: number },
  from: typeof IN_TRANSIT | typeof PAID_OUT,
) {
  return postPosting(tx, clock, {
    livemode: cashout.livemode,
    currency: cashout.currency,
    type: "cashout_reversal",
    sourceId: cashout.cashoutId,
    lines: [
      { account: from, amount: -cashout.amount },
      { account: merchantAccount(cashout.merchantId, "available"), amount: cashout.amount },
    ],
  });
}

/** A cashout paid: its money has left the platform. The merchant's balance does not change (it left at creation). */
export function postCashoutPaid(
  tx: LedgerTx,
  clock: Clock,
  cashout: Owner & { cashoutId: string; amount: number; id?: string; at?: string },
) {
  return postPosting(tx, clock, {
    livemode: cashout.livemode,
    currency: cashout.currency,
    type: "cashout_paid",
    sourceId: cashout.cashoutId,
    lines: [
      { account: IN_TRANSIT, amount: -cashout.amount },
      { account: PAID_OUT, amount: cashout.amount },
    ],
    id: cashout.id,
    at: cashout.at,
  });
}

/**
 * A chargeback opened (disputes/, issue 31): the card network takes the disputed amount back from the
 * acquirer at once, so the acquirer owes the platform that much less (`acquirer:clearing` credited, as for
 * a refund), and the platform takes it from the merchant's `available`, even below zero: the network does
 * not ask whether the merchant still has the money (the `overdraft` rule, docs/money.md). The dispute fee
 * is a second posting of type `fee` (revenue, also from `available`, also overdrawing), so each shows as
 * its own balance transaction. Nothing goes through `merchant:<id>:disputed`: the money has left, it is not
 * held (docs/disputes.md "Money"). Returns the postings' ids, oldest first.
 */
export async function postDisputeWithdrawal(
  tx: LedgerTx,
  clock: Clock,
  dispute: Owner & { disputeId: string; amount: number; fee: number },
): Promise<string[]> {
  const { posting } = await postPosting(tx, clock, {
    livemode: dispute.livemode,
    currency: dispute.currency,
    type: "dispute",
    sourceId: dispute.disputeId,
    lines: [
      { account: merchantAccount(dispute.merchantId, "available"), amount: -dispute.amount, overdraft: true },
      { account: CLEARING, amount: dispute.amount },
    ],
  });
  if (dispute.fee === 0) return [posting.id];
  const { posting: fee } = await postPosting(tx, clock, {
    livemode: dispute.livemode,
    currency: dispute.currency,
    type: "fee",
    sourceId: dispute.disputeId,
    lines: [
      { account: merchantAccount(dispute.merchantId, "available"), amount: -dispute.fee, overdraft: true },
      { account: FEE_REVENUE, amount: dispute.fee },
    ],
    fee: dispute.fee,
  });
  return [posting.id, fee.id];
}

/**
 * A chargeback won: the network gives the amount back to the acquirer, and the platform to the merchant's
 * `available`. The dispute fee is not returned (docs/disputes.md "Money"). Returns the posting's id.
 */
export async function postDisputeReversal(
  tx: LedgerTx,
  clock: Clock,
  dispute: Owner & { disputeId: string; amount: number },
): Promise<string> {
  const { posting } = await postPosting(tx, clock, {
    livemode: dispute.livemode,
    currency: dispute.currency,
    type: "dispute_reversal",
    sourceId: dispute.disputeId,
    lines: [
      { account: CLEARING, amount: -dispute.amount },
      { account: merchantAccount(dispute.merchantId, "available"), amount: dispute.amount },
    ],
  });
  return posting.id;
}

/**
 * Takes up to `amount` for a refund of `chargeId` from that charge's capture credit still waiting in
 * `pending` (production, before settlement), inside `tx`: the credit's `drawn` rises, conditionally, so
 * a concurrent settlement or refund cannot take the same money twice. Returns how much it took (0 when
 * the credit has settled or there is none); the refund's posting debits that from `pending` and the rest
 * from `available`.
 */
export async function drawFromPendingCredit(
  tx: LedgerTx,
  refund: { chargeId: string; amount: number },
): Promise<number> {
  const credit = await tx.findOne("ledger_entries", {
    source_id: refund.chargeId,
    type: "capture",
    bucket: "pending",
    settled: false,
  });
  if (!credit) return 0;
  const drawn = credit.drawn ?? 0;
  const take = Math.min(refund.amount, credit.amount - drawn);
  if (take <= 0) return 0;
  const updated = await tx.update(
    "ledger_entries",
    credit.id,
    { set: { drawn: drawn + take } },
    { settled: false, drawn: credit.drawn },
  );
  if (!updated) return 0; // settled or drawn on meanwhile: the refund comes from `available`
  return take;
}

/** The settlement job's query: one environment's pending credits, on its clock (kernel/clock.ts). */
const pendingCredits = (livemode: boolean) => ({ livemode, bucket: "pending", settled: false }) as const;

/**
 * Moves every pending credit of one environment whose time has come (on that environment's clock) to
 * `available` (the settlement job). Returns how many.
 */
export async function settleDue(store: LedgerStore, clock: Clock, livemode: boolean, limit = 500): Promise<number> {
  const due = await store.findAll(
    "ledger_entries",
    { ...pendingCredits(livemode), available_on: { $lte: iso(clock.now(livemode)) } },
    limit,
  );
  let settled = 0;
  for (const credit of due) {
    const done = await store.transaction(async (tx) => {
      // Conditional: two instances running the job settle each credit once.
      const claimed = await tx.update("ledger_entries", credit.id, { set: { settled: true } }, { settled: false });
      if (!claimed) return false;
      // What refunds drew from the credit before settlement already left `pending`; the rest moves.
      const rest = claimed.amount - (claimed.drawn ?? 0);
      // The charge's balance transaction is available from now on (the settlement's own shows how much).
      if (credit.posting_id) {
        await tx.update("balance_transactions", credit.posting_id, { set: { status: "available" } });
      }
      if (rest === 0) return true;
      const merchantId = credit.merchant_id ?? "";
      await postPosting(tx, clock, {
        livemode: credit.livemode,
        currency: credit.currency,
        type: "settlement",
        sourceId: credit.id,
        shownSource: credit.source_id,
        availableAt: credit.available_on ?? undefined,
        lines: [
          { account: merchantAccount(merchantId, "pending"), amount: -rest },
          { account: merchantAccount(merchantId, "available"), amount: rest },
        ],
      });
      return true;
    });
    if (done) settled++;
  }
  return settled;
}

/** When the environment's next pending credit settles after `after` (the sandbox clock's advance steps to it), or null. */
export async function nextSettlement(store: LedgerStore, livemode: boolean, after: Date): Promise<string | null> {
  const [next] = await store.findAll(
    "ledger_entries",
    { ...pendingCredits(livemode), available_on: { $gt: iso(after) } },
    1,
    { by: "available_on", direction: "asc" },
  );
  return next?.available_on ?? null;
}
