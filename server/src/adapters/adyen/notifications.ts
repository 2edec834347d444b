import { createHmac, timingSafeEqual } from "node:crypto";
import type { DisputeStage } from "../../domain/disputes/acquirer-outcomes.ts";
import { isRecord } from "../../guards.ts";
import type { components } from "./contract/webhooks.ts";

// Adyen's standard notifications (contract/webhooks.json, Webhooks v1): Adyen POSTs
// `{ live, notificationItems: [{ NotificationRequestItem }] }` and redelivers until it gets a 2xx. Each
// item carries its own HMAC signature in `additionalData.hmacSignature` (Adyen's "Verify HMAC signatures"):
// HMAC-SHA256, keyed by the hex-decoded HMAC key from the Customer Area, over
//   pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success
// (a missing field is the empty string), Base64-encoded. Nothing here touches the store: exactly-once
// processing needs it, so this module gives the key to deduplicate on (`dedupeKey`) and a domain-neutral
// outcome per item (`outcomeOf`); the endpoint that records and applies them is wired in the server.

type Schemas = components["schemas"];

/** One notification item as Webhooks v1 declares it (the item schemas share these fields). */
export type NotificationItem =
  | Schemas["AuthorisationNotificationRequestItem"]
  | Schemas["CaptureNotificationRequestItem"]
  | Schemas["CancellationNotificationRequestItem"]
  | Schemas["RefundNotificationRequestItem"]
  | Schemas["ModificationNotificationRequestItem"]
  | Schemas["CancelOrRefundNotificationRequestItem"]
  | Schemas["DisputesNotificationRequestItem"]
  | Schemas["PayoutNotificationRequestItem"]
  | Schemas["PaidoutReversedNotificationRequestItem"];

/** The body Adyen POSTs (every kept webhook's request body has this shape). */
export type NotificationRequest = Schemas["CaptureNotificationRequest"];

/**
 * What Adyen expects back once the items are stored: any 2xx; `[accepted]` is the body its older
 * integrations look for and its documentation still shows, so the endpoint answers exactly that.
 */
export const NOTIFICATION_ACKNOWLEDGEMENT = "[accepted]";

/** The string Adyen signs for a standard notification item. */
export function signingString(item: NotificationItem): string {
  const originalReference = "originalReference" in item ? item.originalReference : undefined;
  return [
    item.pspReference,
    originalReference ?? "",
    item.merchantAccountCode,
    item.merchantReference,
    String(item.amount.value ?? ""),
    item.amount.currency ?? "",
    item.eventCode,
    item.success,
  ].join(":");
}

/** A hex HMAC key from the Customer Area, as bytes; refuses anything else (a mistyped setting). */
export function hmacKeyBytes(hexKey: string): Buffer {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hexKey)) {
    throw new Error(
      "The Adyen HMAC key must be the hexadecimal key the Customer Area shows (an even number of 0-9a-f)",
    );
  }
  return Buffer.from(hexKey, "hex");
}

/** The item's signature under `hexKey` (what Adyen puts in `additionalData.hmacSignature`). */
export function signItem(item: NotificationItem, hexKey: string): string {
  return createHmac("sha256", hmacKeyBytes(hexKey)).update(signingString(item), "utf8").digest("base64");
}

export type Verification = { ok: true } | { ok: false; reason: "unsigned" | "wrong_signature" };

/**
 * Checks an item's signature against every current key (more than one while a key is being rotated:
 * Adyen signs with the new key as soon as it is generated). Constant-time per key: the comparison
 * never stops at the first differing byte, and a signature of the wrong length is refused before it.
 */
