import { describe, expect, it } from "vitest";
import {
  dedupeKey,
  type NotificationItem,
  outcomeOf,
  signItem,
  signingString,
  verifyItem,
  verifyNotification,
} from "./notifications.ts";

const KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
const OTHER_KEY = "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF";

function item(overrides: Partial<NotificationItem> = {}): NotificationItem {
  return {
    pspReference: "QFQTPCQ8HXSKGK82",
    originalReference: "9913140798220028",
    merchantAccountCode: "PaymentsPlatformECOM",
    merchantReference: "ch_1",
    amount: { value: 1000, currency: "EUR" },
    eventCode: "CAPTURE",
    eventDate: "2026-11-27T10:00:00+01:00",
    success: "true",
    ...overrides,
  } as NotificationItem;
}

function signed(base: NotificationItem, key = KEY): NotificationItem {
  return { ...base, additionalData: { hmacSignature: signItem(base, key) } } as NotificationItem;
}

const silent = { warn() {} };

describe("Adyen notification signatures", () => {
  it("signs the eight fields in Adyen's order, a missing one as empty", () => {
    expect(signingString(item())).toBe(
      "QFQTPCQ8HXSKGK82:9913140798220028:PaymentsPlatformECOM:ch_1:1000:EUR:CAPTURE:true",
    );
    const { originalReference: _, ...authorisation } = item({ eventCode: "AUTHORISATION" }) as Record<string, unknown>;
    expect(signingString(authorisation as NotificationItem)).toBe(
      "QFQTPCQ8HXSKGK82::PaymentsPlatformECOM:ch_1:1000:EUR:AUTHORISATION:true",
    );
  });

  it("accepts a correctly signed item, under any current key (rotation)", () => {
    expect(verifyItem(signed(item()), [KEY])).toEqual({ ok: true });
    expect(verifyItem(signed(item(), OTHER_KEY), [KEY, OTHER_KEY])).toEqual({ ok: true });
  });

  it("refuses an unsigned item, a wrong key and every signed field tampered with", () => {
    expect(verifyItem(item(), [KEY])).toEqual({ ok: false, reason: "unsigned" });
    expect(verifyItem(signed(item(), OTHER_KEY), [KEY])).toEqual({ ok: false, reason: "wrong_signature" });
    const good = signed(item());
    const tampered: Partial<NotificationItem>[] = [
      { pspReference: "QFQTPCQ8HXSKGK83" },
      { merchantReference: "ch_2" },
      { merchantAccountCode: "Other" },
      { amount: { value: 100000, currency: "EUR" } },
      { amount: { value: 1000, currency: "USD" } },
      { eventCode: "REFUND" },
      { success: "false" },
    ];
    for (const change of tampered) {
      expect(verifyItem({ ...good, ...change } as NotificationItem, [KEY])).toEqual({
        ok: false,
        reason: "wrong_signature",
      });
    }
    // A signature of the wrong length (truncated) is refused, not thrown on.
    const truncated = { ...good, additionalData: { hmacSignature: "AAAA" } } as NotificationItem;
    expect(verifyItem(truncated, [KEY])).toEqual({ ok: false, reason: "wrong_signature" });
  });

  it("refuses a key that is not hexadecimal rather than signing with garbage", () => {
    expect(() => signItem(item(), "not-a-key")).toThrow(/hexadecimal/);
  });

  it("splits a request into accepted and refused items and logs the refused without their body", () => {
    const warnings: Array<Record<string, unknown>> = [];
    const body = {
      live: "false",
      notificationItems: [
        { NotificationRequestItem: signed(item()) },
        { NotificationRequestItem: item({ merchantReference: "ch_secret_reference" }) },
        { NotificationRequestItem: { eventCode: "CAPTURE" } },
      ],
    };
    const result = verifyNotification(body, [KEY], { warn: (fields) => warnings.push(fields) });
    expect(result.accepted).toHaveLength(1);
    expect(result.refused).toEqual([
      { index: 1, reason: "unsigned", eventCode: "CAPTURE" },
      { index: 2, reason: "malformed" },
    ]);
    expect(JSON.stringify(warnings)).not.toContain("ch_secret_reference");
    expect(JSON.stringify(warnings)).not.toContain("1000");
    expect(verifyNotification({ hello: 1 }, [KEY], silent).refused).toEqual([{ index: 0, reason: "malformed" }]);
  });
});

