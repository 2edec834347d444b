import { describe } from "vitest";
import { itHoldsTheTable } from "../../../test-support/state-machine.ts";
import { CHARGE_MACHINE, REFUND_MACHINE, REVIEW_MACHINE } from "./state.ts";

// The charges area's state machines, table by table (spec/resources/charges.tsp: ChargeStatus,
// ChargeReview, Refund). What each use case refuses, and why, is in charges.test.ts and charges.rules.test.ts.

describe("the charge state machine", () => {
  itHoldsTheTable(CHARGE_MACHINE, {
    // A charge is created in its outcome (createCharge): a local method's pending, a card's authorized,
    // captured or declined, or blocked by fraud evaluation.
    // A card that needs 3-D Secure is created requires_action.
    initial: ["pending", "requires_action", "authorized", "captured", "declined", "blocked"],
    edges: [
      // A card Adyen took undecided (Received/Pending), authorized by its AUTHORISATION with capture false.
      ["pending", "authorized"],
      ["pending", "captured"],
      ["pending", "expired"],
      ["pending", "declined"],
      // Adyen took the challenge's completion undecided (/payments/details Received/Pending).
      ["requires_action", "pending"],
      ["requires_action", "authorized"],
      ["requires_action", "captured"],
      ["requires_action", "declined"],
      ["requires_action", "expired"],
      ["authorized", "captured"],
      ["authorized", "voided"],
      ["captured", "partially_refunded"],
      ["captured", "refunded"],
      // The acquirer reports the capture failed after it was recorded (acquirer-outcomes.ts).
      ["captured", "declined"],
      ["partially_refunded", "partially_refunded"],
      ["partially_refunded", "refunded"],
      // A refund the acquirer reports failed gives its amount back (acquirer-outcomes.ts).
      ["partially_refunded", "captured"],
      ["refunded", "partially_refunded"],
      ["refunded", "captured"],
    ],
  });
});

describe("the review state machine", () => {
  itHoldsTheTable(REVIEW_MACHINE, {
    initial: ["open"],
    edges: [
      ["open", "approved"],
      ["open", "rejected"],
      ["open", "expired"],
    ],
  });
});

describe("the refund state machine", () => {
  itHoldsTheTable(REFUND_MACHINE, { initial: ["succeeded"], edges: [["succeeded", "failed"]] });
});