export function verifyItem(item: NotificationItem, hexKeys: readonly string[]): Verification {
  // Not every item schema lists hmacSignature in its additionalData, though Adyen signs every item.
  const data: unknown = item.additionalData;
  const given = isRecord(data) ? data.hmacSignature : undefined;
  if (typeof given !== "string" || given === "") return { ok: false, reason: "unsigned" };
  const givenBytes = Buffer.from(given, "base64");
  const signed = signingString(item);
  let matched = false;
  for (const key of hexKeys) {
    const expected = createHmac("sha256", hmacKeyBytes(key)).update(signed, "utf8").digest();
    if (expected.length === givenBytes.length && timingSafeEqual(expected, givenBytes)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: "wrong_signature" };
}

/** What a refused item is logged with: never its body (amounts, references of a forged item, card data). */
export interface RefusedItem {
  index: number;
  reason: Extract<Verification, { ok: false }>["reason"] | "malformed";
  eventCode?: string;
}

export interface Warner {
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * Splits a notification request into the items whose signature holds and those refused. Refused items
 * are logged by position, reason and event code only. A body that is not Webhooks v1's shape yields no
 * item at all (one "malformed" refusal).
 */
export function verifyNotification(
  body: unknown,
  hexKeys: readonly string[],
  log: Warner,
): { accepted: NotificationItem[]; refused: RefusedItem[]; live: boolean } {
  const request = isRecord(body) ? body : undefined;
  const wrappers: unknown[] | undefined = Array.isArray(request?.notificationItems)
    ? request.notificationItems
    : undefined;
  if (!wrappers) {
    const refused: RefusedItem[] = [{ index: 0, reason: "malformed" }];
    log.warn({ refused }, "Adyen notification refused: the body is not a standard notification (no notificationItems)");
    return { accepted: [], refused, live: false };
  }
  const accepted: NotificationItem[] = [];
  const refused: RefusedItem[] = [];
  wrappers.forEach((wrapper, index) => {
    const item = isRecord(wrapper) ? wrapper.NotificationRequestItem : undefined;
    if (!wellFormed(item)) {
      refused.push({ index, reason: "malformed" });
      return;
    }
    const verdict = verifyItem(item, hexKeys);
    if (verdict.ok) accepted.push(item);
    else refused.push({ index, reason: verdict.reason, eventCode: knownEventCode(item.eventCode) });
  });
  if (refused.length > 0) {
    log.warn(
      { refused, items: wrappers.length },
      "Adyen notification items refused: unsigned, wrongly signed or malformed (is the HMAC key the one set for this notification URL in the Customer Area?)",
    );
  }
  return { accepted, refused, live: request?.live === "true" };
}

function wellFormed(item: unknown): item is NotificationItem {
  if (!isRecord(item)) return false;
  const { amount } = item;
  return (
    typeof item.pspReference === "string" &&
    typeof item.eventCode === "string" &&
    typeof item.success === "string" &&
    typeof item.merchantAccountCode === "string" &&
    typeof item.merchantReference === "string" &&
    !!amount &&
    typeof amount === "object"
  );
}

const EVENT_CODES = new Set<string>([
  "AUTHORISATION",
  "CAPTURE",
  "CAPTURE_FAILED",
  "CANCELLATION",
  "REFUND",
  "REFUND_FAILED",
  "CANCEL_OR_REFUND",
  "CHARGEBACK",
  "CHARGEBACK_REVERSED",
  "NOTIFICATION_OF_CHARGEBACK",
  "REQUEST_FOR_INFORMATION",
  "SECOND_CHARGEBACK",
  "PAYOUT_THIRDPARTY",
  "PAYOUT_DECLINE",
  "PAYOUT_EXPIRE",
  "PAIDOUT_REVERSED",
  "REFUNDED_REVERSED",
  "PREARBITRATION_WON",
  "PREARBITRATION_LOST",
]);

/** The event code when it is one Adyen defines (safe to log), otherwise undefined. */
function knownEventCode(code: string): string | undefined {
  return EVENT_CODES.has(code) ? code : undefined;
}

/**
 * Adyen redelivers an item until acknowledged, and may deliver one event more than once: its
 * documentation names pspReference + eventCode + success as what identifies one event. The store keeps
 * this key unique; an item whose key is already stored is acknowledged and not applied again.
 */
export function dedupeKey(item: NotificationItem): string {
  return `${item.pspReference}:${item.eventCode}:${item.success}`;
}

export interface Money {
  /** Minor units, as Adyen sends them (`amount.value`). */
  amount: number;
  currency: string;
}

/**
 * What an item means, in terms of our objects rather than Adyen's: which payment (Adyen's pspReference
 * of the authorization, the `reference` the connector returned) and, for a modification, which one.
 * `merchantReference` is the reference the connector sent (our charge, refund or cashout id).
 */
export type NotificationOutcome =
  | {
      type: "authorization";
      /** Authorised (asynchronous methods: pix, boleto, OXXO, SEPA, 3-D Secure completed elsewhere) or not. */
      succeeded: boolean;
      paymentReference: string;
      merchantReference: string;
      money: Money;
      reason?: string;
    }
  | {
      /** CAPTURE (success true/false), CAPTURE_FAILED (`late`: a capture confirmed earlier failed at the scheme). */
      type: "capture" | "cancellation" | "refund" | "cancel_or_refund";
      succeeded: boolean;
      /** REFUND_FAILED or CAPTURE_FAILED: an earlier confirmation is taken back. */
      late: boolean;
      paymentReference: string;
      modificationReference: string;
      merchantReference: string;
      money: Money;
      reason?: string;
    }
  | {
      type: "dispute";
      /**
       * NOTIFICATION_OF_CHARGEBACK and REQUEST_FOR_INFORMATION (opened, no money moved yet), CHARGEBACK
       * (debited), SECOND_CHARGEBACK, CHARGEBACK_REVERSED (won), PREARBITRATION_WON / _LOST. The disputes
       * area's own union, so a stage reported here is one it applies (one home: disputes/acquirer-outcomes.ts).
       */
      stage: DisputeStage;
      paymentReference: string;
      disputeReference: string;
      merchantReference: string;
      money: Money;
      reasonCode?: string;
      defensePeriodEndsAt?: string;
      reason?: string;
    }
  | {
      /** PAYOUT_THIRDPARTY (paid or failed), PAYOUT_DECLINE (declined by the reviewer), PAYOUT_EXPIRE, PAIDOUT_REVERSED (returned by the bank). */
      type: "payout";
      status: "paid" | "failed" | "declined" | "expired" | "returned";
      payoutReference: string;
      merchantReference: string;
      money: Money;
      reason?: string;
    }
  | { type: "unhandled"; eventCode: string; pspReference: string };

/** Maps a verified item to its outcome. */
export function outcomeOf(item: NotificationItem): NotificationOutcome {
  const succeeded = item.success === "true";
  const money: Money = { amount: Number(item.amount.value ?? 0), currency: item.amount.currency ?? "" };
  const reason = item.reason === undefined || item.reason === "" ? {} : { reason: item.reason };
  const originalReference = ("originalReference" in item ? item.originalReference : undefined) ?? "";
  const modification = (type: "capture" | "cancellation" | "refund" | "cancel_or_refund", late = false) =>
    ({
      type,
      succeeded: late ? false : succeeded,
      late,
      paymentReference: originalReference,
      modificationReference: item.pspReference,
      merchantReference: item.merchantReference,
      money,
      ...reason,
    }) as const;
  const dispute = (stage: DisputeStage) => {
    const data: unknown = item.additionalData;
    const text = (key: string) => {
      const value = isRecord(data) ? data[key] : undefined;
      return typeof value === "string" ? { [key]: value } : {};
    };
    const { chargebackReasonCode } = text("chargebackReasonCode");
    const { defensePeriodEndsAt } = text("defensePeriodEndsAt");
    return {
      type: "dispute",
      stage,
      paymentReference: originalReference,
      disputeReference: item.pspReference,
      merchantReference: item.merchantReference,
      money,
      ...(chargebackReasonCode === undefined ? {} : { reasonCode: chargebackReasonCode }),
      ...(defensePeriodEndsAt === undefined ? {} : { defensePeriodEndsAt }),
      ...reason,
    } as const;
  };
  const payout = (status: "paid" | "failed" | "declined" | "expired" | "returned") =>
    ({
      type: "payout",
      status,
      payoutReference: item.pspReference,
      merchantReference: item.merchantReference,
      money,
      ...reason,
    }) as const;

  switch (item.eventCode) {
    case "AUTHORISATION":
      return {
        type: "authorization",
        succeeded,
        paymentReference: item.pspReference,
        merchantReference: item.merchantReference,
        money,
        ...reason,
      };
    case "CAPTURE":
      return modification("capture");
    case "CAPTURE_FAILED":
      return modification("capture", true);
    case "CANCELLATION":
      return modification("cancellation");
    case "REFUND":
      return modification("refund");
    case "REFUND_FAILED":
      return modification("refund", true);
    // The refunded money came back to Adyen (the shopper's account closed, the scheme returned it): for
    // our refund it is a refund that failed after its confirmation, as REFUND_FAILED is (the charge's
    // refunded amount goes back down; docs/going-live-with-adyen.md "Notifications (Webhooks v1) as outcomes").
    case "REFUNDED_REVERSED":
      return modification("refund", true);
    case "CANCEL_OR_REFUND":
      return modification("cancel_or_refund");
    // Both announce a dispute before any money moves: our inquiry (issue 31's warning_needs_response).
    case "NOTIFICATION_OF_CHARGEBACK":
    case "REQUEST_FOR_INFORMATION":
      return dispute("notified");
    case "CHARGEBACK":
      return dispute("chargeback");
    case "SECOND_CHARGEBACK":
      return dispute("second_chargeback");
    case "CHARGEBACK_REVERSED":
      return dispute("reversed");
    // Pre-arbitration: the card networks' last word on a dispute decided twice (domain/disputes/
    // acquirer-outcomes.ts: recorded on the dispute, the outcome it ends with whatever came before).
    case "PREARBITRATION_WON":
      return dispute("prearbitration_won");
    case "PREARBITRATION_LOST":
      return dispute("prearbitration_lost");
    case "PAYOUT_THIRDPARTY":
      return payout(succeeded ? "paid" : "failed");
    case "PAYOUT_DECLINE":
      return payout("declined");
    case "PAYOUT_EXPIRE":
      return payout("expired");
    case "PAIDOUT_REVERSED":
      return payout("returned");
    default:
      return { type: "unhandled", eventCode: item.eventCode, pspReference: item.pspReference };
  }
}
