import { describe, expect, it } from "vitest";
import { itHoldsTheTable } from "../../../test-support/state-machine.ts";
import { chargeRefundable, DISPUTE_MACHINE } from "./state.ts";

// The dispute state machine (DisputeStatus in spec/resources/disputes.tsp), its whole table. What each use
// case refuses, and the money each change moves, is in disputes.test.ts.

describe("the dispute state machine", () => {
  itHoldsTheTable(DISPUTE_MACHINE, {
    initial: ["warning_needs_response", "needs_response"],
    edges: [
      ["warning_needs_response", "warning_under_review"],
      ["warning_needs_response", "warning_closed"],
      ["warning_needs_response", "needs_response"],
      ["warning_under_review", "warning_closed"],
      ["warning_under_review", "needs_response"],
      ["needs_response", "under_review"],
      ["needs_response", "won"],
      ["needs_response", "lost"],
      ["under_review", "won"],
      ["under_review", "lost"],
      // Decided again by the networks, as the acquirer reports it: a second chargeback, a late reversal.
      ["won", "lost"],
      ["lost", "won"],
    ],
  });

  it("lets the charge be refunded during an inquiry and after a won chargeback, never while one runs or once lost", () => {
    expect(chargeRefundable("warning_needs_response")).toBe(true);
    expect(chargeRefundable("warning_under_review")).toBe(true);
    expect(chargeRefundable("warning_closed")).toBe(true);
    expect(chargeRefundable("won")).toBe(true);
    expect(chargeRefundable("needs_response")).toBe(false);
    expect(chargeRefundable("under_review")).toBe(false);
    expect(chargeRefundable("lost")).toBe(false);
  });
});
