import type { PageDef } from "../app.ts";
import { balanceTransactionsPage } from "./balance-transactions.ts";
import { cashoutsPage } from "./cashouts.ts";
import { chargesPage } from "./charges.ts";
import { disputesPage } from "./disputes.ts";
import { eventsPage } from "./events.ts";
import { fraudPage } from "./fraud.ts";
import { keysPage } from "./keys.ts";
import { merchantsPage } from "./merchants.ts";
import { paymentLinksPage } from "./payment-links.ts";
import { requestLogPage } from "./request-log.ts";
import { sandboxClockPage } from "./sandbox-clock.ts";
import { sandboxesPage } from "./sandboxes.ts";
import { tokensPage } from "./tokens.ts";
import { webhooksPage } from "./webhooks.ts";

// Every page of the console, in navigation order. A page appears for a key that may call one of its
// `needs` operations (its scopes, read from the contract): payment links for `payment_links`
// (listPaymentLinks), cashouts for `cashouts` (listCashouts), and so on. A new page is a module in this
// folder exporting a PageDef, built like charges.ts (listView with the operation's filters, a detail
// route, each action behind ctx.can), added here.
export const PAGES: PageDef[] = [
  keysPage,
  webhooksPage,
  eventsPage,
  chargesPage,
  disputesPage,
  paymentLinksPage,
  merchantsPage,
  cashoutsPage,
  balanceTransactionsPage,
  tokensPage,
  fraudPage,
  requestLogPage,
  sandboxClockPage,
  sandboxesPage,
];
