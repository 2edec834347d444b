import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { hmacValidator as HmacValidator } from "@adyen/api-library";
import {
  type Acquirer,
  createAdyenConnector,
  dedupeKey,
  NOTIFICATION_ACKNOWLEDGEMENT,
  type NotificationItem,
  outcomeOf,
  verifyItem,
  verifyNotification,
} from "@payments/server/adyen";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADYEN_DOCUMENTS } from "../support/adyen-stand-in/prism-proxy.ts";
import {
  type AdyenStandIn,
  deliverNotifications,
  type NotificationRequestBody,
  startAdyenStandIn,
} from "../support/adyen-stand-in/stand-in.ts";

// Adyen's notifications as the stand-in sends them and the connector's verifier reads them: each is valid
// against Adyen's Webhooks v1 document for its event code, each signature is accepted by Adyen's own
// library (`@adyen/api-library`'s HmacValidator, an outside judge of our signer), tampered or unsigned
// items are refused by both, and a receiver that deduplicates on the connector's key applies each of 1,000
// notifications exactly once when every one arrives twice, shuffled.

const API_KEY = "AQE-test-api-key";
const MERCHANT = "PaymentsPlatformECOM";
const HMAC_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
const NOW = new Date("2026-11-27T12:00:00Z");

let standIn: AdyenStandIn;
let adyen: Acquirer;
const adyenLibrary = new HmacValidator();

beforeAll(async () => {
  standIn = await startAdyenStandIn({ apiKey: API_KEY, merchantAccount: MERCHANT, hmacKey: HMAC_KEY, now: () => NOW });
  // Straight to the stand-in: the contract of these calls is the connector suite's business.
  adyen = createAdyenConnector({
    apiKey: API_KEY,
    merchantAccount: MERCHANT,
    checkoutUrl: standIn.url,
    payoutUrl: standIn.url,
    disputesUrl: standIn.url,
    timeoutMs: 10_000,
  });
});

afterAll(async () => {
  adyen?.close();
  await standIn?.stop();
});

/** Each webhook's request-body validator, from Adyen's Webhooks v1 document. */
function webhookValidators() {
  const document = JSON.parse(readFileSync(ADYEN_DOCUMENTS.webhooks, "utf8"));
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema(document, "webhooks.json");
  return (eventCode: string) => {
    const ref = document.webhooks[`/${eventCode}`]?.post?.requestBody?.content?.["application/json"]?.schema?.$ref;
    if (!ref) throw new Error(`Webhooks v1 has no ${eventCode}`);
    return ajv.compile({ $ref: `webhooks.json${ref}` });
  };
}

let sequence = 0;
async function authorised(capture: "manual" | "immediate" = "manual", amount = 1000) {
  const chargeId = `ch_n_${++sequence}`;
  const result = await adyen.authorizeCard({
    chargeId,
    idempotencyKey: `${chargeId}:authorize`,
    pan: "4111111145551142",
    expMonth: 3,
    expYear: 2030,
    cvc: "737",
    amount,
    currency: "EUR",
    livemode: true,
    now: NOW,
    capture,
    returnUrl: "https://payments.example/return",
  });
  if (result.status !== "authorized") throw new Error(`not authorised: ${result.status}`);
  return { chargeId, reference: result.reference };
}

