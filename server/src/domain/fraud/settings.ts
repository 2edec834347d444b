import type { components } from "@payments/contract/types";
import { DuplicateKeyError } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { iso } from "../kernel/time.ts";
import type { FraudSettingsDoc, FraudStore } from "./records.ts";

// The fraud settings of each environment (spec: FraudSettings, GET/PATCH /v1/fraud/settings): the
// review and block thresholds (Stripe Radar's defaults, 65 and 75) and how long a review stays open.
// Stored as one document per environment, id `test` or `live`; absent until first changed.

export interface FraudSettings {
  reviewThreshold: number;
  blockThreshold: number;
  /** null: the `request_3ds` decision is off (the default). */
  request3dsThreshold: number | null;
  reviewWindowSeconds: number;
  livemode: boolean;
  /** null while the defaults apply. */
  updatedAt: string | null;
}

export const DEFAULT_SETTINGS = {
  reviewThreshold: 65,
  blockThreshold: 75,
  request3dsThreshold: null,
  /** Seven days: about as long as a card authorization lasts. */
  reviewWindowSeconds: 7 * 86400,
} as const;

/** updateFraudSettings's body (the contract's FraudSettingsUpdate). */
export type FraudSettingsUpdate = components["schemas"]["FraudSettingsUpdate"];

const docId = (livemode: boolean) => (livemode ? "live" : "test");

function fromDoc(livemode: boolean, doc: FraudSettingsDoc | null): FraudSettings {
  if (!doc) return { ...DEFAULT_SETTINGS, livemode, updatedAt: null };
  return {
    reviewThreshold: doc.review_threshold,
    blockThreshold: doc.block_threshold,
    request3dsThreshold: doc.request_3ds_threshold ?? null,
    reviewWindowSeconds: doc.review_window_seconds,
    livemode,
    updatedAt: doc.updated_at,
  };
}

export function createFraudSettings(store: FraudStore, clock: Clock): FraudSettingsService {
  async function load(livemode: boolean): Promise<FraudSettings> {
    return fromDoc(livemode, await store.get("fraud_settings", docId(livemode)));
  }

  return {
    load,

    get: (caller: Caller) => load(caller.livemode),

    /**
     * Applies the changes, refusing a review threshold that is not below the block threshold (400
     * naming the field that was sent). Conditional on the values it read, so two concurrent changes
     * cannot together produce a pair that neither alone would allow (409: retry).
     */
    async update(caller: Caller, changes: FraudSettingsUpdate): Promise<FraudSettings> {
      const id = docId(caller.livemode);
      const current = await store.get("fraud_settings", id);
      const before = fromDoc(caller.livemode, current);
      const review = changes.review_threshold ?? before.reviewThreshold;
      const block = changes.block_threshold ?? before.blockThreshold;
      if (review >= block) {
        if (changes.review_threshold !== undefined) {
          throw invalid("review_threshold", `must be below block_threshold (${block})`);
        }
        throw invalid("block_threshold", `must be above review_threshold (${review})`);
      }
      const request3ds =
        changes.request_3ds_threshold === undefined ? before.request3dsThreshold : changes.request_3ds_threshold;
      if (request3ds !== null && (request3ds <= review || request3ds >= block)) {
        // Name the field that was sent: the one the caller can change to fix it.
        const why = `must be above review_threshold (${review}) and below block_threshold (${block})`;
        if (changes.request_3ds_threshold !== undefined) throw invalid("request_3ds_threshold", why);
        const moved = changes.review_threshold !== undefined ? "review_threshold" : "block_threshold";
        throw invalid(
          moved,
          `must leave request_3ds_threshold (${request3ds}) between the review and block thresholds`,
        );
      }
      const at = clock.now(caller.livemode);
      const values = {
        review_threshold: review,
        block_threshold: block,
        request_3ds_threshold: request3ds,
        review_window_seconds: changes.review_window_seconds ?? before.reviewWindowSeconds,
        updated_at: iso(at),
      };
      const raced = () => new DomainError("conflict", "The fraud settings changed at the same time; retry.");
      if (!current) {
        try {
          await store.insert("fraud_settings", {
            id,
            livemode: caller.livemode,
            created_at: clock.createdAt(caller.livemode),
            ...values,
          });
        } catch (err) {
          if (err instanceof DuplicateKeyError) throw raced();
          throw err;
        }
        return fromDoc(caller.livemode, { id, livemode: caller.livemode, created_at: "", ...values });
      }
      const updated = await store.update(
        "fraud_settings",
        id,
        { set: values },
        { review_threshold: current.review_threshold, block_threshold: current.block_threshold },
      );
      if (!updated) throw raced();
      return fromDoc(caller.livemode, updated);
    },
  };
}

/** The fraud settings' service (getFraudSettings, updateFraudSettings). */
export interface FraudSettingsService {
  load: (livemode: boolean) => Promise<FraudSettings>;
  get: (caller: Caller) => Promise<FraudSettings>;
  /**
   * Applies the changes, refusing a review threshold that is not below the block threshold (400
   * naming the field that was sent). Conditional on the values it read, so two concurrent changes
   * cannot together produce a pair that neither alone would allow (409: retry).
   */
  update(caller: Caller, changes: FraudSettingsUpdate): Promise<FraudSettings>;
}
