import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type NotificationItem, signItem } from "@payments/server/adyen";
import { serveIssuerPage } from "./issuer-page.ts";

// A stateful stand-in for the Adyen endpoints the connector uses (server/src/adapters/adyen/): Checkout v71
// payments, 3-D Secure details, captures, cancels, refunds, reversals, Payout v50 third-party payouts and
// Disputes v30 (defense reasons, documents, defend, accept).
// It runs in the test process on loopback, behind Prism's validating proxy (./prism-proxy.ts) loaded with
// Adyen's own documents, so everything the connector sends and everything this fake answers is checked
// against Adyen's contract, not against our reading of it.
//
// What it models, after Adyen's documentation:
// - Outcomes by test card (Adyen's "Test card numbers"): any card approves; the holder name picks a refusal
//   reason (DECLINED, NOT_ENOUGH_BALANCE, BLOCK_CARD, CARD_EXPIRED, ISSUER_UNAVAILABLE, FRAUD, CVC_DECLINED,
//   ACQUIRER_ERROR), as Adyen's test environment does; the 3-D Secure 2 test cards ask for a challenge
//   (redirect flow); an expired card is refused. Our simulator's test cards (docs/charges.md) give the same
//   refusals, so the e2e suites written for the simulator run against the stand-in unchanged.
// - Authorisations decided later (RECEIVED_CARDS, our own convention: Adyen documents no test card for it):
//   /payments answers `Received`, or, for the two that ask for a challenge first, /payments/details does
//   after the payer passes it; the outcome (authorised or refused) is decided at once here and reported
//   only by the signed AUTHORISATION notification queued with the answer, as Adyen reports it.
// - Idempotency-Key: the same key and request answers the stored answer and moves nothing again; the same
//   key with another request is refused.
// - Asynchronous outcomes: captures, cancels and refunds are only `received`; their outcome is a signed
//   standard notification (Webhooks v1), queued here and delivered when a test says so (no timers), in
//   order or shuffled, once or twice.
// - Faults on demand: no answer (the caller times out: it sees the call in doubt though the money moved),
//   a 500 before processing, a 500 after processing.
// - Payouts (Payout v50): a submission is stored and pays nothing; its confirmation queues the outcome,
//   by test data in the bank account's owner name (our own convention: Adyen documents no payout test
//   data): `PAYOUT_DECLINE` (the reviewer declined it), `PAYOUT_EXPIRE` (never confirmed in time),
//   `ACCOUNT_CLOSED` or an IBAN ending in 0001 (PAYOUT_THIRDPARTY, success false, "Account closed"),
//   anything else PAYOUT_THIRDPARTY success true. `returnPayout` sends a paid one back (PAIDOUT_REVERSED).
//   Refusals: `PAYOUT_REFUSED` in the owner name refuses the submission (422, error 161 "Invalid iban":
//   nothing stored); `CONFIRM_REFUSED` refuses its confirmation (422, error 010 "Not allowed"), after
//   which declineThirdParty declines it (PAYOUT_DECLINE queued) and it can never be paid.
// - `performed` counts what actually moved (replays excluded), per merchant reference: the crash suite's
//   "0 double authorisations, captures or refunds" is read there.

export interface StandInOptions {
  apiKey: string;
  /**
   * The payout reviewer's key: when given, confirmThirdParty and declineThirdParty take only it and every
   * other endpoint refuses it, as Adyen's two payout credentials do (403 "010 Not allowed"; an unknown key
   * is 401). Absent, `apiKey` may do everything (one credential holding both roles).
   */
  payoutReviewerApiKey?: string;
  merchantAccount: string;
  /** Hex HMAC key the notifications are signed with. */
  hmacKey: string;
  now?: () => Date;
}

export type Fault = "no_answer" | "error_before" | "error_after";
type Operation =
  | "authorisation"
  | "capture"
  | "cancel"
  | "refund"
  | "reversal"
  | "details"
  | "payout"
  | "payout_confirm"
  | "payout_decline";

/** A payout submitted (storeDetailAndSubmitThirdParty), paid once confirmed (confirmThirdParty). */
interface Payout {
  pspReference: string;
  merchantReference: string;
  amount: { value: number; currency: string };
  ownerName: string;
  iban: string;
  status: "submitted" | "confirmed" | "returned" | "declined";
}

interface Payment {
  pspReference: string;
  merchantReference: string;
  currency: string;
  amount: number;
  method: string;
  status: "authorised" | "refused" | "challenge" | "pending" | "cancelled";
  captured: number;
  refunded: number;
  /** Where the payer goes back after a 3-D Secure challenge (the request's returnUrl). */
  returnUrl?: string;
  /** Authorised only (additionalData.manualCapture): a challenge's authorisation does not capture. */
  manualCapture?: boolean;
  /** Answered `Received` (after its challenge, if any), then authorised (true) or refused by AUTHORISATION. */
  decidedLater?: boolean;
}

