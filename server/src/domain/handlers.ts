import { acquirerNotificationHandlers } from "./acquirer-notifications/handlers.ts";
import { cashoutHandlers } from "./cashouts/handlers.ts";
import { chargeHandlers } from "./charges/handlers.ts";
import { disputeHandlers } from "./disputes/handlers.ts";
import { fraudHandlers } from "./fraud/handlers.ts";
import { healthHandlers } from "./health/handlers.ts";
import type { Domain } from "./index.ts";
import { type Handlers, handlerKit } from "./kernel/operations.ts";
import { ledgerHandlers } from "./ledger/handlers.ts";
import { merchantHandlers } from "./merchants/handlers.ts";
import { paymentLinkHandlers } from "./payment-links/handlers.ts";
import { requestLogHandlers } from "./request-log/handlers.ts";
import { sandboxClockHandlers } from "./sandbox-clock/handlers.ts";
import { sandboxHandlers } from "./sandboxes/handlers.ts";
import { serviceKeyHandlers } from "./service-keys/handlers.ts";
import { vaultHandlers } from "./vault/handlers.ts";
import { webhookHandlers } from "./webhooks/handlers.ts";

// The registry of the API's handlers: each area owns the fragment for its operations (its handlers.ts),
// and a new area adds one line here. The result is typed as every operation of the generated contract,
// so an operation without a handler fails `tsc`; http/app.ts checks the same at start-up against the
// document itself.

export interface HandlerOptions {
  /** Called after a POST's use case has committed its change, before the answer is built (crash tests). */
  afterCommit?: () => void;
}

export function createHandlers(domain: Domain, options: HandlerOptions = {}): Handlers {
  const kit = handlerKit(options.afterCommit);
  return {
    ...merchantHandlers(domain, kit),
    ...ledgerHandlers(domain, kit),
    ...vaultHandlers(domain, kit),
    ...serviceKeyHandlers(domain, kit),
    ...chargeHandlers(domain, kit),
    ...fraudHandlers(domain, kit),
    ...cashoutHandlers(domain, kit),
    ...disputeHandlers(domain, kit),
    ...acquirerNotificationHandlers(domain, kit),
    ...paymentLinkHandlers(domain, kit),
    ...webhookHandlers(domain, kit),
    ...requestLogHandlers(domain),
    ...healthHandlers(domain),
    ...sandboxClockHandlers(domain, kit),
    ...sandboxHandlers(domain, kit),
  };
}
