import {
  type Acquirer,
  AcquirerInDoubt,
  AcquirerRefused,
  AcquirerUnsupported,
  type CardAuthorization,
  createAdyenConnector,
  outcomeOf,
  verifyItem,
} from "@payments/server/adyen";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AdyenStack, startAdyenStack } from "../support/adyen-stand-in/index.ts";
import type { RunningProxy } from "../support/adyen-stand-in/prism-proxy.ts";
import type { AdyenStandIn } from "../support/adyen-stand-in/stand-in.ts";
import { eventually } from "../support/eventually.ts";

// The Adyen connector (server/src/adapters/adyen/) against the stand-in, through Prism's validating proxy
// loaded with Adyen's own Checkout v71, Payout v50 and Disputes v30 documents: every request the connector
// sends and every answer the stand-in gives is checked against Adyen's contract, and the suite ends by
// asserting Prism reported no violation at all.

const NOW = new Date("2026-11-27T12:00:00Z");

let stack: AdyenStack;
let standIn: AdyenStandIn;
let adyen: Acquirer;
let API_KEY: string;
let HMAC_KEY: string;

beforeAll(async () => {
  stack = await startAdyenStack({ now: () => NOW });
  standIn = stack.standIn;
  API_KEY = stack.settings.apiKey;
  HMAC_KEY = stack.hmacKey;
  adyen = connector(30_000);
});

afterAll(async () => {
  adyen?.close();
  await stack?.stop();
});

function connector(timeoutMs: number, overrides: { apiKey?: string; payoutReviewerApiKey?: string } = {}): Acquirer {
  return createAdyenConnector({ ...stack.settings, ...overrides, timeoutMs });
}

let charges = 0;
function card(overrides: Partial<CardAuthorization> = {}): CardAuthorization {
  const chargeId = `ch_test_${++charges}`;
  return {
    chargeId,
    idempotencyKey: `${chargeId}:authorize`,
    pan: "4111111145551142",
    expMonth: 3,
    expYear: 2030,
    cvc: "737",
    amount: 1000,
    currency: "eur",
    livemode: true,
    now: NOW,
    capture: "manual",
    returnUrl: "https://payments.example/v1/charges/challenge/return",
    ...overrides,
  };
}

/** The outcomes of the notifications the stand-in has queued since the last call, each verified. */
function notified() {
  return standIn.takeNotifications().map((body) => {
    const item = body.notificationItems[0]?.NotificationRequestItem;
    if (!item) throw new Error("empty notification");
    expect(verifyItem(item, [HMAC_KEY])).toEqual({ ok: true });
    return outcomeOf(item);
  });
}