export interface NotificationRequestBody {
  /** "true" from Adyen's live environment (the stand-in queues "false": its test environment). */
  live: "false" | "true";
  notificationItems: Array<{ NotificationRequestItem: NotificationItem }>;
}

/** Adyen's 3-D Secure 2 test cards (challenge flow), and ours (issue 31's sandbox cards). */
const CHALLENGE_CARDS = new Set([
  "4917610000000000",
  "5454545454545454",
  "4212345678901237",
  "4000000000003220",
  "4000002760003184",
  // Challenged, then Received (RECEIVED_CARDS).
  "4000000000007734",
  "4000000000007742",
]);

/**
 * Cards whose authorisation is taken `Received` and decided by the AUTHORISATION notification (our own
 * test cards, docs/going-live-with-adyen.md "What was tested"): true authorised, false refused. The last two
 * ask for a 3-D Secure challenge first (CHALLENGE_CARDS), and /payments/details answers `Received`.
 */
export const RECEIVED_CARDS: Readonly<Record<string, boolean>> = {
  "4000000000007718": true,
  "4000000000007726": false,
  "4000000000007734": true,
  "4000000000007742": false,
};

/** Refusals by holder name, as in Adyen's test environment: [refusalReasonCode, refusalReason]. */
const HOLDER_REFUSALS: Record<string, [string, string]> = {
  DECLINED: ["2", "Refused"],
  BLOCK_CARD: ["5", "Blocked Card"],
  CARD_EXPIRED: ["6", "Expired Card"],
  NOT_ENOUGH_BALANCE: ["12", "Not enough balance"],
  ISSUER_UNAVAILABLE: ["9", "Issuer Unavailable"],
  ACQUIRER_ERROR: ["4", "Acquirer Error"],
  FRAUD: ["20", "FRAUD"],
  CVC_DECLINED: ["24", "CVC Declined"],
};

/** Our simulator's test cards (docs/charges.md 'Test cards (sandbox)'), refused the same way. */
const CARD_REFUSALS: Record<string, [string, string]> = {
  "4000000000000002": ["2", "Refused"],
  "4000000000009995": ["12", "Not enough balance"],
  "4000000000000069": ["6", "Expired Card"],
};

export interface AdyenStandIn {
  url: string;
  /** What actually moved, per operation and merchant reference (replays of an idempotent call excluded). */
  performed: Record<Operation, Map<string, number>>;
  /** Every request received (after Prism), by path: to assert the idempotency key was sent. */
  received: Array<{ path: string; idempotencyKey: string | undefined }>;
  /** Requests refused 403 for the wrong payout credential (`reviewerKey`: it was the reviewer's). */
  reviewerRefusals: Array<{ path: string; reviewerKey: boolean }>;
  payments: Map<string, Payment>;
  /** The next request to `path` (e.g. "/payments") meets this fault. */
  injectFault(path: string, fault: Fault): void;
  /** Notifications queued and not yet taken, one item per request as Adyen sends them. */
  takeNotifications(): NotificationRequestBody[];
  /** The payer finishes the 3-D Secure challenge: returns the `redirectResult` they bring back. */
  completeChallenge(pspReference: string, outcome: "authorised" | "refused"): string;
  /** The payer of a local method pays (or the voucher expires): queues the AUTHORISATION notification. */
  settleLocal(pspReference: string, paid: boolean): void;
  /** The payouts submitted, by pspReference. */
  payouts: Map<string, Payout>;
  /** The destination's bank sends a paid payout back: queues PAIDOUT_REVERSED. */
  returnPayout(pspReference: string, reason?: string): void;
  /** The issuer disputes a payment: queues NOTIFICATION_OF_CHARGEBACK and CHARGEBACK (and the reversal when won). */
  chargeback(
    pspReference: string,
    options?: { amount?: number; reversed?: boolean; second?: boolean; reasonCode?: string },
  ): string;
  /** The card networks' last word on a dispute decided twice: queues PREARBITRATION_WON or _LOST. */
  prearbitration(disputeReference: string, outcome: "won" | "lost"): void;
  /** A confirmed refund comes back to the merchant (the shopper's account closed): queues REFUNDED_REVERSED. */
  reverseRefund(refundReference: string, reason?: string): void;
  stop(): Promise<void>;
}

