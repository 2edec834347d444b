import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { DomainError } from "../kernel/errors.ts";
import type { Schemas } from "../kernel/operations.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { MerchantDoc } from "../merchants/records.ts";
import type { MethodFee } from "./fees.ts";
import { type FeeSchedule, readFeeSchedule } from "./fees.ts";
import type { FeeOverrideDoc, LedgerStore } from "./records.ts";

// A merchant's fee override (getMerchantFeeSchedule, setMerchantFeeSchedule in
// spec/resources/fee-schedules.tsp; scope `*`): a schedule of its own that replaces the platform's
// (FEE_SCHEDULE) for the charges it makes from then on. A charge keeps the rate it was made with
// (ledger/fees.ts), so a change never reaches a charge already made.

/** The contract's FeeSchedule (the body's `override`). */
type FeeScheduleInput = Schemas["FeeSchedule"];

export function createFeeSchedules(
  store: LedgerStore,
  clock: Clock,
  merchants: Merchants,
  platform: FeeSchedule,
): FeeSchedules {
  /** The schedule `merchantId`'s new charges pay: its override, or the platform's. */
  async function scheduleFor(merchantId: string): Promise<FeeSchedule> {
    return (await store.get("fee_overrides", merchantId))?.schedule ?? platform;
  }

  return {
    scheduleFor,

    /** getMerchantFeeSchedule. */
    async get(caller: Caller, merchantId: string) {
      const merchant = await merchants.get(caller, merchantId);
      return { merchant, override: await store.get("fee_overrides", merchant.id), platform };
    },

    /** setMerchantFeeSchedule: sets or (null) removes the override, for charges made from now on. */
    async set(caller: Caller, merchantId: string, input: FeeScheduleInput | null) {
      const schedule = input === null ? null : normalized(input);
      const merchant = await merchants.get(caller, merchantId);
      const at = clock.createdAt(caller.livemode);
      const doc: FeeOverrideDoc = {
        id: merchant.id,
        livemode: merchant.livemode,
        created_at: at,
        updated_at: at,
        schedule,
      };
      // The whole answer comes out of the transaction: the Idempotency-Key's outcome is recorded from it.
      return commit(store, caller, async (tx) => {
        if (await tx.get("fee_overrides", merchant.id)) {
          const override = await tx.update("fee_overrides", merchant.id, { set: { schedule, updated_at: at } });
          return { merchant, override, platform };
        }
        await tx.insert("fee_overrides", doc);
        return { merchant, override: doc, platform };
      });
    },
  };
}

/** The body's schedule in the stored shape (`fixed` always present), checked as FEE_SCHEDULE is (400 naming it). */
function normalized(input: FeeScheduleInput): FeeSchedule {
  const schedule = readFeeSchedule(input);
  if (typeof schedule === "string") {
    throw new DomainError("invalid_request", `override: ${schedule}`, { param: "override" });
  }
  return schedule;
}

/** The ledger's fee schedules service (the platform's FEE_SCHEDULE and each merchant's override). */
export interface FeeSchedules {
  scheduleFor: (merchantId: string) => Promise<FeeSchedule>;
  /** getMerchantFeeSchedule. */
  get(
    caller: Caller,
    merchantId: string,
  ): Promise<{
    merchant: MerchantDoc;
    override: FeeOverrideDoc | null;
    platform: Partial<Record<"pix" | "boleto" | "oxxo" | "spei" | "sepa_debit" | "card", MethodFee>>;
  }>;
  /** setMerchantFeeSchedule: sets or (null) removes the override, for charges made from now on. */
  set(
    caller: Caller,
    merchantId: string,
    input: FeeScheduleInput | null,
  ): Promise<{
    merchant: MerchantDoc;
    override: FeeOverrideDoc | null;
    platform: Partial<Record<"pix" | "boleto" | "oxxo" | "spei" | "sepa_debit" | "card", MethodFee>>;
  }>;
}
