import type { NotificationOutcome } from "../../adapters/adyen/notifications.ts";
import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaStore, AreaTx } from "../kernel/store.ts";

// The acquirer's notifications as stored (receiveAdyenNotifications, spec/resources/acquirer-notifications.tsp).

/**
 * `received`: stored (Adyen has, or is about to get, its acknowledgement), not applied yet; `waiting`: the
 * object it names is not yet in the state it follows (out of order), tried again after each notification
 * about the same object and by the notifications job; `applied`: its effect committed, in the same
 * transaction as this state; `noted`: nothing to change (a confirmation of what is recorded, an event
 * code we do not act on) or a contradiction logged for a person (`effect: "attention"`).
 */
export type NotificationState = "received" | "waiting" | "applied" | "noted";

/**
 * One notification item, once per event. Id: `adyen:` and Adyen's dedupe key
 * (`pspReference:eventCode:success`, adapters/adyen/notifications.ts dedupeKey), unique in the store: a
 * redelivery finds it and applies nothing more. Never shown by the API; kept for the operator's audit.
 */
export interface AcquirerNotificationDoc extends BaseDoc {
  acquirer: "adyen";
  event_code: string;
  success: boolean;
  psp_reference: string;
  /** Our charge, refund or cashout id the item names (what the connector sent as merchantReference). */
  merchant_reference: string;
  /** What it means for our objects (adapters/adyen/notifications.ts outcomeOf). */
  outcome: NotificationOutcome;
  state: NotificationState;
  /** What applying it did: `applied`, `confirmed`, `attention`, `unhandled`; null until then. */
  effect: "applied" | "confirmed" | "attention" | "unhandled" | null;
  /** How many deliveries and retries tried to apply it. */
  attempts: number;
  updated_at: string;
}

export const acquirerNotificationCollections = {
  acquirer_notifications: collection<AcquirerNotificationDoc>([
    { fields: ["livemode", "state"] },
    { fields: ["livemode", "merchant_reference", "state"] },
  ]),
};

export type AcquirerNotificationStore = AreaStore<typeof acquirerNotificationCollections>;
export type AcquirerNotificationTx = AreaTx<typeof acquirerNotificationCollections>;
