/**
 * `payments conform`: checks a webhook receiver against the cases every delivery rule of the contract
 * implies (WebhookDeliveryHeaders in spec/webhooks.tsp), by sending it a graded series of signed
 * deliveries and reporting case by case:
 *
 * - a valid delivery is acknowledged with a 2xx within the delivery time-out (the server's
 *   WEBHOOK_TIMEOUT_SECONDS, 10 s by default), and so is one carrying two signatures (a secret rotation);
 * - a tampered body, a signature made with another secret, a missing signature and a timestamp outside
 *   the documented tolerance (300 s either way) are refused with 401 (WebhookRejected);
 * - a duplicate (at least once) and an out-of-order pair (events may arrive out of order) are acknowledged;
 * - an unknown event type is acknowledged (EventType is extensible: new types are added within v1);
 * - the largest event the contract allows is acknowledged.
 *
 * Each signature scheme an endpoint can choose (WebhookSignatureScheme) is a series of its own:
 * `x_service_signature` (X-Service-Signature) and `standard_webhooks` (webhook-id, webhook-timestamp,
 * webhook-signature). The deliveries are fakes made here, never sent by a server, so the receiver must
 * not act on them as on real money movements: point it at a test instance.
 */
import { createHmac, randomInt } from "node:crypto";
import { newSigningSecret } from "./listen.ts";
import { DEFAULT_TOLERANCE_SECONDS, signWebhookPayload, type WebhookEventOf } from "./webhooks.ts";

export type ConformScheme = "x_service_signature" | "standard_webhooks";

export const CONFORM_SCHEMES: readonly ConformScheme[] = ["x_service_signature", "standard_webhooks"];

/** The server's default WEBHOOK_TIMEOUT_SECONDS: a delivery not acknowledged within it is retried. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

export interface ConformOptions {
  /** The receiver's URL, e.g. `http://127.0.0.1:4242/webhooks`. */
  url: string;
  /** The secret the receiver verifies with (`whsec_…`). */
  secret: string;
  /** The schemes to test, one series each; default the project's own, `x_service_signature`. */
  schemes?: readonly ConformScheme[];
  /** How long the receiver has to answer each delivery; default 10 s. */
  timeoutMs?: number;
  /** The tolerance the receiver is held to, in seconds; default the documented 300. */
  toleranceSeconds?: number;
  /** Milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
  fetch?: typeof fetch;
  /** Called with each case's result as soon as it is known. */
  onCase?: (result: ConformCaseResult) => void;
}

export type ConformCaseId =
  | "valid"
  | "rotation"
  | "tampered_body"
  | "wrong_secret"
  | "missing_signature"
  | "stale_timestamp"
  | "future_timestamp"
  | "duplicate"
  | "out_of_order"
  | "unknown_type"
  | "large_payload";

/** One request of a case and what became of it. */
export interface ConformDelivery {
  eventType: string;
  bytes: number;
  /** The receiver's status, or null when it gave none (see `error`). */
  status: number | null;
  error?: string;
  ms: number;
}

export interface ConformCaseResult {
  scheme: ConformScheme;
  id: ConformCaseId;
  /** What the case checks, in a sentence. */
  title: string;
  expected: "2xx" | "401";
  deliveries: ConformDelivery[];
  passed: boolean;
  /** On failure, what the receiver did and why it matters. */
  problem?: string;
}

export interface ConformReport {
  url: string;
  passed: boolean;
  cases: ConformCaseResult[];
}