/** One notification of every kind the connector maps, made by real calls to the stand-in. */
async function everyKind(): Promise<NotificationRequestBody[]> {
  const a = await authorised();
  const money = { reference: a.reference, merchantReference: a.chargeId, currency: "EUR" };
  await adyen.capture({ ...money, amount: 1000, idempotencyKey: `${a.chargeId}:capture` });
  await adyen.refund({ ...money, amount: 400, idempotencyKey: `${a.chargeId}:refund`, merchantReference: "re_n_1" });
  await adyen.refund({ ...money, amount: 4000, idempotencyKey: `${a.chargeId}:refund:2`, merchantReference: "re_n_2" });
  const b = await authorised();
  await adyen.cancel({ reference: b.reference, merchantReference: b.chargeId, idempotencyKey: `${b.chargeId}:void` });
  const c = await authorised("immediate");
  standIn.chargeback(c.reference, { reversed: true });
  // A dispute decided twice, then pre-arbitration each way; a confirmed refund sent back (REFUNDED_REVERSED).
  const d = await authorised("immediate");
  standIn.prearbitration(standIn.chargeback(d.reference, { reversed: true, second: true }), "won");
  const e = await authorised("immediate");
  standIn.prearbitration(standIn.chargeback(e.reference, { reversed: true }), "lost");
  const reversedRefund = await adyen.refund({
    reference: e.reference,
    merchantReference: "re_n_3",
    currency: "EUR",
    amount: 100,
    idempotencyKey: `${e.chargeId}:refund`,
  });
  standIn.reverseRefund(reversedRefund.reference);
  const pix = await adyen.startLocalPayment({
    chargeId: "ch_n_pix",
    idempotencyKey: "ch_n_pix:start",
    method: "pix",
    amount: 5000,
    currency: "BRL",
    now: NOW,
    returnUrl: "https://payments.example/return",
  });
  standIn.settleLocal(pix.reference, true);
  const payout = await adyen.payout({
    cashoutId: "co_n_1",
    merchantId: "mch_n_1",
    idempotencyKey: "co_n_1:payout",
    livemode: true,
    amount: 2500,
    currency: "EUR",
    destination: { type: "iban", iban: "DE89370400440532013000", account_holder: "Merchant GmbH" },
    holder: {
      email: "finance@merchant.example",
      shopperReference: "acct_1",
      entityType: "Company",
      nationality: "DE",
      dateOfBirth: "1990-01-01",
    },
  });
  await adyen.confirmPayout({ idempotencyKey: "co_n_1:payout:confirm", reference: payout.reference });
  standIn.returnPayout(payout.reference);
  // The stand-in's test data by owner name: a reviewer's decline, an expiry.
  for (const [n, owner] of [
    [2, "PAYOUT_DECLINE"],
    [3, "PAYOUT_EXPIRE"],
  ] as const) {
    const other = await adyen.payout({
      cashoutId: `co_n_${n}`,
      merchantId: "mch_n_1",
      idempotencyKey: `co_n_${n}:payout`,
      livemode: true,
      amount: 2500,
      currency: "EUR",
      destination: { type: "iban", iban: "DE89370400440532013000", account_holder: owner },
      holder: {
        email: "finance@merchant.example",
        shopperReference: "mch_n_1",
        entityType: "Company",
        nationality: "DE",
        dateOfBirth: "1990-01-01",
      },
    });
    await adyen.confirmPayout({ idempotencyKey: `co_n_${n}:payout:confirm`, reference: other.reference });
  }
  return standIn.takeNotifications();
}

const itemOf = (body: NotificationRequestBody): NotificationItem => {
  const item = body.notificationItems[0]?.NotificationRequestItem;
  if (!item) throw new Error("a notification without an item");
  return item;
};

