import type { components } from "@payments/contract/types";
import type { Page, PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import type { QueryParams } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import type { MerchantDoc, MerchantStatus, MerchantStore } from "./records.ts";
import { MERCHANT_MACHINE } from "./state.ts";

export type { MerchantStatus };

/** createMerchant's body (the contract's MerchantCreate). */
export type MerchantCreate = components["schemas"]["MerchantCreate"];

/** updateMerchant's body (the contract's MerchantUpdate). */
export type MerchantUpdate = components["schemas"]["MerchantUpdate"];

export function createMerchants(store: MerchantStore, clock: Clock): Merchants {
  /** `param` names the request field the id came from, for the 404 problem. */
  async function load(livemode: boolean, id: string, param = "id"): Promise<MerchantDoc> {
    return inEnvironment(await store.get("merchants", id), livemode, "merchant", id, param);
  }

  return {
    load,

    /**
     * The merchant `id` in either environment, or null: for what is reached by a global id without a
     * caller (a payment link's public page and payment, payment-links/pay.ts).
     */
    find: (id: string): Promise<MerchantDoc | null> => store.get("merchants", id),

    /**
     * The merchant named in a request that moves its money (a charge, a payment link, a cashout): it must
     * exist in the caller's environment (404) and be active (409 merchant_inactive, naming the field).
     */
    async loadActive(livemode: boolean, id: string, param: string, action: "take payments" | "cash out") {
      const merchant = await load(livemode, id, param);
      if (merchant.status !== "active") {
        throw new DomainError(
          "merchant_inactive",
          `The merchant is ${merchant.status}; only active merchants can ${action}.`,
          { param },
        );
      }
      return merchant;
    },

    async create(caller: Caller, input: MerchantCreate): Promise<MerchantDoc> {
      // MerchantCreate.status may be set (default `active`); a merchant created closed makes no sense.
      const status = MERCHANT_MACHINE.start(input.status ?? "active", () =>
        invalid("status", "a merchant cannot be created closed"),
      );
      const at = clock.createdAt(caller.livemode);
      const merchant: MerchantDoc = {
        id: newId("mch"),
        livemode: caller.livemode,
        created_at: at,
        updated_at: at,
        name: input.name,
        status,
        metadata: input.metadata ?? {},
      };
      return commit(store, caller, async (tx) => {
        await tx.insert("merchants", merchant);
        await recordEvent(tx, clock, merchant.livemode, "merchant.created", {
          merchant_id: merchant.id,
          name: merchant.name,
          status: merchant.status,
        });
        return merchant;
      });
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    list: (caller: Caller, filter: Pick<QueryParams<"listMerchants">, "status">, page: Page) =>
      store.list("merchants", { livemode: caller.livemode, ...(filter.status ? { status: filter.status } : {}) }, page),

    async update(caller: Caller, id: string, changes: MerchantUpdate): Promise<MerchantDoc> {
      const current = await load(caller.livemode, id);
      // The same status again is no change (a retried PATCH is safe); any other goes through the machine.
      const moves = changes.status !== undefined && changes.status !== current.status;
      if (moves && changes.status && !MERCHANT_MACHINE.can(current.status, changes.status)) {
        throw new DomainError(
          "invalid_state_transition",
          current.status === "closed"
            ? "A closed merchant cannot change status (closed is final)."
            : `A merchant cannot go from ${current.status} to ${changes.status}.`,
          { param: "status" },
        );
      }
      const set: Partial<MerchantDoc> = { updated_at: iso(clock.now(caller.livemode)) };
      if (changes.name !== undefined) set.name = changes.name;
      if (moves && changes.status) set.status = MERCHANT_MACHINE.step(current.status, changes.status);
      if (changes.metadata !== undefined) set.metadata = changes.metadata;
      // The fields that really change, with their values before: merchant.updated's previous_attributes.
      const previous: Partial<Pick<MerchantDoc, "name" | "status" | "metadata">> = {};
      if (changes.name !== undefined && changes.name !== current.name) previous.name = current.name;
      if (changes.status !== undefined && changes.status !== current.status) previous.status = current.status;
      if (changes.metadata !== undefined && JSON.stringify(changes.metadata) !== JSON.stringify(current.metadata)) {
        previous.metadata = current.metadata;
      }
      return commit(store, caller, async (tx) => {
        // Conditional on the status we checked: a concurrent change makes this a 409, never a lost update
        // past a final state.
        const updated = await tx.update("merchants", id, { set }, { status: current.status });
        if (!updated) {
          throw new DomainError("conflict", "The merchant changed while it was being updated; retry.", {
            param: "status",
          });
        }
        // A PATCH that changes nothing (the same values again) is no change and leaves no event.
        if (Object.keys(previous).length > 0) {
          await recordEvent(tx, clock, updated.livemode, "merchant.updated", {
            merchant_id: updated.id,
            name: updated.name,
            status: updated.status,
            previous_attributes: previous,
          });
        }
        return updated;
      });
    },
  };
}

/** The merchants area's service (spec/resources/merchants.tsp): what other areas and the handlers may ask of it. */
export interface Merchants {
  load: (livemode: boolean, id: string, param?: string) => Promise<MerchantDoc>;
  /**
   * The merchant `id` in either environment, or null: for what is reached by a global id without a
   * caller (a payment link's public page and payment, payment-links/pay.ts).
   */
  find: (id: string) => Promise<MerchantDoc | null>;
  /**
   * The merchant named in a request that moves its money (a charge, a payment link, a cashout): it must
   * exist in the caller's environment (404) and be active (409 merchant_inactive, naming the field).
   */
  loadActive(livemode: boolean, id: string, param: string, action: "take payments" | "cash out"): Promise<MerchantDoc>;
  create(caller: Caller, input: MerchantCreate): Promise<MerchantDoc>;
  get: (caller: Caller, id: string) => Promise<MerchantDoc>;
  list: (
    caller: Caller,
    filter: Pick<QueryParams<"listMerchants">, "status">,
    page: Page,
  ) => Promise<PageResult<MerchantDoc>>;
  update(caller: Caller, id: string, changes: MerchantUpdate): Promise<MerchantDoc>;
}