export async function startAdyenStandIn(options: StandInOptions): Promise<AdyenStandIn> {
  const now = options.now ?? (() => new Date());
  const payments = new Map<string, Payment>();
  const challenges = new Map<string, { pspReference: string; outcome?: "authorised" | "refused" }>();
  const idempotency = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  const faults = new Map<string, Fault[]>();
  const disputes = new Map<
    string,
    { status: "open" | "defended" | "accepted"; documents: Set<string>; payment?: Payment; amount?: number }
  >();
  /** Refunds Adyen made, by the refund's pspReference: what REFUNDED_REVERSED names. */
  const refunds = new Map<string, { payment: Payment; merchantReference: string; value: number }>();
  const queue: NotificationItem[] = [];
  const received: AdyenStandIn["received"] = [];
  const reviewerRefusals: AdyenStandIn["reviewerRefusals"] = [];
  const performed: AdyenStandIn["performed"] = {
    authorisation: new Map(),
    capture: new Map(),
    cancel: new Map(),
    refund: new Map(),
    reversal: new Map(),
    details: new Map(),
    payout: new Map(),
    payout_confirm: new Map(),
    payout_decline: new Map(),
  };
  const payouts = new Map<string, Payout>();
  let sequence = 0;
  let url = "";

  /** A 16-character pspReference, unique in this run. */
  const pspReference = () => `STND${String(++sequence).padStart(12, "0")}`;
  const count = (operation: Operation, reference: string) =>
    performed[operation].set(reference, (performed[operation].get(reference) ?? 0) + 1);

  function notify(item: Omit<NotificationItem, "eventDate" | "merchantAccountCode" | "additionalData">, extra = {}) {
    const full = {
      ...item,
      merchantAccountCode: options.merchantAccount,
      eventDate: now()
        .toISOString()
        .replace(/\.\d{3}Z$/, "Z"),
    } as NotificationItem;
    const signature = signItem(full, options.hmacKey);
    queue.push({ ...full, additionalData: { ...extra, hmacSignature: signature } } as NotificationItem);
  }

  const serviceError = (status: number, errorCode: string, message: string, errorType = "validation") => ({
    status,
    body: { status, errorCode, message, errorType },
  });

  type Answer = { status: number; body: unknown };
  type Body = Record<string, unknown>;

  function pay(body: Body): Answer {
    const amount = body.amount as { value: number; currency: string };
    const method = body.paymentMethod as Body;
    const reference = String(body.reference);
    const psp = pspReference();
    const payment: Payment = {
      pspReference: psp,
      merchantReference: reference,
      currency: amount.currency,
      amount: amount.value,
      method: String(method.type),
      status: "authorised",
      captured: 0,
      refunded: 0,
      returnUrl: String(body.returnUrl ?? ""),
      manualCapture: ((body.additionalData ?? {}) as Record<string, string>).manualCapture === "true",
    };
    payments.set(psp, payment);
    count("authorisation", reference);
    const answer = (extra: Body) => ({
      status: 200,
      body: { pspReference: psp, merchantReference: reference, amount, ...extra },
    });

    if (method.type === "scheme") {
      const refusal = cardRefusal(method, now());
      if (refusal) {
        payment.status = "refused";
        notify(authorisation(payment, false, refusal[1]));
        return answer({ resultCode: "Refused", refusalReasonCode: refusal[0], refusalReason: refusal[1] });
      }
      const later: boolean | undefined = RECEIVED_CARDS[String(method.number)];
      if (CHALLENGE_CARDS.has(String(method.number))) {
        payment.status = "challenge";
        if (later !== undefined) payment.decidedLater = later;
        return answer({
          resultCode: "RedirectShopper",
          action: {
            type: "redirect",
            paymentMethodType: "scheme",
            method: "GET",
            url: `${url}/3ds/challenge?psp=${psp}`,
          },
        });
      }
      if (later !== undefined) {
        decideLater(payment, later);
        return answer({ resultCode: "Received" });
      }
      const additional = (body.additionalData ?? {}) as Record<string, string>;
      if (additional.manualCapture !== "true") payment.captured = payment.amount;
      notify(authorisation(payment, true));
      return answer({ resultCode: "Authorised" });
    }

    payment.status = "pending";
    const expiresAt = new Date(now().getTime() + 3_600_000).toISOString();
    switch (method.type) {
      case "pix":
        return answer({
          resultCode: "Pending",
          action: {
            type: "qrCode",
            paymentMethodType: "pix",
            qrCodeData: `00020126580014br.gov.bcb.pix0136${psp}5204000053039865802BR6304ABCD`,
            expiresAt,
          },
        });
      case "oxxo":
      case "boletobancario":
        return answer({
          resultCode: "PresentToShopper",
          action: { type: "voucher", paymentMethodType: method.type, reference: `VCH${psp}`, expiresAt },
        });
      case "sepadirectdebit":
        return answer({ resultCode: "Received" });
      default:
        payment.status = "refused";
        return answer({ resultCode: "Refused", refusalReasonCode: "10", refusalReason: "Not supported" });
    }
  }

  /**
   * A card payment answered `Received`: decided now (captured too unless manual capture), told only by the
   * AUTHORISATION queued here, which the test delivers when it chooses (the side door's notifications).
   */
  function decideLater(payment: Payment, authorised: boolean): void {
    payment.status = authorised ? "authorised" : "refused";
    if (authorised && !payment.manualCapture) payment.captured = payment.amount;
    notify(authorisation(payment, authorised, authorised ? "" : "Refused"));
  }

  function authorisation(payment: Payment, success: boolean, reason = "") {
    return {
      pspReference: payment.pspReference,
      merchantReference: payment.merchantReference,
      amount: { value: payment.amount, currency: payment.currency },
      eventCode: "AUTHORISATION",
      paymentMethod: payment.method === "scheme" ? "visa" : payment.method,
      reason,
      success: success ? "true" : "false",
    } as const;
  }

  function details(body: Body): Answer {
    const redirectResult = String((body.details as Body | undefined)?.redirectResult ?? "");
    const challenge = challenges.get(redirectResult);
    const payment = challenge ? payments.get(challenge.pspReference) : undefined;
    if (!challenge?.outcome || !payment) {
      return serviceError(422, "101", "Invalid redirectResult");
    }
    count("details", payment.merchantReference);
    const base = {
      pspReference: payment.pspReference,
      merchantReference: payment.merchantReference,
      amount: { value: payment.amount, currency: payment.currency },
    };
    // What the issuer's 3-D Secure server said (Adyen's threeDS2Result): Y authenticated, N not.
    const threeDS2Result = (transStatus: "Y" | "N") => ({
      transStatus,
      messageVersion: "2.2.0",
      ...(transStatus === "Y" ? { eci: "05" } : {}),
    });
    if (payment.status !== "challenge") {
      // Answered already under another key: Adyen refuses a second completion of the same payment.
      return serviceError(422, "167", "Original pspReference required for this operation");
    }
    if (challenge.outcome === "refused") {
      payment.status = "refused";
      notify(authorisation(payment, false, "3D Not Authenticated"));
      return {
        status: 200,
        body: {
          ...base,
          resultCode: "Refused",
          refusalReasonCode: "11",
          refusalReason: "3D Not Authenticated",
          threeDS2Result: threeDS2Result("N"),
        },
      };
    }
    if (payment.decidedLater !== undefined) {
      // Authenticated, and taken undecided: the AUTHORISATION queued now tells whether it was authorised.
      decideLater(payment, payment.decidedLater);
      return { status: 200, body: { ...base, resultCode: "Received", threeDS2Result: threeDS2Result("Y") } };
    }
    payment.status = "authorised";
    if (!payment.manualCapture) payment.captured = payment.amount;
    notify(authorisation(payment, true));
    return { status: 200, body: { ...base, resultCode: "Authorised", threeDS2Result: threeDS2Result("Y") } };
  }

  function modify(operation: "capture" | "cancel" | "refund" | "reversal", psp: string, body: Body): Answer {
    const payment = payments.get(psp);
    if (!payment) return serviceError(422, "167", "Original pspReference required for this operation");
    const reference = String(body.reference ?? payment.merchantReference);
    const amount = body.amount as { value: number; currency: string } | undefined;
    const value = amount?.value ?? payment.amount;
    const modification = pspReference();
    count(operation, reference);
    const item = (eventCode: NotificationItem["eventCode"], success: boolean, reason = "") => ({
      pspReference: modification,
      originalReference: psp,
      merchantReference: reference,
      amount: { value, currency: payment.currency },
      eventCode,
      paymentMethod: payment.method === "scheme" ? "visa" : payment.method,
      reason,
      success: success ? "true" : "false",
    });
    const authorised = payment.status === "authorised";
    switch (operation) {
      case "capture": {
        const ok = authorised && payment.captured + value <= payment.amount;
        if (ok) payment.captured += value;
        notify(item("CAPTURE", ok, ok ? "" : "Insufficient balance on payment"));
        break;
      }
      case "cancel": {
        const ok = authorised && payment.captured === 0;
        if (ok) payment.status = "cancelled";
        notify(item("CANCELLATION", ok, ok ? "" : "Payment already captured"));
        break;
      }
      case "refund": {
        const ok = authorised && payment.refunded + value <= payment.captured;
        if (ok) payment.refunded += value;
        if (ok) refunds.set(modification, { payment, merchantReference: reference, value });
        notify(item("REFUND", ok, ok ? "" : "Insufficient in-process funds on account to refund"));
        break;
      }
      case "reversal": {
        // An authorisation is cancelled or refunded; a payment still pending (a SEPA debit not yet
        // collected, a voucher not yet paid) is cancelled before it can complete.
        const ok = authorised || payment.status === "pending";
        payment.status = "cancelled";
        notify(item("CANCEL_OR_REFUND", ok));
        break;
      }
    }
    const answer: Body = {
      merchantAccount: options.merchantAccount,
      paymentPspReference: psp,
      pspReference: modification,
      status: "received",
      ...(body.reference === undefined ? {} : { reference: body.reference }),
      ...(operation === "capture" || operation === "refund" ? { amount: { value, currency: payment.currency } } : {}),
    };
    return { status: 201, body: answer };
  }

  function payout(body: Body): Answer {
    const reference = String(body.reference);
    const amount = body.amount as { value: number; currency: string };
    const bank = (body.bank ?? {}) as Body;
    if (
      String(bank.ownerName ?? "")
        .toUpperCase()
        .includes("PAYOUT_REFUSED")
    ) {
      return serviceError(422, "161", "Invalid iban");
    }
    const psp = pspReference();
    count("payout", reference);
    payouts.set(psp, {
      pspReference: psp,
      merchantReference: reference,
      amount,
      ownerName: String(bank.ownerName ?? ""),
      iban: String(bank.iban ?? ""),
      status: "submitted",
    });
    return { status: 200, body: { pspReference: psp, resultCode: "[payout-submit-received]" } };
  }

  /** confirmThirdParty: the reviewer confirms a submitted payout; its outcome is queued by test data. */
  function confirmPayout(body: Body): Answer {
    const found = payouts.get(String(body.originalReference));
    if (!found) return serviceError(422, "167", "Original pspReference required for this operation");
    if (found.status !== "submitted") {
      return { status: 200, body: { pspReference: pspReference(), response: `Payout already ${found.status}` } };
    }
    if (found.ownerName.toUpperCase().includes("CONFIRM_REFUSED")) return serviceError(422, "010", "Not allowed");
    found.status = "confirmed";
    count("payout_confirm", found.merchantReference);
    const item = (eventCode: string, success: boolean, reason = "") =>
      notify({
        pspReference: found.pspReference,
        merchantReference: found.merchantReference,
        amount: found.amount,
        eventCode,
        reason,
        success: success ? "true" : "false",
      } as never);
    const owner = found.ownerName.toUpperCase();
    if (owner.includes("PAYOUT_DECLINE")) item("PAYOUT_DECLINE", true, "Declined by reviewer");
    else if (owner.includes("PAYOUT_EXPIRE")) item("PAYOUT_EXPIRE", true, "Payout expired");
    else if (owner.includes("ACCOUNT_CLOSED") || found.iban.endsWith("0001")) {
      item("PAYOUT_THIRDPARTY", false, "Account closed");
    } else item("PAYOUT_THIRDPARTY", true);
    return { status: 200, body: { pspReference: pspReference(), response: "[payout-confirm-received]" } };
  }

  /** declineThirdParty: the reviewer declines a submitted payout; it is never paid (PAYOUT_DECLINE). */
  function declinePayout(body: Body): Answer {
    const found = payouts.get(String(body.originalReference));
    if (!found) return serviceError(422, "167", "Original pspReference required for this operation");
    if (found.status !== "submitted") {
      return { status: 200, body: { pspReference: pspReference(), response: `Payout already ${found.status}` } };
    }
    found.status = "declined";
    count("payout_decline", found.merchantReference);
    notify({
      pspReference: found.pspReference,
      merchantReference: found.merchantReference,
      amount: found.amount,
      eventCode: "PAYOUT_DECLINE",
      reason: "Declined by reviewer",
      success: "true",
    } as never);
    return { status: 200, body: { pspReference: pspReference(), response: "[payout-decline-received]" } };
  }

  function returnPayout(psp: string, reason = "Account closed"): void {
    const found = payouts.get(psp);
    if (found?.status !== "confirmed") throw new Error(`no confirmed payout ${psp} to return`);
    found.status = "returned";
    notify({
      pspReference: pspReference(),
      originalReference: psp,
      merchantReference: found.merchantReference,
      amount: found.amount,
      eventCode: "PAIDOUT_REVERSED",
      reason,
      success: "true",
    } as never);
  }

  /**
   * PREARBITRATION_WON ("Cardholder's bank accepted pre-arbitration case": the merchant keeps the money) or
   * PREARBITRATION_LOST ("... declined ...": the cardholder's bank keeps it), Webhooks v1's wording.
   */
  function prearbitration(disputeReference: string, outcome: "won" | "lost"): void {
    const found = disputes.get(disputeReference);
    if (!found?.payment) throw new Error(`the stand-in has no dispute ${disputeReference}`);
    notify({
      pspReference: disputeReference,
      originalReference: found.payment.pspReference,
      merchantReference: found.payment.merchantReference,
      amount: { value: found.amount ?? found.payment.captured, currency: found.payment.currency },
      eventCode: outcome === "won" ? "PREARBITRATION_WON" : "PREARBITRATION_LOST",
      paymentMethod: "visa",
      reason: "",
      success: "true",
    } as never);
  }

  /** REFUNDED_REVERSED: "The refunded amount was reversed and returned to your bank account" (Webhooks v1). */
  function reverseRefund(refundReference: string, reason = "Refund returned: account closed"): void {
    const found = refunds.get(refundReference);
    if (!found) throw new Error(`the stand-in made no refund ${refundReference}`);
    refunds.delete(refundReference);
    found.payment.refunded -= found.value;
    notify({
      pspReference: refundReference,
      originalReference: found.payment.pspReference,
      merchantReference: found.merchantReference,
      amount: { value: found.value, currency: found.payment.currency },
      eventCode: "REFUNDED_REVERSED",
      paymentMethod: found.payment.method === "scheme" ? "visa" : found.payment.method,
      reason,
      success: "true",
    } as never);
  }

  function chargebackOf(psp: string, chargeback: Parameters<AdyenStandIn["chargeback"]>[1] = {}): string {
    const payment = payments.get(psp);
    if (!payment) throw new Error(`the stand-in has no payment ${psp}`);
    const dispute = pspReference();
    const amount = { value: chargeback.amount ?? payment.captured, currency: payment.currency };
    disputes.set(dispute, { status: "open", documents: new Set(), payment, amount: amount.value });
    const reasonCode = chargeback.reasonCode ?? "10.4";
    const item = (eventCode: NotificationItem["eventCode"]) => ({
      pspReference: dispute,
      originalReference: psp,
      merchantReference: payment.merchantReference,
      amount,
      eventCode,
      paymentMethod: "visa",
      reason: "Other Fraud-Card Absent Environment",
      success: "true",
    });
    const extra = { chargebackReasonCode: reasonCode, defensePeriodEndsAt: "2026-12-27T00:00:00Z" };
    notify(item("NOTIFICATION_OF_CHARGEBACK"), extra);
    notify(item("CHARGEBACK"), extra);
    if (chargeback.reversed) notify(item("CHARGEBACK_REVERSED"), extra);
    if (chargeback.second) notify(item("SECOND_CHARGEBACK"), extra);
    return dispute;
  }

  /** The Disputes API v30 on the disputes `chargeback()` opened: one reason, which needs an invoice. */
  function dispute(path: string, body: Body): Answer | undefined {
    const reference = String(body.disputePspReference);
    const found = disputes.get(reference);
    const result = (success: boolean, errorMessage?: string) => ({
      status: 200,
      body: { disputeServiceResult: { success, ...(errorMessage ? { errorMessage } : {}) } },
    });
    if (!found) return result(false, "Dispute not found");
    switch (path) {
      case "/retrieveApplicableDefenseReasons": {
        const available = found.documents.has("TIDorInvoice");
        return {
          status: 200,
          body: {
            disputeServiceResult: { success: true },
            defenseReasons: [
              {
                defenseReasonCode: "GoodsOrServicesProvided",
                satisfied: available,
                defenseDocumentTypes: [
                  { defenseDocumentTypeCode: "TIDorInvoice", requirementLevel: "Required", available },
                ],
              },
            ],
          },
        };
      }
      case "/supplyDefenseDocument":
        for (const document of (body.defenseDocuments ?? []) as Body[]) {
          found.documents.add(String(document.defenseDocumentTypeCode));
        }
        return result(true);
      case "/defendDispute":
        if (found.status !== "open") return result(false, "Dispute is not open");
        if (body.defenseReasonCode !== "GoodsOrServicesProvided") return result(false, "Invalid defense reason");
        if (!found.documents.has("TIDorInvoice")) return result(false, "Required defense documents are missing");
        found.status = "defended";
        return result(true);
      case "/acceptDispute":
        if (found.status !== "open") return result(false, "Dispute is not open");
        found.status = "accepted";
        return result(true);
      default:
        return undefined;
    }
  }

  function route(path: string, body: Body): Answer | undefined {
    if (path === "/payments") return pay(body);
    if (path === "/payments/details") return details(body);
    if (path === "/storeDetailAndSubmitThirdParty") return payout(body);
    if (path === "/confirmThirdParty") return confirmPayout(body);
    if (path === "/declineThirdParty") return declinePayout(body);
    if (
      ["/retrieveApplicableDefenseReasons", "/supplyDefenseDocument", "/defendDispute", "/acceptDispute"].includes(path)
    ) {
      return dispute(path, body);
    }
    const match = /^\/payments\/([^/]+)\/(captures|cancels|refunds|reversals)$/.exec(path);
    if (!match) return undefined;
    const operation = ({ captures: "capture", cancels: "cancel", refunds: "refund", reversals: "reversal" } as const)[
      match[2] as "captures"
    ];
    return modify(operation, decodeURIComponent(match[1] as string), body);
  }

  /**
   * The test's side door, for suites in another process than the stand-in (the Adyen e2e run starts it in
   * vitest's globalSetup): never through Prism, never part of Adyen's API.
   * - POST /__stand-in/notifications?merchantReference=… takes the queued notifications naming it.
   * - POST /__stand-in/payouts/return?merchantReference=…&reason=… sends its confirmed payout back.
   * - POST /__stand-in/refunds/reverse?merchantReference=<re_…> sends its confirmed refund back (the
   *   connector's merchantReference is `re_…:refund`; the refund id alone finds it).
   * - POST /__stand-in/chargeback?merchantReference=<ch_…>&reversed=true&second=true disputes the captured
   *   payment (NOTIFICATION_OF_CHARGEBACK, CHARGEBACK, then CHARGEBACK_REVERSED, SECOND_CHARGEBACK);
   *   answers its `disputeReference`.
   * - POST /__stand-in/prearbitration?disputeReference=…&outcome=won|lost queues PREARBITRATION_WON/_LOST.
   * - POST /__stand-in/performed?merchantReference=… answers what moved for it, per operation (`performed`:
   *   authorisations, details, captures, …; replays excluded), each count as a string.
   */
  function control(path: string, query: URLSearchParams): Answer {
    const reference = query.get("merchantReference") ?? "";
    if (path === "/__stand-in/notifications") {
      const taken: NotificationItem[] = [];
      for (let i = queue.length - 1; i >= 0; i--) {
        if (queue[i]?.merchantReference === reference) taken.unshift(...queue.splice(i, 1));
      }
      return { status: 200, body: taken.map((item) => bodyOf(item)) };
    }
    if (path === "/__stand-in/payouts/return") {
      const found = [...payouts.values()].find((p) => p.merchantReference === reference);
      if (found?.status !== "confirmed") return { status: 404, body: { message: `no confirmed payout ${reference}` } };
      returnPayout(found.pspReference, query.get("reason") ?? undefined);
      return { status: 200, body: {} };
    }
    if (path === "/__stand-in/refunds/reverse") {
      // The connector's refund reference is its key (`re_…:refund`): the refund's id names it too.
      const found = [...refunds.entries()].find(
        ([, r]) => r.merchantReference === reference || r.merchantReference.startsWith(`${reference}:`),
      );
      if (!found) return { status: 404, body: { message: `no refund ${reference}` } };
      reverseRefund(found[0], query.get("reason") ?? undefined);
      return { status: 200, body: {} };
    }
    if (path === "/__stand-in/chargeback") {
      const payment = [...payments.values()].find((p) => p.merchantReference === reference && p.captured > 0);
      if (!payment) return { status: 404, body: { message: `no captured payment ${reference}` } };
      const disputeReference = chargebackOf(payment.pspReference, {
        reversed: query.get("reversed") === "true",
        second: query.get("second") === "true",
      });
      return { status: 200, body: { disputeReference } };
    }
    if (path === "/__stand-in/prearbitration") {
      const outcome = query.get("outcome");
      const dispute = query.get("disputeReference") ?? "";
      if ((outcome !== "won" && outcome !== "lost") || !disputes.get(dispute)?.payment) {
        return { status: 404, body: { message: `no dispute ${dispute} (outcome won or lost)` } };
      }
      prearbitration(dispute, outcome);
      return { status: 200, body: {} };
    }
    if (path === "/__stand-in/performed") {
      const counts = Object.entries(performed).map(([operation, byReference]) => [
        operation,
        String(byReference.get(reference) ?? 0),
      ]);
      return { status: 200, body: Object.fromEntries(counts) };
    }
    return { status: 404, body: { message: "no such control" } };
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const path = new URL(request.url ?? "/", "http://stand-in").pathname;
    const raw = await readBody(request);
    if (path === "/3ds/challenge") {
      // The issuer's challenge page (./issuer-page.ts), or a test's completeChallenge() without a browser.
      serveIssuerPage(request, response, raw, {
        returnUrlOf: (psp) => {
          const payment = payments.get(psp);
          return payment?.status === "challenge" ? payment.returnUrl : undefined;
        },
        answer: answerChallenge,
      });
      return;
    }
    const reply = (answer: Answer) => {
      response.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
    };
    if (path.startsWith("/__stand-in/")) {
      reply(control(path, new URL(request.url ?? "/", "http://stand-in").searchParams));
      return;
    }
    const key = header(request, "idempotency-key");
    received.push({ path, idempotencyKey: key });
    const credential = credentialProblem(path, header(request, "x-api-key"));
    if (credential) {
      reply(credential);
      return;
    }
    let body: Body;
    try {
      body = JSON.parse(raw) as Body;
    } catch {
      reply(serviceError(400, "702", "Structure of the request is invalid"));
      return;
    }
    const account = body.merchantAccount ?? body.merchantAccountCode;
    if (account !== undefined && account !== options.merchantAccount) {
      reply(serviceError(403, "901", "Invalid Merchant Account", "security"));
      return;
    }
    const fault = faults.get(path)?.shift();
    if (fault === "error_before") {
      reply(serviceError(500, "905", "Payment details are not supported", "internal"));
      return;
    }
    const fingerprint = createHash("sha256").update(`${path}\n${raw}`).digest("hex");
    const stored = key === undefined ? undefined : idempotency.get(key);
    let answer: Answer | undefined;
    if (stored) {
      answer =
        stored.fingerprint === fingerprint
          ? { status: stored.status, body: stored.body }
          : serviceError(422, "000", "Idempotency key reused with a different request");
    } else {
      answer = route(path, body);
      if (!answer) {
        reply(serviceError(404, "000", "Not found"));
        return;
      }
      if (key !== undefined) idempotency.set(key, { fingerprint, ...answer });
    }
    if (fault === "no_answer") return; // processed; the caller times out and closes
    if (fault === "error_after") {
      reply(serviceError(500, "000", "Internal error", "internal"));
      return;
    }
    reply(answer);
  }

  /** Which credential each endpoint takes: the reviewer's on confirm and decline only (Payout v50). */
  function credentialProblem(path: string, key: string | undefined): Answer | undefined {
    const reviewer = options.payoutReviewerApiKey;
    if (key !== options.apiKey && (reviewer === undefined || key !== reviewer)) {
      return serviceError(401, "000", "HTTP Status Response - Unauthorized", "security");
    }
    if (reviewer === undefined) return undefined;
    const reviews = path === "/confirmThirdParty" || path === "/declineThirdParty";
    if (reviews !== (key === reviewer)) {
      reviewerRefusals.push({ path, reviewerKey: key === reviewer });
      return serviceError(403, "010", "Not allowed", "security");
    }
    return undefined;
  }

  /** The payer answered the issuer's challenge: the redirectResult they carry back to returnUrl. */
  function answerChallenge(psp: string, outcome: "authorised" | "refused"): string {
    const redirectResult = `X6XtfGC3!${createHash("sha256").update(psp).digest("base64url").slice(0, 24)}`;
    challenges.set(redirectResult, { pspReference: psp, outcome });
    return redirectResult;
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    performed,
    received,
    reviewerRefusals,
    payments,
    payouts,
    returnPayout,
    injectFault(path, fault) {
      faults.set(path, [...(faults.get(path) ?? []), fault]);
    },
    takeNotifications() {
      return queue.splice(0).map(bodyOf);
    },
    completeChallenge: answerChallenge,
    settleLocal(psp, paid) {
      const payment = payments.get(psp);
      if (!payment) throw new Error(`the stand-in has no payment ${psp}`);
      if (payment.status !== "pending")
        throw new Error(`the stand-in's payment ${psp} is ${payment.status}, not pending`);
      payment.status = paid ? "authorised" : "refused";
      if (paid) payment.captured = payment.amount;
      notify(authorisation(payment, paid, paid ? "" : "Expired"));
    },
    chargeback: chargebackOf,
    prearbitration,
    reverseRefund,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function cardRefusal(method: Record<string, unknown>, now: Date): [string, string] | undefined {
  const byHolder = HOLDER_REFUSALS[String(method.holderName ?? "").toUpperCase()];
  if (byHolder) return byHolder;
  const byCard = CARD_REFUSALS[String(method.number)];
  if (byCard) return byCard;
  const year = Number(method.expiryYear);
  const month = Number(method.expiryMonth);
  if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)) {
    return ["6", "Expired Card"];
  }
  return undefined;
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.once("error", reject);
  });
}