describe("Adyen notifications from the stand-in", () => {
  let bodies: NotificationRequestBody[];
  beforeAll(async () => {
    bodies = await everyKind();
  });

  it("covers every event the connector maps, each valid against Webhooks v1 for its event code", () => {
    const codes = bodies.map((body) => itemOf(body).eventCode);
    expect(new Set(codes)).toEqual(
      new Set([
        "AUTHORISATION",
        "CAPTURE",
        "REFUND",
        "CANCELLATION",
        "NOTIFICATION_OF_CHARGEBACK",
        "CHARGEBACK",
        "CHARGEBACK_REVERSED",
        "PAYOUT_THIRDPARTY",
        "PAIDOUT_REVERSED",
        "PAYOUT_DECLINE",
        "PAYOUT_EXPIRE",
        "SECOND_CHARGEBACK",
        "PREARBITRATION_WON",
        "PREARBITRATION_LOST",
        "REFUNDED_REVERSED",
      ]),
    );
    const validator = webhookValidators();
    // Adyen's document seals PAIDOUT_REVERSED's additionalData (NotificationAdditionalData) without
    // declaring `hmacSignature`, though Adyen signs every standard notification item: for that event the
    // item is checked with its signature set aside, and only for the events listed here.
    const signatureUndeclared = new Set<string>();
    for (const body of bodies) {
      const code = itemOf(body).eventCode;
      const validate = validator(code);
      let valid = validate(body);
      const onlySignature = validate.errors?.every((e) => e.params?.additionalProperty === "hmacSignature");
      if (!valid && onlySignature) {
        signatureUndeclared.add(code);
        const { hmacSignature: _, ...rest } = (itemOf(body).additionalData ?? {}) as Record<string, unknown>;
        valid = validate({
          ...body,
          notificationItems: [{ NotificationRequestItem: { ...itemOf(body), additionalData: rest } }],
        });
      }
      expect(valid, `${code}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    expect([...signatureUndeclared]).toEqual(["PAIDOUT_REVERSED"]);
    // The schema check is live: an item missing a required field fails it.
    const { pspReference: _, ...broken } = itemOf(bodies[0] as NotificationRequestBody);
    expect(
      validator("AUTHORISATION")({ live: "false", notificationItems: [{ NotificationRequestItem: broken }] }),
    ).toBe(false);
  });

  it("signs every item as Adyen's own library expects, and our verifier agrees with it both ways", () => {
    for (const body of bodies) {
      const item = itemOf(body);
      expect(adyenLibrary.validateHMAC(item as never, HMAC_KEY), item.eventCode).toBe(true);
      expect(verifyItem(item, [HMAC_KEY])).toEqual({ ok: true });
      // The library's signature of the same item is one our verifier accepts.
      const { additionalData: _, ...unsigned } = item as NotificationItem & { additionalData?: unknown };
      const theirs = adyenLibrary.calculateHmac(unsigned as never, HMAC_KEY);
      expect(
        verifyItem({ ...item, additionalData: { hmacSignature: theirs } } as NotificationItem, [HMAC_KEY]),
      ).toEqual({ ok: true });
    }
  });

  it("a tampered or unsigned item is refused by Adyen's library and by ours", () => {
    const item = itemOf(bodies.find((body) => itemOf(body).eventCode === "REFUND") as NotificationRequestBody);
    const tampered = { ...item, amount: { ...item.amount, value: item.amount.value + 1 } } as NotificationItem;
    expect(adyenLibrary.validateHMAC(tampered as never, HMAC_KEY)).toBe(false);
    expect(verifyItem(tampered, [HMAC_KEY])).toEqual({ ok: false, reason: "wrong_signature" });
    const unsigned = { ...item, additionalData: {} } as NotificationItem;
    expect(() => adyenLibrary.validateHMAC(unsigned as never, HMAC_KEY)).toThrow(/hmacSignature/);
    expect(verifyItem(unsigned, [HMAC_KEY])).toEqual({ ok: false, reason: "unsigned" });
  });

  it("maps each to the outcome the server applies", () => {
    const outcomes = bodies.map((body) => outcomeOf(itemOf(body)));
    expect(outcomes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "refund", succeeded: true, merchantReference: "re_n_1" }),
        expect.objectContaining({ type: "refund", succeeded: false, merchantReference: "re_n_2" }),
        expect.objectContaining({ type: "cancellation", succeeded: true }),
        expect.objectContaining({ type: "dispute", stage: "chargeback", reasonCode: "10.4" }),
        expect.objectContaining({ type: "dispute", stage: "reversed" }),
        expect.objectContaining({ type: "payout", status: "paid", merchantReference: "co_n_1" }),
      ]),
    );
  });
});

describe("Adyen notifications delivered twice and shuffled", () => {
  let receiver: Server;
  let url: string;
  const applied = new Map<string, NotificationItem>();
  let refused = 0;

  beforeAll(async () => {
    // A receiver as the server's endpoint will be: verify, deduplicate on the connector's key (the store's
    // unique index in the server), apply once, acknowledge every verified delivery, duplicates included.
    receiver = createServer((request, response) => {
      let raw = "";
      request.on("data", (chunk: Buffer) => {
        raw += chunk.toString("utf8");
      });
      request.on("end", () => {
        const { accepted, refused: bad } = verifyNotification(JSON.parse(raw), [HMAC_KEY], { warn() {} });
        refused += bad.length;
        if (bad.length > 0) {
          response.writeHead(401).end();
          return;
        }
        for (const item of accepted) if (!applied.has(dedupeKey(item))) applied.set(dedupeKey(item), item);
        response.writeHead(200, { "content-type": "text/plain" }).end(NOTIFICATION_ACKNOWLEDGEMENT);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve));
  });

  it("applies each of 1,000 notifications exactly once, and refuses forged ones", async () => {
    standIn.takeNotifications();
    const captures = 500;
    for (let i = 0; i < captures; i++) {
      const a = await authorised("manual", 100 + i);
      await adyen.capture({
        reference: a.reference,
        merchantReference: a.chargeId,
        amount: 100 + i,
        currency: "EUR",
        idempotencyKey: `${a.chargeId}:capture`,
      });
    }
    const bodies = standIn.takeNotifications();
    expect(bodies).toHaveLength(2 * captures); // an AUTHORISATION and a CAPTURE each
    const answers = await deliverNotifications(url, bodies, { times: 2, seed: 32 });
    expect(answers).toHaveLength(4 * captures);
    expect(answers.every((a) => a.status === 200 && a.text === "[accepted]")).toBe(true);
    expect(applied.size).toBe(2 * captures);
    const capturedTotal = [...applied.values()]
      .filter((item) => item.eventCode === "CAPTURE")
      .reduce((sum, item) => sum + item.amount.value, 0);
    expect(capturedTotal).toBe(Array.from({ length: captures }, (_, i) => 100 + i).reduce((a, b) => a + b, 0));

    const forged = bodies.slice(0, 3).map((body) => {
      const item = itemOf(body);
      return { ...body, notificationItems: [{ NotificationRequestItem: { ...item, success: "false" } }] };
    }) as NotificationRequestBody[];
    const refusedAnswers = await deliverNotifications(url, forged);
    expect(refusedAnswers.map((a) => a.status)).toEqual([401, 401, 401]);
    expect(refused).toBe(3);
    expect(applied.size).toBe(2 * captures);
    // 3,000 loopback requests on a shared two-core machine: a generous bound, nothing here is timed.
  }, 180_000);
});
