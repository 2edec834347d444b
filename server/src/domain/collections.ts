import type { Store, TxOps } from "../store/port.ts";
import { acquirerNotificationCollections } from "./acquirer-notifications/records.ts";
import { cashoutCollections } from "./cashouts/records.ts";
import { chargeCollections } from "./charges/records.ts";
import { consoleSessionCollections } from "./console-sessions/records.ts";
import { disputeCollections } from "./disputes/records.ts";
import { fraudCollections } from "./fraud/records.ts";
import { idempotencyCollections } from "./kernel/commit.ts";
import { eventCollections } from "./kernel/events.ts";
import type { DocsOf } from "./kernel/records.ts";
import { ledgerCollections } from "./ledger/records.ts";
import { merchantCollections } from "./merchants/records.ts";
import { paymentLinkCollections } from "./payment-links/records.ts";
import { requestLogCollections } from "./request-log/records.ts";
import { sandboxClockCollections } from "./sandbox-clock/records.ts";
import { sandboxCollections } from "./sandboxes/records.ts";
import { serviceKeyCollections } from "./service-keys/records.ts";
import { vaultCollections } from "./vault/records.ts";
import { webhookCollections } from "./webhooks/records.ts";

// The registry of the domain's collections: each area declares its own in its records.ts (the persisted
// shape of every object, and the indexes its queries need); a new area adds one line here. API objects
// are serialized from these records by each area's serialize.ts, which names exactly the fields the
// contract shows, so secrets and card data never leave through the API except by the vault's audited reveal.
// AppStore, the whole store's type, is for the composition root (index.ts), the transport and tests: an
// area's own code sees only its own collections and the kernel's (kernel/store.ts AreaStore).

export const COLLECTIONS = {
  ...eventCollections,
  ...idempotencyCollections,
  ...merchantCollections,
  ...vaultCollections,
  ...serviceKeyCollections,
  ...requestLogCollections,
  ...chargeCollections,
  ...ledgerCollections,
  ...fraudCollections,
  ...webhookCollections,
  ...cashoutCollections,
  ...disputeCollections,
  ...acquirerNotificationCollections,
  ...paymentLinkCollections,
  ...consoleSessionCollections,
  ...sandboxClockCollections,
  ...sandboxCollections,
};

export type Docs = DocsOf<typeof COLLECTIONS>;
export type AppStore = Store<Docs>;
export type AppTx = TxOps<Docs>;
