import type { PageDef } from "../app.ts";
import { chargesPage } from "./charges.ts";
import { eventsPage } from "./events.ts";
import { fraudPage } from "./fraud.ts";
import { keysPage } from "./keys.ts";
import { merchantsPage } from "./merchants.ts";
import { requestLogPage } from "./request-log.ts";
import { tokensPage } from "./tokens.ts";
import { webhooksPage } from "./webhooks.ts";

// Every page of the console, in navigation order. A page appears for a key that may call one of its
// `needs` operations (its scopes, read from the contract).
//
// Extension point: payment links (`plink_`, scope `payment_links`) and cashouts (`co_`, scope
// `cashouts`) get a page each here once their operations are in the contract: a module in this folder
// exporting a PageDef whose `needs` names their list operation (listPaymentLinks, listCashouts), built
// like charges.ts (listView with the operation's filters, a detail route, actions behind ctx.can).
export const PAGES: PageDef[] = [
  keysPage,
  webhooksPage,
  eventsPage,
  chargesPage,
  merchantsPage,
  tokensPage,
  fraudPage,
  requestLogPage,
];
