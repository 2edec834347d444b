import { createHash } from "node:crypto";
import {
  type AuthenticationLookup,
  type AuthorizationResult,
  type Confirmation,
  type DisputeAfterCapture,
  type FailureCode,
  LOCAL_METHODS,
  type NextAction,
  type Processor,
  type RefundConfirmation,
  type ThreeDSecureOutcome,
  type ThreeDSecureResult,
} from "../domain/charges/processor.ts";
import { iso } from "../domain/kernel/time.ts";

// The shipped card processor (the Processor port, domain/charges/processor.ts): a deterministic
// simulator of an acquirer. Outcomes depend only on the card number and expiry, never on chance. It
// honours idempotency keys as an acquirer does: a call sent again under the same key gets the first
// answer and applies nothing more; the same key with a different request is refused. It counts what it
// applied, so tests can check that nothing was applied twice (docs/acquirer-port.md).

/**
 * The sandbox test cards (Stripe-compatible numbers; docs/charges.md 'Test cards (sandbox)'). Any other valid card
 * is approved. 4100000000000019 (always blocked) and 4000000000009235 (elevated risk, review) are the
 * fraud engine's (domain/fraud/sandbox.ts): a blocked charge never reaches the processor, and a held one
 * is approved here like any other card.
 */
export const TEST_CARD_OUTCOMES: Record<string, { failureCode: FailureCode; failureMessage: string }> = {
  "4000000000000002": { failureCode: "card_declined", failureMessage: "The card was declined." },
  "4000000000009995": { failureCode: "insufficient_funds", failureMessage: "The card has insufficient funds." },
  "4000000000000069": { failureCode: "expired_card", failureMessage: "The card has expired." },
  // Stripe's "3DS required, declined": the payer authenticates, then the issuer declines the charge.
  "4000008400001629": { failureCode: "card_declined", failureMessage: "The card was declined." },
};

/**
 * The refund-failure test card (Stripe's number for the same behaviour; docs/charges.md 'Test cards
 * (sandbox)'): approved and captured like any other, but every refund of it fails after it is made, as
 * a real acquirer's REFUND_FAILED does (the refund `failed`, its amount back, `payment.refund_failed`).
 * Its authorization's reference says so (`sim_rfl_…`), so the simulator stays stateless.
 */
export const REFUND_FAILS_CARD = "4000000000005126";

/** How long after capture a dispute test card's dispute opens: the sandbox clock's advance reaches it. */
export const TEST_CARD_DISPUTE_AFTER_SECONDS = 3600;

/**
 * The dispute test cards (Stripe's numbers for the same behaviours; docs/disputes.md "Test cards"): the
 * charge is approved and captured like any other, and an hour later (on the sandbox clock) its
 * cardholder's bank opens a dispute. Keyed by the card's last four digits, which the authorization's
 * reference carries (`sim_dsp<last4>_…`), so the simulator stays stateless.
 */
export const TEST_CARD_DISPUTES: Record<string, { pan: string } & Omit<DisputeAfterCapture, "afterSeconds">> = {
  "0259": { pan: "4000000000000259", reason: "fraudulent", inquiry: false },
  "2685": { pan: "4000000000002685", reason: "product_not_received", inquiry: false },
  "1976": { pan: "4000000000001976", reason: "fraudulent", inquiry: true },
};

/**
 * How each 3-D Secure test card's issuer behaves (Stripe's numbers for the same behaviours;
 * docs/three-d-secure.md "Test cards"). Any other card is enrolled in no 3-D Secure programme: when
 * 3-D Secure is asked for, the issuer's attempt stands in (`attempted`); under `automatic` nothing
 * happens.
 * - `frictionless`: the issuer authenticates without the payer (a challenge only when one is asked for);
 * - `challenge`: the issuer requires a challenge, whatever was asked;
 * - `required_error`: the issuer requires 3-D Secure and cannot run it (the charge is declined);
 * - `supported_error`: 3-D Secure is not required, and fails with an error when asked for;
 * - `not_supported`: the card has no 3-D Secure; the charge goes on without it.
 */
export const THREE_D_SECURE_CARDS: Record<
  string,
  "frictionless" | "challenge" | "required_error" | "supported_error" | "not_supported"
> = {
  "4000000000003055": "frictionless",
  "4000000000003220": "challenge",
  "4000002760003184": "challenge",
  "4000008400001629": "challenge",
  "4000008400001280": "required_error",
  "4000000000003097": "supported_error",
  "378282246310005": "not_supported",
};

const VERSION = "2.2.0";

/** The ECI the issuer returns for a result (Mastercard has its own values; every other brand Visa's). */
function eci(brand: string | undefined, result: ThreeDSecureResult): string | null {
  const values =
    brand === "mastercard" ? { full: "02", attempt: "01", none: "00" } : { full: "05", attempt: "06", none: "07" };
  if (result === "authenticated") return values.full;
  if (result === "attempted") return values.attempt;
  if (result === "not_supported") return null;
  return values.none;
}