describe("Adyen connector: cards", () => {
  it("authorises with manual capture, captures in two parts and refunds, each confirmed by notification", async () => {
    const request = card();
    const authorization = await adyen.authorizeCard(request);
    expect(authorization).toMatchObject({ status: "authorized", reference: expect.stringMatching(/^[A-Z0-9]{16}$/) });
    if (authorization.status !== "authorized") return;
    const reference = authorization.reference;
    expect(notified()).toMatchObject([{ type: "authorization", succeeded: true, merchantReference: request.chargeId }]);

    const money = { reference, merchantReference: request.chargeId, currency: "eur" };
    const first = await adyen.capture({ ...money, amount: 600, idempotencyKey: `${request.chargeId}:capture:1` });
    const second = await adyen.capture({ ...money, amount: 400, idempotencyKey: `${request.chargeId}:capture:2` });
    expect(first.status).toBe("received");
    expect(second.reference).not.toBe(first.reference);
    const refund = await adyen.refund({
      reference,
      merchantReference: "re_test_1",
      amount: 300,
      currency: "eur",
      idempotencyKey: "re_test_1:refund",
    });
    expect(notified()).toMatchObject([
      { type: "capture", succeeded: true, paymentReference: reference, modificationReference: first.reference },
      { type: "capture", succeeded: true, money: { amount: 400, currency: "EUR" } },
      { type: "refund", succeeded: true, modificationReference: refund.reference, merchantReference: "re_test_1" },
    ]);
    // Every mutating call carried the key its caller derived.
    const keys = standIn.received.map((r) => r.idempotencyKey);
    expect(keys).toEqual(
      expect.arrayContaining([
        request.idempotencyKey,
        `${request.chargeId}:capture:1`,
        `${request.chargeId}:capture:2`,
        "re_test_1:refund",
      ]),
    );
  });

  it("a capture past what is authorised is received, then refused by notification", async () => {
    const request = card();
    const authorization = await adyen.authorizeCard(request);
    if (authorization.status !== "authorized") throw new Error("not authorised");
    notified();
    await adyen.capture({
      reference: authorization.reference,
      merchantReference: request.chargeId,
      amount: 1500,
      currency: "EUR",
      idempotencyKey: `${request.chargeId}:capture`,
    });
    expect(notified()).toMatchObject([{ type: "capture", succeeded: false, late: false }]);
  });

  it("captures immediately when asked, and cancels an uncaptured authorisation", async () => {
    const immediate = await adyen.authorizeCard(card({ capture: "immediate" }));
    if (immediate.status !== "authorized") throw new Error("not authorised");
    expect(standIn.payments.get(immediate.reference)?.captured).toBe(1000);

    const held = card();
    const authorization = await adyen.authorizeCard(held);
    if (authorization.status !== "authorized") throw new Error("not authorised");
    notified();
    await adyen.cancel({
      reference: authorization.reference,
      merchantReference: held.chargeId,
      idempotencyKey: `${held.chargeId}:void`,
    });
    expect(notified()).toMatchObject([{ type: "cancellation", succeeded: true }]);
  });

  it("maps refusals to our failure codes (Adyen's holder-name triggers, our test cards, expiry)", async () => {
    const cases: Array<[Partial<CardAuthorization>, string]> = [
      [{ holderName: "NOT_ENOUGH_BALANCE" }, "insufficient_funds"],
      [{ holderName: "DECLINED" }, "card_declined"],
      [{ holderName: "ISSUER_UNAVAILABLE" }, "processing_error"],
      [{ pan: "4000000000000002" }, "card_declined"],
      [{ pan: "4000000000009995" }, "insufficient_funds"],
      [{ expMonth: 1, expYear: 2026 }, "expired_card"],
    ];
    for (const [overrides, failureCode] of cases) {
      expect(await adyen.authorizeCard(card(overrides)), failureCode).toMatchObject({
        status: "declined",
        failureCode,
      });
    }
  });

  it("asks for 3-D Secure by redirect and completes it with the redirectResult the payer brings back", async () => {
    for (const outcome of ["authorised", "refused"] as const) {
      const request = card({ pan: "4917610000000000" });
      const challenge = await adyen.authorizeCard(request);
      expect(challenge).toMatchObject({
        status: "requires_action",
        action: { type: "redirect_to_url", method: "GET", url: expect.stringContaining("/3ds/challenge") },
      });
      if (challenge.status !== "requires_action" || !challenge.reference) throw new Error("no challenge");
      const redirectResult = standIn.completeChallenge(challenge.reference, outcome);
      const completed = await adyen.completeAuthentication({
        redirectResult,
        idempotencyKey: `${request.chargeId}:authenticate`,
      });
      expect(completed).toMatchObject(
        outcome === "authorised"
          ? { status: "authorized", reference: challenge.reference }
          : { status: "declined", failureCode: "authentication_failed" },
      );
    }
  });
});

describe("Adyen connector: idempotency and doubt", () => {
  it("a repeated call with the same key moves money once and answers the same", async () => {
    const request = card();
    const [a, b] = [await adyen.authorizeCard(request), await adyen.authorizeCard(request)];
    expect(b).toEqual(a);
    expect(standIn.performed.authorisation.get(request.chargeId)).toBe(1);
  });

  it("a time-out or a 5xx is in doubt; repeating with the same key resolves it without a second authorisation", async () => {
    const impatient = connector(1_500);
    try {
      for (const fault of ["no_answer", "error_before", "error_after"] as const) {
        const request = card();
        standIn.injectFault("/payments", fault);
        await expect(impatient.authorizeCard(request), fault).rejects.toBeInstanceOf(AcquirerInDoubt);
        const resolved = await adyen.authorizeCard(request);
        expect(resolved.status, fault).toBe("authorized");
        expect(standIn.performed.authorisation.get(request.chargeId), fault).toBe(1);
      }
    } finally {
      impatient.close();
    }
  });
});

describe("Adyen connector: refusals of the request itself", () => {
  it("a wrong API key is refused (nothing moved, not in doubt), and the message never repeats the key or the card", async () => {
    const wrong = connector(30_000, { apiKey: "AQE-wrong-key" });
    try {
      const request = card();
      const error = await wrong.authorizeCard(request).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AcquirerRefused);
      expect(error).toMatchObject({ status: 401 });
      expect(String((error as Error).message)).not.toContain("AQE-wrong-key");
      expect(String((error as Error).message)).not.toContain(request.pan);
      expect(standIn.performed.authorisation.get(request.chargeId)).toBeUndefined();
    } finally {
      wrong.close();
    }
  });

  it("a modification of a payment Adyen does not know is refused with Adyen's error code", async () => {
    await expect(
      adyen.capture({
        reference: "UNKNOWN000000000",
        merchantReference: "ch_unknown",
        amount: 100,
        currency: "EUR",
        idempotencyKey: "ch_unknown:capture",
      }),
    ).rejects.toMatchObject({ name: "AcquirerRefused", status: 422, errorCode: "167" });
  });
});

