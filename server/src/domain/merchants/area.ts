import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import { merchantHandlers } from "./handlers.ts";
import { createMerchants, type Merchants } from "./merchants.ts";
import { merchantCollections } from "./records.ts";
import { MERCHANT_MACHINE } from "./state.ts";

// The merchants area (spec/resources/merchants.tsp), as the list of areas sees it (domain/areas.ts).

export const merchantsArea = {
  name: "merchants",
  collections: merchantCollections,
  idPrefixes: ["mch"],
  machines: [MERCHANT_MACHINE],
  make: ({ store, clock }: AreaContext<typeof merchantCollections>): { merchants: Merchants } => ({
    merchants: createMerchants(store, clock),
  }),
  handlers: merchantHandlers,
} as const satisfies AreaDeclaration;