describe("Adyen notification outcomes", () => {
  it("names one event by pspReference, eventCode and success", () => {
    expect(dedupeKey(item())).toBe("QFQTPCQ8HXSKGK82:CAPTURE:true");
    expect(dedupeKey(item({ success: "false" }))).not.toBe(dedupeKey(item()));
  });

  it("maps each event code to a domain-neutral outcome", () => {
    const cases: Array<[Partial<NotificationItem>, Record<string, unknown>]> = [
      [
        { eventCode: "AUTHORISATION", success: "false", reason: "Refused" },
        { type: "authorization", succeeded: false, paymentReference: "QFQTPCQ8HXSKGK82", reason: "Refused" },
      ],
      [
        { eventCode: "CAPTURE" },
        { type: "capture", succeeded: true, late: false, paymentReference: "9913140798220028" },
      ],
      [{ eventCode: "CAPTURE_FAILED" }, { type: "capture", succeeded: false, late: true }],
      [
        { eventCode: "CANCELLATION", success: "false" },
        { type: "cancellation", succeeded: false, late: false },
      ],
      [{ eventCode: "REFUND" }, { type: "refund", succeeded: true, modificationReference: "QFQTPCQ8HXSKGK82" }],
      [{ eventCode: "REFUND_FAILED" }, { type: "refund", succeeded: false, late: true }],
      [{ eventCode: "REFUNDED_REVERSED" }, { type: "refund", succeeded: false, late: true }],
      [
        {
          eventCode: "CHARGEBACK",
          additionalData: { chargebackReasonCode: "10.4", defensePeriodEndsAt: "2026-12-20T00:00:00Z" },
        } as Partial<NotificationItem>,
        { type: "dispute", stage: "chargeback", reasonCode: "10.4", defensePeriodEndsAt: "2026-12-20T00:00:00Z" },
      ],
      [{ eventCode: "NOTIFICATION_OF_CHARGEBACK" }, { type: "dispute", stage: "notified" }],
      [{ eventCode: "REQUEST_FOR_INFORMATION" }, { type: "dispute", stage: "notified" }],
      [{ eventCode: "SECOND_CHARGEBACK" }, { type: "dispute", stage: "second_chargeback" }],
      [{ eventCode: "PREARBITRATION_WON" }, { type: "dispute", stage: "prearbitration_won" }],
      [{ eventCode: "PREARBITRATION_LOST" }, { type: "dispute", stage: "prearbitration_lost" }],
      [
        { eventCode: "CHARGEBACK_REVERSED" },
        { type: "dispute", stage: "reversed", disputeReference: "QFQTPCQ8HXSKGK82" },
      ],
      [{ eventCode: "PAYOUT_THIRDPARTY" }, { type: "payout", status: "paid" }],
      [
        { eventCode: "PAYOUT_THIRDPARTY", success: "false" },
        { type: "payout", status: "failed" },
      ],
      [{ eventCode: "PAYOUT_DECLINE" }, { type: "payout", status: "declined" }],
      [{ eventCode: "PAYOUT_EXPIRE" }, { type: "payout", status: "expired" }],
      [{ eventCode: "PAIDOUT_REVERSED" }, { type: "payout", status: "returned" }],
      [{ eventCode: "REPORT_AVAILABLE" } as unknown as Partial<NotificationItem>, { type: "unhandled" }],
    ];
    for (const [change, expected] of cases) {
      expect(outcomeOf(item(change)), String(change.eventCode)).toMatchObject(expected);
    }
    expect(outcomeOf(item())).toMatchObject({ money: { amount: 1000, currency: "EUR" }, merchantReference: "ch_1" });
  });
});
