import {
  dedupeKey,
  type NotificationItem,
  type NotificationOutcome,
  outcomeOf,
  verifyNotification,
} from "../../adapters/adyen/notifications.ts";
import { DuplicateKeyError } from "../../store/port.ts";
import type { Cashouts } from "../cashouts/cashouts.ts";
import type { Charges } from "../charges/charges.ts";
import type { Disputes } from "../disputes/disputes.ts";
import type { Clock } from "../kernel/clock.ts";
import { DomainError } from "../kernel/errors.ts";
import type { DomainLog } from "../kernel/log.ts";
import { iso } from "../kernel/time.ts";
import type { AcquirerNotificationDoc, AcquirerNotificationStore, AcquirerNotificationTx } from "./records.ts";

// Adyen's standard notifications (receiveAdyenNotifications, spec/resources/acquirer-notifications.tsp;
// docs/going-live-with-adyen.md "Notifications endpoint"), received and applied exactly once, in any order.
//
// 1. Every item's HMAC signature is checked (adapters/adyen/notifications.ts verifyNotification:
//    constant-time, every configured key; refused items are logged without their body).
// 2. Every valid item is stored under its dedupe key (a unique id) before the answer: once Adyen has
//    `[accepted]`, the item is ours to apply, even across a crash (the notifications job applies what a
//    crash left `received`).
// 3. Applying it is one transaction with its effect: the item's state moves to `applied` first, on the
//    condition that it is not applied yet, then the owning area (charges, disputes, cashouts: through their
//    services, never their collections) makes the change. A redelivery finds the item applied; two
//    deliveries at once both try, and the second's conditional update finds it applied and rolls its
//    transaction back, effect and all.
// 4. An item whose object is not yet in the state it follows (a chargeback's reversal before the
//    chargeback, a CAPTURE before our capture's transaction committed, a payout outcome before the payout
//    job recorded the sending) is kept `waiting`, answered `[accepted]` like the others (Adyen's retries
//    would only bring it back in the same order, hours later), and tried again after every item applied
//    to the same object, and by the notifications job.

/** The item's stored state was already moved on (applied by a concurrent delivery): roll back. */
class AlreadyApplied extends Error {}

export interface NotificationDeps {
  store: AcquirerNotificationStore;
  clock: Clock;
  charges: Pick<Charges, "acquirerOutcomes">;
  disputes: Pick<Disputes, "acquirerOutcomes">;
  cashouts: Pick<Cashouts, "acquirerOutcome">;
  /** The HMAC keys of Adyen's notifications (ADYEN_HMAC_KEYS, hexadecimal); empty: the endpoint is off. */
  adyenHmacKeys: readonly string[];
  /** Which of our environments Adyen serves (PRODUCTION_ACQUIRER, SANDBOX_ACQUIRER); unset: by `live`. */
  adyenEnvironments?: { production: boolean; sandbox: boolean } | undefined;
  log: DomainLog;
}

/**
 * The environment a request's items act on. Adyen's `live` says which of *Adyen's* environments sent
 * them, not which of ours: a production pointed at Adyen's test environment (ADYEN_ENVIRONMENT=test,
 * PRODUCTION_ACQUIRER=adyen) receives `live: "false"`, and those are production's. So when Adyen serves one
 * of our environments only, its items are that one's; only when it serves both (then on Adyen's test
 * environment, config.ts) or neither does `live` decide.
 */
export function environmentOf(live: boolean, served: { production: boolean; sandbox: boolean } | undefined): boolean {
  if (served?.production && !served.sandbox) return true;
  if (served?.sandbox && !served.production) return false;
  return live;
}

/** What a request's items came to: how many were refused (unsigned, wrongly signed, malformed). */
export interface Receipt {
  stored: number;
  refused: number;
}

type Result = "applied" | "waiting" | "confirmed" | "attention" | "unhandled";

/**
 * The refund a refund outcome names: the connector sends the refund's acquirer key (`re_…:refund`,
 * adapters/adyen/processor.ts) as Adyen's merchantReference, which Adyen echoes; the id is before the `:`.
 */
const refundIdOf = (reference: string) => reference.split(":")[0] ?? reference;