/** One item as Adyen POSTs it, from its test environment. */
function bodyOf(item: NotificationItem): NotificationRequestBody {
  return { live: "false", notificationItems: [{ NotificationRequestItem: item }] };
}

/** From a suite in another process: takes the stand-in's queued notifications naming `merchantReference`. */
export async function takeNotificationsAt(
  standInUrl: string,
  merchantReference: string,
): Promise<NotificationRequestBody[]> {
  const url = `${standInUrl}/__stand-in/notifications?merchantReference=${encodeURIComponent(merchantReference)}`;
  const response = await fetch(url, { method: "POST" });
  if (!response.ok) throw new Error(`the stand-in answered ${response.status}`);
  return (await response.json()) as NotificationRequestBody[];
}

/** From a suite in another process: the bank sends the confirmed payout of `merchantReference` back. */
export async function returnPayoutAt(standInUrl: string, merchantReference: string, reason?: string): Promise<void> {
  const query = new URLSearchParams({ merchantReference, ...(reason === undefined ? {} : { reason }) });
  const response = await fetch(`${standInUrl}/__stand-in/payouts/return?${query}`, { method: "POST" });
  if (!response.ok) throw new Error(`the stand-in answered ${response.status}: ${await response.text()}`);
}

/**
 * Delivers notifications as Adyen does (one POST per item, JSON, Basic-free: the HMAC is the proof),
 * each `times` times, in an order shuffled by `seed` (deterministic, so a failure can be replayed).
 * Answers are returned in delivery order; Adyen would redeliver any that is not a 2xx.
 */
export async function deliverNotifications(
  url: string,
  bodies: readonly NotificationRequestBody[],
  options: { times?: number; seed?: number } = {},
): Promise<Array<{ status: number; text: string }>> {
  const copies = bodies.flatMap((body) => Array.from({ length: options.times ?? 1 }, () => body));
  if (options.seed !== undefined) shuffle(copies, options.seed);
  const answers: Array<{ status: number; text: string }> = [];
  for (const body of copies) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    answers.push({ status: response.status, text: await response.text() });
  }
  return answers;
}

/** Fisher-Yates with a small seeded generator (mulberry32). */
function shuffle<T>(items: T[], seed: number): void {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}

/** From a suite in another process: one of the side door's controls (`control` above); its JSON answer. */
export async function controlAt(
  standInUrl: string,
  control: "refunds/reverse" | "chargeback" | "prearbitration" | "performed",
  query: Record<string, string>,
): Promise<Record<string, string>> {
  const response = await fetch(`${standInUrl}/__stand-in/${control}?${new URLSearchParams(query)}`, { method: "POST" });
  if (!response.ok) throw new Error(`the stand-in answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, string>;
}
