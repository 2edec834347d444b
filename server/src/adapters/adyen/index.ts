// The Adyen connector's public face (package export `@payments/server/adyen`): the acquirer port, the
// connector, the notification verifier and parser. The server wires them; the tests' stand-in uses them.
export * from "./acquirer.ts";
export { type AdyenSettings, adyenEndpoints, createAdyenConnector } from "./connector.ts";
export { failureFor } from "./failures.ts";
export * from "./notifications.ts";
export {
  confirmKey,
  createAdyenPayoutRail,
  declineKey,
  HOLDER_MISSING,
  holderOf,
  type PayoutHolder,
} from "./payout-rail.ts";
export { type AdyenProcessorOptions, CHALLENGE_NOT_SUPPORTED, createAdyenProcessor } from "./processor.ts";