export function createAcquirerNotifications(deps: NotificationDeps) {
  const { store, clock, log } = deps;
  const now = (livemode: boolean) => iso(clock.now(livemode));
  const OPEN = { $in: ["received", "waiting"] satisfies AcquirerNotificationDoc["state"][] };

  function build(item: NotificationItem, livemode: boolean): AcquirerNotificationDoc {
    const at = clock.createdAt(livemode);
    return {
      id: `adyen:${dedupeKey(item)}`,
      livemode,
      created_at: at,
      updated_at: at,
      acquirer: "adyen",
      event_code: item.eventCode,
      success: item.success === "true",
      psp_reference: item.pspReference,
      merchant_reference: item.merchantReference,
      outcome: outcomeOf(item),
      state: "received",
      effect: null,
      attempts: 0,
    };
  }

  /** Stores the item, or finds it stored by an earlier (or concurrent) delivery. */
  async function store1(doc: AcquirerNotificationDoc): Promise<AcquirerNotificationDoc> {
    try {
      await store.insert("acquirer_notifications", doc);
      return doc;
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
      const found = await store.get("acquirer_notifications", doc.id);
      if (!found) throw err;
      return found;
    }
  }

  /** Routes an outcome to the area that owns its object. `mark` runs first in the change's transaction. */
  async function route(
    outcome: NotificationOutcome,
    livemode: boolean,
    mark: (tx: AcquirerNotificationTx) => Promise<void>,
  ): Promise<Result> {
    const charges = deps.charges.acquirerOutcomes;
    switch (outcome.type) {
      case "authorization":
        return charges.authorization(
          livemode,
          outcome.merchantReference,
          { succeeded: outcome.succeeded, reference: outcome.paymentReference, reason: outcome.reason },
          mark,
        );
      case "capture":
      case "cancellation":
        return charges.modification(livemode, outcome.merchantReference, outcome.type, outcome.succeeded, mark);
      case "refund":
        // The connector's reference is the refund's key (`re_…:refund`, refundIdOf); an older refund's, the charge's.
        if (outcome.merchantReference.startsWith("re_")) {
          return charges.refund(livemode, refundIdOf(outcome.merchantReference), outcome.succeeded, mark);
        }
        return outcome.succeeded ? "confirmed" : "attention";
      case "cancel_or_refund":
        // Sent only as the recovery's reversal (`<charge id>:reverse`); anything else is for a person.
        return charges.reversal(livemode, outcome.merchantReference, outcome.succeeded);
      case "dispute":
        return deps.disputes.acquirerOutcomes.apply(
          livemode,
          outcome.merchantReference,
          outcome.stage,
          { disputeReference: outcome.disputeReference, reasonCode: outcome.reasonCode },
          mark,
        );
      case "payout":
        return deps.cashouts.acquirerOutcome(livemode, outcome.merchantReference, outcome.status, outcome.reason, mark);
      case "unhandled":
        return "unhandled";
    }
  }

  /**
   * Applies one stored item once (see the top of this file). Returns what became of it; an item another
   * delivery applied meanwhile is `applied` too.
   */
  async function apply(doc: AcquirerNotificationDoc): Promise<AcquirerNotificationDoc["state"]> {
    const at = now(doc.livemode);
    let marked = false;
    const mark = async (tx: AcquirerNotificationTx) => {
      const done = await tx.update(
        "acquirer_notifications",
        doc.id,
        { set: { state: "applied", effect: "applied", updated_at: at }, inc: { attempts: 1 } },
        { state: OPEN },
      );
      if (!done) throw new AlreadyApplied();
      marked = true;
    };
    let result: Result;
    try {
      result = await route(doc.outcome, doc.livemode, mark);
    } catch (err) {
      if (err instanceof AlreadyApplied) return "applied";
      // The object moved between our read and the change (a concurrent request): try again later.
      if (err instanceof DomainError && err.code !== "not_found") result = "waiting";
      else throw err;
    }
    if (result === "applied" && marked) return "applied";
    const state = result === "waiting" ? "waiting" : "noted";
    const effect = result === "waiting" || result === "applied" ? null : result;
    const moved = await store.update(
      "acquirer_notifications",
      doc.id,
      { set: { state, effect, updated_at: at }, inc: { attempts: 1 } },
      { state: OPEN },
    );
    if (!moved) return "applied";
    if (result === "attention") {
      log.error(
        { notification: doc.id, event: doc.event_code, object: doc.merchant_reference },
        "Adyen reports an outcome that contradicts what is recorded (a refused capture, cancellation or refund, a returned payout, a dispute decided twice); reconcile it with Adyen's Customer Area",
      );
    }
    return state;
  }

  /** Tries again the items waiting on `merchantReference`, until none of them moves. */
  async function retryWaitingOn(livemode: boolean, merchantReference: string): Promise<void> {
    for (let round = 0; round < 10; round++) {
      const waiting = await store.findAll(
        "acquirer_notifications",
        { livemode, merchant_reference: merchantReference, state: "waiting" },
        100,
      );
      let moved = false;
      for (const doc of waiting) if ((await apply(doc)) !== "waiting") moved = true;
      if (!moved) return;
    }
  }

  return {
    /** Whether the endpoint is on (ADYEN_HMAC_KEYS set). */
    configured: () => deps.adyenHmacKeys.length > 0,

    /**
     * receiveAdyenNotifications: verifies every item, stores and applies each valid one (exactly once),
     * and says how many were refused. 503 while no HMAC key is configured: nothing is stored.
     */
    async receive(body: unknown): Promise<Receipt> {
      if (deps.adyenHmacKeys.length === 0) {
        throw new DomainError(
          "acquirer_not_configured",
          "Adyen's notifications are off: this server has no HMAC key for them. Its operator sets ADYEN_HMAC_KEYS or ADYEN_HMAC_KEYS_FILE (docs/operating.md); nothing was stored.",
        );
      }
      const { accepted, refused, live } = verifyNotification(body, deps.adyenHmacKeys, log);
      for (const item of accepted) {
        const doc = await store1(build(item, environmentOf(live, deps.adyenEnvironments)));
        if (doc.state !== "received" && doc.state !== "waiting") continue;
        if ((await apply(doc)) === "applied") await retryWaitingOn(doc.livemode, doc.merchant_reference);
      }
      return { stored: accepted.length, refused: refused.length };
    },

    /**
     * The notifications job, one environment: applies what a crash left `received` and tries every
     * `waiting` item again (a CAPTURE that came before our capture's commit). Returns how many moved on.
     */
    async applyPending(livemode: boolean, limit = 500): Promise<number> {
      let moved = 0;
      for (const state of ["received", "waiting"] as const) {
        for (const doc of await store.findAll("acquirer_notifications", { livemode, state }, limit)) {
          if ((await apply(doc)) !== "waiting") moved++;
        }
      }
      return moved;
    },

    /** The stored items of an environment in a state (tests; an operator's check). */
    inState: (livemode: boolean, state: AcquirerNotificationDoc["state"], limit = 10_000) =>
      store.findAll("acquirer_notifications", { livemode, state }, limit),
  };
}

export type AcquirerNotifications = ReturnType<typeof createAcquirerNotifications>;
