import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { Status } from "../kernel/state-machine.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";

// The merchant's stored shape (spec/resources/merchants.tsp); serialize.ts names what the API shows.

export type MerchantStatus = "active" | "suspended" | "closed";

export interface MerchantDoc extends BaseDoc {
  name: string;
  /** Written only through MERCHANT_MACHINE (state.ts). */
  status: Status<"merchant", MerchantStatus>;
  metadata: Record<string, string>;
  updated_at: string;
}

export const merchantCollections = {
  merchants: collection<MerchantDoc>([{ fields: ["livemode", "status", "created_at", "id"] }]),
};

/** The store as the merchants area sees it: its own collections and the kernel's (kernel/store.ts). */
export type MerchantStore = AreaStore<typeof merchantCollections>;
export type MerchantTx = AreaTx<typeof merchantCollections>;
export type MerchantDocs = AreaDocs<typeof merchantCollections>;
