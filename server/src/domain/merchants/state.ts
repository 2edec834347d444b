import { stateMachine } from "../kernel/state-machine.ts";
import type { MerchantStatus } from "./records.ts";

/**
 * The merchant state machine (spec/resources/merchants.tsp), its whole table: created active or
 * suspended (never closed); active ⇄ suspended, either → closed; closed is final. A PATCH to the status
 * the merchant already has is no change, so it is not a transition (merchants.ts update).
 */
export const MERCHANT_MACHINE = stateMachine<"merchant", MerchantStatus>("merchant", {
  initial: ["active", "suspended"],
  transitions: {
    active: ["suspended", "closed"],
    suspended: ["active", "closed"],
    closed: [],
  },
});
