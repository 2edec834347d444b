import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";

// The merchant's stored shape (spec/resources/merchants.tsp); serialize.ts names what the API shows.

export interface MerchantDoc extends BaseDoc {
  name: string;
  status: "active" | "suspended" | "closed";
  metadata: Record<string, string>;
  updated_at: string;
}

export const merchantCollections = {
  merchants: collection<MerchantDoc>([{ fields: ["livemode", "status"] }]),
};
