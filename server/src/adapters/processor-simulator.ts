import { createHash } from "node:crypto";
import {
  type AuthorizationResult,
  type Confirmation,
  type FailureCode,
  LOCAL_METHODS,
  type NextAction,
  type Processor,
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
};

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
  };
}

export interface SimulatorProcessor extends Processor {
  counts(): SimulatorCounts;
}

/** How many idempotency keys the simulator remembers (the oldest are forgotten first): bounded memory. */
const REMEMBERED_KEYS = 100_000;

/** A deterministic simulator: outcomes depend only on the card number and expiry, never on chance. */
export function createSimulatorProcessor(
  options: {
    rememberedKeys?: number /** Keep SimulatorCounts (tests and the stand-in; unbounded). */;
    count?: boolean;
  } = {},
): SimulatorProcessor {
  const limit = options.rememberedKeys ?? REMEMBERED_KEYS;
  const counting = options.count ?? false;
  const answers = new Map<string, { request: string; answer: unknown }>();
  const calls = new Map<string, number>();
  const applied: SimulatorCounts["applied"] = { authorize: {}, capture: {}, void: {}, refund: {}, reverse: {} };

  /** Answers a call once per key: a repeat gets the first answer; the same key for another request is refused. */
  async function once<T>(key: string, request: unknown, run: () => T): Promise<T> {
    if (counting) calls.set(key, (calls.get(key) ?? 0) + 1);
    const fingerprint = JSON.stringify(request);
    const known = answers.get(key);
    if (known) {
      if (known.request !== fingerprint) throw new IdempotencyConflict(key);
      return known.answer as T;
    }
    const answer = run();
    answers.set(key, { request: fingerprint, answer });
    if (answers.size > limit) answers.delete(answers.keys().next().value as string);
    return answer;
  }

  const count = (kind: keyof SimulatorCounts["applied"], object: string) => {
    if (!counting) return;
    applied[kind][object] = (applied[kind][object] ?? 0) + 1;
  };
  /** A reference the same for the same key, across restarts of the simulator too. */
  const referenceFor = (key: string) => `sim_auth_${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
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
        const reference = referenceFor(idempotencyKey);
        if (request.capture) count("capture", reference);
        return { approved: true, reference, captured: request.capture };
      });
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
      return once(idempotencyKey, request, () => {
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
    startLocalPayment({ idempotencyKey, ...request }) {
      return once(idempotencyKey, { ...request, now: undefined }, () => {
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