/** Thrown before anything is sent when the options cannot work (a secret Standard Webhooks cannot read). */
export class ConformError extends Error {
  override readonly name = "ConformError";
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** An id of the server's shape (`<prefix>_` and 24 base62 characters); a fresh one each run. */
function fakeId<P extends string>(prefix: P): `${P}_${string}` {
  let out = "";
  for (let i = 0; i < 24; i++) out += BASE62[randomInt(62)];
  return `${prefix}_${out}`;
}

// The events sent are typed by the contract (WebhookEventOf), so a change to a payload fails `tsc` here.

function capturedEvent(at: Date, txId: string, merchantId: string): WebhookEventOf<"payment.captured"> {
  return {
    id: fakeId("evt"),
    created_at: at.toISOString(),
    livemode: false,
    type: "payment.captured",
    tx_id: txId,
    merchant_id: merchantId,
    amount: 2500,
    currency: "USD",
    status: "captured",
    payment_method_type: "card",
    amount_captured: 2500,
  };
}

function refundedEvent(at: Date, txId: string, merchantId: string): WebhookEventOf<"payment.refunded"> {
  return {
    id: fakeId("evt"),
    created_at: at.toISOString(),
    livemode: false,
    type: "payment.refunded",
    tx_id: txId,
    merchant_id: merchantId,
    amount: 2500,
    currency: "USD",
    status: "refunded",
    payment_method_type: "card",
    refund_id: fakeId("re"),
    refund_amount: 2500,
    amount_refunded: 2500,
  };
}

/**
 * The largest event the contract allows today: a `merchant.updated` whose previous metadata holds the
 * Metadata limits (50 keys of 40 characters, values of 500), the values in characters of 3 bytes in UTF-8,
 * about 77 KB. It also shows whether the receiver verifies the bytes it got rather than a re-encoding.
 */
function largestEvent(at: Date): WebhookEventOf<"merchant.updated"> {
  const metadata: Record<string, string> = {};
  for (let i = 0; i < 50; i++) metadata[`key_${String(i).padStart(2, "0")}_`.padEnd(40, "x")] = "€".repeat(500);
  return {
    id: fakeId("evt"),
    created_at: at.toISOString(),
    livemode: false,
    type: "merchant.updated",
    merchant_id: fakeId("mch"),
    name: "Conformance check",
    status: "active",
    previous_attributes: { metadata },
  };
}

/** An event of a type this contract does not declare, shaped as every event is (EventEnvelope). */
function unknownTypeEvent(at: Date) {
  return {
    id: fakeId("evt"),
    created_at: at.toISOString(),
    livemode: false,
    type: "conform.unknown_type",
    note: "A type added after your code was written: acknowledge it and ignore it.",
  };
}

/** How one delivery is signed; `skew` moves its timestamp, `secrets` replaces the right secret. */
interface Signing {
  secrets?: string[];
  skewSeconds?: number;
  omit?: boolean;
}

/** The key a Standard Webhooks library derives from a `whsec_` secret: the base64 after the prefix, decoded. */
function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new ConformError(
      "A Standard Webhooks secret must be base64 after its whsec_ prefix (the server's secrets are); this one is not.",
    );
  }
  return Buffer.from(encoded, "base64");
}

function signatureHeaders(
  scheme: ConformScheme,
  eventId: string,
  body: string,
  timestamp: number,
  secrets: string[],
): Record<string, string> {
  if (scheme === "x_service_signature") {
    return { "X-Service-Signature": signWebhookPayload({ payload: body, secret: secrets, timestamp }) };
  }
  const signed = `${eventId}.${timestamp}.${body}`;
  const signatures = secrets.map(
    (s) => `v1,${createHmac("sha256", standardWebhooksKey(s)).update(signed, "utf8").digest("base64")}`,
  );
  return { "webhook-id": eventId, "webhook-timestamp": String(timestamp), "webhook-signature": signatures.join(" ") };
}

interface CaseDefinition {
  id: ConformCaseId;
  title: (tolerance: number) => string;
  expected: "2xx" | "401";
  /** Why a receiver that fails the case is wrong, for the report. */
  why: string;
}