describe("Adyen connector: local methods and payouts", () => {
  const local = (method: "pix" | "oxxo" | "boleto" | "sepa_debit" | "spei", currency: string) => {
    const chargeId = `ch_local_${++charges}`;
    return {
      chargeId,
      idempotencyKey: `${chargeId}:start`,
      method,
      amount: 5000,
      currency,
      now: NOW,
      returnUrl: "https://payments.example/return",
    };
  };

  it("starts pix, OXXO and SEPA payments and learns their outcome by notification", async () => {
    const pix = await adyen.startLocalPayment(local("pix", "BRL"));
    expect(pix.nextAction).toMatchObject({
      type: "display_qr_code",
      reference: pix.reference,
      qr_payload: expect.stringContaining("br.gov.bcb.pix"),
    });
    const oxxo = await adyen.startLocalPayment(local("oxxo", "MXN"));
    expect(oxxo.nextAction).toMatchObject({ type: "display_voucher", reference: `VCH${oxxo.reference}` });
    const sepa = await adyen.startLocalPayment({
      ...local("sepa_debit", "EUR"),
      iban: "DE89370400440532013000",
      payer: { firstName: "Ana", lastName: "Lima" },
    });
    expect(sepa.nextAction.type).toBe("await_debit");
    notified();
    standIn.settleLocal(pix.reference, true);
    standIn.settleLocal(oxxo.reference, false);
    expect(notified()).toMatchObject([
      { type: "authorization", succeeded: true, paymentReference: pix.reference },
      { type: "authorization", succeeded: false, paymentReference: oxxo.reference },
    ]);
  });

  it("refuses what Adyen lacks (SPEI) or cannot take without payer data (boleto), without calling it", async () => {
    const before = standIn.received.length;
    await expect(adyen.startLocalPayment(local("spei", "MXN"))).rejects.toBeInstanceOf(AcquirerUnsupported);
    await expect(adyen.startLocalPayment(local("boleto", "BRL"))).rejects.toThrow(/CPF/);
    expect(standIn.received.length).toBe(before);
  });

  const holder = {
    email: "finance@merchant.example",
    shopperReference: "acct_1",
    entityType: "Company" as const,
    nationality: "DE",
    dateOfBirth: "1990-01-01",
  };

  it("pays a cashout to an IBAN through the payout API: submitted, confirmed, then PAYOUT_THIRDPARTY", async () => {
    const sent = await adyen.payout({
      cashoutId: "co_test_1",
      merchantId: "mch_test_1",
      idempotencyKey: "co_test_1:payout",
      livemode: true,
      amount: 25_000,
      currency: "EUR",
      destination: { type: "iban", iban: "DE89370400440532013000", account_holder: "Merchant GmbH" },
      holder,
    });
    expect(sent.reference).toMatch(/^[A-Z0-9]{16}$/);
    // Payout v50's document declares no Idempotency-Key, but the connector sends it all the same.
    expect(standIn.received).toContainEqual({
      path: "/storeDetailAndSubmitThirdParty",
      idempotencyKey: "co_test_1:payout",
    });
    // Submitted only: nothing is paid (nor notified) until the payout is confirmed.
    expect(notified()).toEqual([]);
    await adyen.confirmPayout({ idempotencyKey: "co_test_1:payout:confirm", reference: sent.reference });
    // Confirmed again with the same key (a crash before the reference was recorded): Adyen's stored answer.
    await adyen.confirmPayout({ idempotencyKey: "co_test_1:payout:confirm", reference: sent.reference });
    expect(standIn.performed.payout_confirm.get("co_test_1")).toBe(1);
    expect(standIn.received).toContainEqual({
      path: "/confirmThirdParty",
      idempotencyKey: "co_test_1:payout:confirm",
    });
    expect(notified()).toMatchObject([
      { type: "payout", status: "paid", payoutReference: sent.reference, merchantReference: "co_test_1" },
    ]);
  });

  it("confirms and declines with the reviewer's credential only; the wrong one is refused 403, never in doubt", async () => {
    const submission = (id: string) =>
      ({
        cashoutId: id,
        merchantId: "mch_test_1",
        idempotencyKey: `${id}:payout`,
        livemode: true,
        amount: 1_000,
        currency: "EUR",
        destination: { type: "iban", iban: "DE89370400440532013000", account_holder: "Merchant GmbH" },
        holder,
      }) as const;
    const { apiKey, payoutReviewerApiKey } = stack.settings;
    // No reviewer key: the submitter's confirms, and Adyen (the stand-in, with two credentials) refuses it.
    const single = connector(5_000, { payoutReviewerApiKey: apiKey });
    const sent = await single.payout(submission("co_test_rev"));
    const refusedConfirm = await single
      .confirmPayout({ idempotencyKey: "co_test_rev:payout:confirm", reference: sent.reference })
      .catch((e: unknown) => e);
    expect(refusedConfirm).toBeInstanceOf(AcquirerRefused);
    expect(refusedConfirm).toMatchObject({ status: 403, errorCode: "010" });
    expect(String(refusedConfirm)).not.toContain(apiKey);
    // The reviewer's key submitting is refused too: each credential does its own part only.
    const swapped = connector(5_000, { apiKey: payoutReviewerApiKey });
    await expect(swapped.payout(submission("co_test_rev2"))).rejects.toMatchObject({ status: 403 });
    expect(standIn.reviewerRefusals.slice(-2)).toEqual([
      { path: "/confirmThirdParty", reviewerKey: false },
      { path: "/storeDetailAndSubmitThirdParty", reviewerKey: true },
    ]);
    // The configured connector declines with the reviewer's key: never paid, PAYOUT_DECLINE.
    notified();
    await adyen.declinePayout({ idempotencyKey: "co_test_rev:payout:decline", reference: sent.reference });
    expect(standIn.payouts.get(sent.reference)?.status).toBe("declined");
    expect(notified()).toMatchObject([{ type: "payout", status: "declined", merchantReference: "co_test_rev" }]);
    single.close();
    swapped.close();
  });

  it("refuses a destination Adyen's payout API cannot pay, never simulating it", async () => {
    await expect(
      adyen.payout({
        cashoutId: "co_test_2",
        merchantId: "mch_test_1",
        idempotencyKey: "co_test_2:payout",
        livemode: true,
        amount: 100,
        currency: "BRL",
        destination: { type: "pix", key: "ana@example.com", key_type: "email" },
        holder,
      }),
    ).rejects.toThrow(/IBAN only/);
  });
});