function outcome(brand: string | undefined, result: ThreeDSecureResult): ThreeDSecureOutcome {
  return {
    result,
    version: VERSION,
    liabilityShift: result === "authenticated" || result === "attempted",
    eci: eci(brand, result),
  };
}

function cardExpired(expMonth: number, expYear: number, now: Date): boolean {
  // A card is valid through the last day of its expiry month (UTC).
  return expYear < now.getUTCFullYear() || (expYear === now.getUTCFullYear() && expMonth < now.getUTCMonth() + 1);
}

/** The same idempotency key sent with a different request: a caller's bug, refused as an acquirer does. */
export class IdempotencyConflict extends Error {
  override name = "IdempotencyConflict";
  constructor(readonly key: string) {
    super(`idempotency key ${key} was already used with a different request`);
  }
}

/** What the simulator applied, per kind and per object (each object's count must never exceed 1). */
export interface SimulatorCounts {
  /** Calls received per idempotency key, repeats included. */
  calls: Record<string, number>;
  /** Effects applied: authorizations per charge, captures/voids/reversals per authorization, refunds per refund. */
  applied: {
    authorize: Record<string, number>;
    capture: Record<string, number>;
    void: Record<string, number>;
    refund: Record<string, number>;
    reverse: Record<string, number>;
    /** Local payments started, per charge. */
    start_local: Record<string, number>;
  };
}

const noneApplied = (): SimulatorCounts["applied"] => ({
  authorize: {},
  capture: {},
  void: {},
  refund: {},
  reverse: {},
  start_local: {},
});

export interface SimulatorProcessor extends Processor {
  counts(): SimulatorCounts;
}

/**
 * How many idempotency keys the simulator remembers (the oldest are forgotten first): bounded memory.
 * 10,000 and not more: the map lives in the server's heap, which the server keeps small
 * (heap.ts); at 100,000 keys, each with its request, it held ~60 MB after 100,000 production charges
 * and the server spent its time collecting garbage, then died (bench:growth, issue 36). Forgetting a key
 * is safe: an authorization's reference is derived from its key (`referenceFor`), so a repeat of a
 * forgotten call still answers the same reference; only a conflicting request under a key older than
 * the last 10,000 calls goes unnoticed. Recovery repeats a call within minutes, not 10,000 calls later.
 */
const REMEMBERED_KEYS = 10_000;

/**
 * What the simulator remembers of a call's request: a digest, not the request. An authorization's request
 * carries the card number, which must not sit in the heap for 10,000 calls (nor in a heap dump), and a
 * digest is a fifth of its size.
 */
function fingerprintOf(request: unknown): string {
  return createHash("sha256").update(JSON.stringify(request)).digest("base64url");
}

export interface SimulatorOptions {
  /** How many idempotency keys it remembers (REMEMBERED_KEYS). */
  rememberedKeys?: number;
  /** Keep SimulatorCounts (tests and the stand-in; unbounded). */
  count?: boolean;
}

