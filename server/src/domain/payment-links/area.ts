import type { Charges } from "../charges/charges.ts";
import type { ChargesDeps } from "../charges/context.ts";
import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import type { MoneyRules } from "../kernel/money.ts";
import type { SettingsOf } from "../kernel/settings.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import type { Tokens } from "../vault/tokens.ts";
import { paymentLinkHandlers } from "./handlers.ts";
import { createPageTokens } from "./page-token.ts";
import { createPaymentLinks, type PaymentLinks } from "./payment-links.ts";
import { paymentLinkCollections } from "./records.ts";
import { followTransition } from "./usage.ts";

// Payment links and their hosted page (spec/resources/payment-links.tsp), as the list of areas sees them
// (domain/areas.ts).

type Needs = { merchants: Merchants; tokens: Tokens; charges: Charges };
type Deps = {
  money: MoneyRules;
  vaultKeys: VaultKeys;
  /** The server's public address, for payment links' `url` (a function: known once the server listens). */
  baseUrl: () => string;
  settings: SettingsOf<"paymentLinks">;
};

export interface PaymentLinkServices {
  paymentLinks: PaymentLinks;
  /** Charges' link follower (charges/area.ts): a link follows its charges' outcomes in their transaction. */
  chargeFollower: { follow: ChargesDeps["onTransition"] };
}

export const paymentLinksArea = {
  name: "payment-links",
  collections: paymentLinkCollections,
  idPrefixes: ["plink"],
  machines: [],
  make: ({
    store,
    clock,
    needs,
    deps,
  }: AreaContext<typeof paymentLinkCollections, Needs, Deps>): PaymentLinkServices => ({
    paymentLinks: createPaymentLinks({
      store,
      clock,
      merchants: needs.merchants,
      tokens: needs.tokens,
      charges: needs.charges,
      money: deps.money,
      baseUrl: deps.baseUrl,
      pageTokens: createPageTokens(deps.vaultKeys.fingerprintKey, deps.settings.paymentLinks.pageTokenTtlSeconds),
    }),
    chargeFollower: { follow: (tx, from, charge) => followTransition(tx, clock, from, charge) },
  }),
  handlers: paymentLinkHandlers,
} as const satisfies AreaDeclaration;