describe("Adyen connector: disputes", () => {
  it("lists a chargeback's defense reasons, supplies the document one needs, and defends it", async () => {
    const authorization = await adyen.authorizeCard(card({ capture: "immediate" }));
    if (authorization.status !== "authorized") throw new Error("not authorised");
    const dispute = standIn.chargeback(authorization.reference);
    expect(notified()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "dispute", stage: "chargeback", disputeReference: dispute }),
      ]),
    );
    const [reason] = await adyen.defenseReasons(dispute);
    expect(reason).toEqual({
      code: "GoodsOrServicesProvided",
      satisfied: false,
      documents: [{ type: "TIDorInvoice", requirement: "Required", available: false }],
    });
    // Defending before the required document is there is refused by Adyen, and says why.
    await expect(
      adyen.defendDispute({
        disputeReference: dispute,
        reasonCode: "GoodsOrServicesProvided",
        idempotencyKey: "dp_1:defend",
      }),
    ).rejects.toThrow(/documents are missing/);
    await adyen.supplyDefenseDocuments(dispute, [
      { type: "TIDorInvoice", contentType: "application/pdf", content: Buffer.from("%PDF-1.4 invoice") },
    ]);
    expect((await adyen.defenseReasons(dispute))[0]?.satisfied).toBe(true);
    await adyen.defendDispute({
      disputeReference: dispute,
      reasonCode: "GoodsOrServicesProvided",
      idempotencyKey: "dp_1:defend:2",
    });
  });

  it("accepts a chargeback once", async () => {
    const authorization = await adyen.authorizeCard(card({ capture: "immediate" }));
    if (authorization.status !== "authorized") throw new Error("not authorised");
    const dispute = standIn.chargeback(authorization.reference);
    notified();
    await adyen.acceptDispute({ disputeReference: dispute, idempotencyKey: "dp_2:accept" });
    await expect(
      adyen.acceptDispute({ disputeReference: dispute, idempotencyKey: "dp_2:accept:again" }),
    ).rejects.toThrow(/not open/);
  });
});

describe("Adyen's contract", () => {
  it("Prism reported no violation of Checkout v71, Payout v50 or Disputes v30, in either direction", async () => {
    // A request outside the contract, last, shows the count is live and that Prism's log has caught up
    // with every earlier request (it logs in order): then it must be the only violation.
    const probes: Array<[RunningProxy, string]> = [
      [stack.proxies.checkout, "/payments/details"],
      [stack.proxies.payouts, "/confirmThirdParty"],
      [stack.proxies.disputes, "/acceptDispute"],
    ];
    for (const [proxy, path] of probes) {
      const response = await fetch(`${proxy.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": API_KEY },
        body: JSON.stringify({ outside: "the contract" }),
      });
      expect(response.status).toBe(422);
      const violations = await eventually(
        `Prism's log of the probe on ${path}`,
        () => proxy.violations(),
        (lines) => lines.some((line) => line.includes(path)),
      );
      expect(violations).toHaveLength(1);
      expect(violations[0]).toMatch(/UNPROCESSABLE_ENTITY/);
    }
  });
});