const CASES: readonly CaseDefinition[] = [
  {
    id: "valid",
    title: () => "a valid delivery is acknowledged with 2xx within the time-out",
    expected: "2xx",
    why: "A delivery not acknowledged in time is retried for days and finally disables the endpoint.",
  },
  {
    id: "rotation",
    title: () => "a delivery with two signatures, the right one second (a secret rotation), is acknowledged",
    expected: "2xx",
    why: "During a secret rotation every delivery carries one signature per secret: accept any that matches.",
  },
  {
    id: "tampered_body",
    title: () => "a body changed after signing is refused with 401",
    expected: "401",
    why: "Verify the signature over the raw body exactly as received, before acting on it.",
  },
  {
    id: "wrong_secret",
    title: () => "a delivery signed with another secret is refused with 401",
    expected: "401",
    why: "Compare the signature computed with your endpoint's secret, in constant time.",
  },
  {
    id: "missing_signature",
    title: () => "a delivery without a signature is refused with 401",
    expected: "401",
    why: "An unsigned request can come from anyone.",
  },
  {
    id: "stale_timestamp",
    title: (t) => `a delivery signed ${t + 60} s ago (tolerance ${t} s) is refused with 401`,
    expected: "401",
    why: "Refuse a timestamp more than the tolerance from your clock, or a captured delivery can be replayed later.",
  },
  {
    id: "future_timestamp",
    title: (t) => `a delivery signed ${t + 60} s in the future (tolerance ${t} s) is refused with 401`,
    expected: "401",
    why: "The tolerance applies either way.",
  },
  {
    id: "duplicate",
    title: () => "the same event delivered twice is acknowledged both times",
    expected: "2xx",
    why: "Delivery is at least once: deduplicate on the event id and acknowledge the repeat, or it is retried.",
  },
  {
    id: "out_of_order",
    title: () => "a charge's payment.refunded before its payment.captured: both acknowledged",
    expected: "2xx",
    why: "Events may arrive out of order: do not refuse an event because an earlier one has not arrived.",
  },
  {
    id: "unknown_type",
    title: () => "an event type this receiver does not know is acknowledged",
    expected: "2xx",
    why: "New event types are added within v1: acknowledge and ignore the ones you do not handle.",
  },
  {
    id: "large_payload",
    title: () => "the largest event the contract allows (about 77 KB, non-ASCII metadata) is acknowledged",
    expected: "2xx",
    why: "Accept bodies of this size, and verify the bytes received rather than a decoded copy.",
  },
];

/** The case ids, in the order they are run. */
export const CONFORM_CASES: readonly ConformCaseId[] = CASES.map((c) => c.id);