/** A deterministic simulator: outcomes depend only on the card number and expiry, never on chance. */
export function createSimulatorProcessor(options: SimulatorOptions = {}): SimulatorProcessor {
  const limit = options.rememberedKeys ?? REMEMBERED_KEYS;
  const counting = options.count ?? false;
  const answers = new Map<string, { request: string; answer: unknown }>();
  const calls = new Map<string, number>();
  const applied = noneApplied();

  /** Answers a call once per key: a repeat gets the first answer; the same key for another request is refused. */
  async function once<T>(key: string, request: unknown, run: () => T): Promise<T> {
    if (counting) calls.set(key, (calls.get(key) ?? 0) + 1);
    const fingerprint = fingerprintOf(request);
    const known = answers.get(key);
    if (known) {
      if (known.request !== fingerprint) throw new IdempotencyConflict(key);
      // cast: the same key and request (fingerprint above) is a repeat of one call, whose answer `run` typed T.
      return known.answer as T;
    }
    const answer = run();
    answers.set(key, { request: fingerprint, answer });
    const oldest = answers.keys().next();
    if (answers.size > limit && !oldest.done) answers.delete(oldest.value);
    return answer;
  }

  const count = (kind: keyof SimulatorCounts["applied"], object: string) => {
    if (!counting) return;
    applied[kind][object] = (applied[kind][object] ?? 0) + 1;
  };
  /** A reference the same for the same key, across restarts of the simulator too. */
  const referenceFor = (key: string, disputeCard: string | null, refundFails = false) =>
    `${disputeCard ? `sim_dsp${disputeCard}` : refundFails ? "sim_rfl" : "sim_auth"}_${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
  const confirmed: Confirmation = { status: "confirmed" };

  return {
    authorizeCard({ idempotencyKey, now, ...request }) {
      // The card's expiry is judged at the first call; a repeat gets that answer whatever the time.
      return once(idempotencyKey, request, (): AuthorizationResult => {
        const outcome = TEST_CARD_OUTCOMES[request.pan];
        if (outcome) return { approved: false, ...outcome };
        if (cardExpired(request.expMonth, request.expYear, now)) {
          return { approved: false, failureCode: "expired_card", failureMessage: "The card has expired." };
        }
        count("authorize", request.chargeId);
        // A dispute test card's reference carries its last four digits (disputeAfterCapture below).
        const last4 = request.pan.slice(-4);
        const reference = referenceFor(
          idempotencyKey,
          TEST_CARD_DISPUTES[last4]?.pan === request.pan ? last4 : null,
          request.pan === REFUND_FAILS_CARD,
        );
        if (request.capture) count("capture", reference);
        return { approved: true, reference, captured: request.capture };
      });
    },
    async authenticateCard(request): Promise<AuthenticationLookup> {
      const kind = THREE_D_SECURE_CARDS[request.pan];
      const challenge = (): AuthenticationLookup => ({
        kind: "challenge",
        reference: `3DS-${createHash("sha256").update(request.chargeId).digest("hex").slice(0, 16).toUpperCase()}`,
        version: VERSION,
      });
      switch (kind) {
        case "challenge":
          return challenge();
        case "required_error":
          return { kind: "done", outcome: outcome(request.brand, "processing_error") };
        case "frictionless":
          return request.request === "challenge"
            ? challenge()
            : { kind: "done", outcome: outcome(request.brand, "authenticated") };
        case "supported_error":
          return request.request === "automatic"
            ? { kind: "not_needed" }
            : { kind: "done", outcome: outcome(request.brand, "processing_error") };
        case "not_supported":
          return request.request === "automatic"
            ? { kind: "not_needed" }
            : { kind: "done", outcome: outcome(request.brand, "not_supported") };
        default:
          return request.request === "automatic"
            ? { kind: "not_needed" }
            : { kind: "done", outcome: outcome(request.brand, "attempted") };
      }
    },
    async completeChallenge({ brand, passed }) {
      return outcome(brand, passed ? "authenticated" : "failed");
    },
    capture({ idempotencyKey, ...request }) {
      return once(idempotencyKey, request, () => {
        count("capture", request.reference);
        return confirmed;
      });
    },
    void({ idempotencyKey, ...request }) {
      return once(idempotencyKey, request, () => {
        count("void", request.reference);
        return confirmed;
      });
    },
    refund({ idempotencyKey, ...request }) {
      return once(idempotencyKey, request, (): RefundConfirmation => {
        if (request.reference.startsWith("sim_rfl_")) {
          return { status: "failed", reason: `the card's account refused the money (test card ${REFUND_FAILS_CARD})` };
        }
        count("refund", idempotencyKey);
        return confirmed;
      });
    },
    reverse({ idempotencyKey, ...request }) {
      return once(idempotencyKey, request, () => {
        count("reverse", request.reference);
        return confirmed;
      });
    },
    disputeAfterCapture(reference) {
      const match = /^sim_dsp(\d{4})_/.exec(reference);
      const card = match?.[1] === undefined ? undefined : TEST_CARD_DISPUTES[match[1]];
      if (!card) return null;
      return { reason: card.reason, inquiry: card.inquiry, afterSeconds: TEST_CARD_DISPUTE_AFTER_SECONDS };
    },
    startLocalPayment({ idempotencyKey, ...request }) {
      return once(idempotencyKey, { ...request, now: undefined }, () => {
        count("start_local", request.chargeId);
        const rule = LOCAL_METHODS[request.method];
        const digest = createHash("sha256").update(request.chargeId).digest("hex").slice(0, 16).toUpperCase();
        const action: NextAction = {
          type: rule.nextAction,
          reference: `${rule.referencePrefix}-${digest}`,
          expires_at: iso(new Date(request.now.getTime() + rule.ttlSeconds * 1000)),
        };
        if (request.method === "pix") {
          // A static BR Code-like payload (EMV merchant-presented QR); the simulator does not compute a real CRC.
          const amount = (request.amount / 100).toFixed(2);
          action.qr_payload = `00020126580014br.gov.bcb.pix0136${request.chargeId}52040000530398654${String(amount.length).padStart(2, "0")}${amount}5802BR6304${digest.slice(0, 4)}`;
        }
        return action;
      });
    },
    counts() {
      return {
        calls: Object.fromEntries(calls),
        applied: structuredClone(applied),
      };
    },
  };
}