/** Sends every case of every scheme asked, one request at a time, and reports on each. */
export async function conform(options: ConformOptions): Promise<ConformReport> {
  const schemes = options.schemes ?? ["x_service_signature"];
  if (schemes.length === 0) throw new ConformError("Name at least one signature scheme.");
  if (options.secret === "") throw new ConformError("The receiver's secret is required.");
  if (schemes.includes("standard_webhooks")) standardWebhooksKey(options.secret);
  const url = new URL(options.url).toString();
  const timeoutMs = options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = options.now ?? Date.now;
  const doFetch = options.fetch ?? fetch;
  const otherSecret = newSigningSecret();

  async function deliver(scheme: ConformScheme, event: object, signing: Signing, alter?: (body: string) => string) {
    const body = JSON.stringify(event);
    const eventId = (event as { id: string }).id;
    const type = (event as { type: string }).type;
    const timestamp = Math.floor(now() / 1000) + (signing.skewSeconds ?? 0);
    const signature = signing.omit
      ? {}
      : signatureHeaders(scheme, eventId, body, timestamp, signing.secrets ?? [options.secret]);
    const sent = alter ? alter(body) : body;
    if (alter && sent === body) throw new Error("conform: the tampered body must differ from the signed one");
    const started = performance.now();
    const delivery: ConformDelivery = { eventType: type, bytes: Buffer.byteLength(sent), status: null, ms: 0 };
    try {
      const res = await doFetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "PaymentsWebhooks/1.0 (conform)",
          "x-service-event-id": eventId,
          "x-service-delivery-id": fakeId("whd"),
          "x-service-delivery-attempt": "1",
          ...signature,
        },
        body: sent,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body?.cancel();
      delivery.status = res.status;
    } catch (err) {
      const e = err as Error;
      delivery.error = e.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : `${e.message}${causeOf(e)}`;
    }
    delivery.ms = Math.round(performance.now() - started);
    return delivery;
  }

  async function run(scheme: ConformScheme, id: ConformCaseId): Promise<ConformDelivery[]> {
    const at = new Date(now());
    const tx = fakeId("tx");
    const mch = fakeId("mch");
    switch (id) {
      case "valid":
        return [await deliver(scheme, capturedEvent(at, tx, mch), {})];
      case "rotation":
        return [await deliver(scheme, capturedEvent(at, tx, mch), { secrets: [otherSecret, options.secret] })];
      case "tampered_body":
        return [
          await deliver(scheme, capturedEvent(at, tx, mch), {}, (body) =>
            body.replace('"amount":2500', '"amount":9999'),
          ),
        ];
      case "wrong_secret":
        return [await deliver(scheme, capturedEvent(at, tx, mch), { secrets: [otherSecret] })];
      case "missing_signature":
        return [await deliver(scheme, capturedEvent(at, tx, mch), { omit: true })];
      case "stale_timestamp":
        return [await deliver(scheme, capturedEvent(at, tx, mch), { skewSeconds: -(tolerance + 60) })];
      case "future_timestamp":
        return [await deliver(scheme, capturedEvent(at, tx, mch), { skewSeconds: tolerance + 60 })];
      case "duplicate": {
        const event = capturedEvent(at, tx, mch);
        return [await deliver(scheme, event, {}), await deliver(scheme, event, {})];
      }
      case "out_of_order": {
        const captured = capturedEvent(new Date(at.getTime() - 1000), tx, mch);
        const refunded = refundedEvent(at, tx, mch);
        return [await deliver(scheme, refunded, {}), await deliver(scheme, captured, {})];
      }
      case "unknown_type":
        return [await deliver(scheme, unknownTypeEvent(at), {})];
      case "large_payload":
        return [await deliver(scheme, largestEvent(at), {})];
    }
  }

  const cases: ConformCaseResult[] = [];
  for (const scheme of schemes) {
    for (const definition of CASES) {
      const deliveries = await run(scheme, definition.id);
      const wrong = deliveries.find((d) =>
        definition.expected === "401" ? d.status !== 401 : d.status === null || d.status < 200 || d.status > 299,
      );
      const result: ConformCaseResult = {
        scheme,
        id: definition.id,
        title: definition.title(tolerance),
        expected: definition.expected,
        deliveries,
        passed: wrong === undefined,
      };
      if (wrong) {
        const got = wrong.status === null ? wrong.error : `got ${wrong.status}`;
        const which =
          deliveries.length > 1 ? ` (delivery ${deliveries.indexOf(wrong) + 1} of ${deliveries.length})` : "";
        // A 401 to a correctly signed delivery is the same mistake whatever the case: say what to check.
        const why =
          definition.expected === "2xx" && wrong.status === 401
            ? "The receiver refused a correctly signed delivery: check that it verifies with this secret and scheme, over the raw body."
            : definition.why;
        result.problem = `expected ${definition.expected}, ${got}${which}. ${why}`;
      }
      cases.push(result);
      options.onCase?.(result);
    }
  }
  return { url, passed: cases.every((c) => c.passed), cases };
}

function causeOf(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? ` (${cause.message})` : "";
}

/** One line per case, for a person: PASS or FAIL, the case, the statuses, and on failure what to fix. */
export function formatConformCase(result: ConformCaseResult): string {
  const statuses = result.deliveries.map((d) => (d.status === null ? "none" : String(d.status))).join(", ");
  const slowest = Math.max(...result.deliveries.map((d) => d.ms));
  const head = `${result.passed ? "PASS" : "FAIL"}  ${result.id.padEnd(18)} ${result.title}: ${statuses} (${slowest} ms)`;
  return result.problem ? `${head}\n      ${result.problem}` : head;
}
