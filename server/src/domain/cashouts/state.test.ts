import { describe } from "vitest";
import { itHoldsTheTable } from "../../../test-support/state-machine.ts";
import { CASHOUT_MACHINE } from "./state.ts";

// The cashout state machine (CashoutStatus in spec/resources/cashouts.tsp), its whole table. What each use
// case refuses, and the money each change moves, is in cashouts.test.ts.

describe("the cashout state machine", () => {
  itHoldsTheTable(CASHOUT_MACHINE, {
    initial: ["pending"],
    edges: [
      ["pending", "in_transit"],
      ["pending", "canceled"],
      ["pending", "failed"],
      ["in_transit", "paid"],
      ["in_transit", "failed"],
      // The destination's bank sent a paid cashout back (PAIDOUT_REVERSED).
      ["paid", "failed"],
    ],
  });
});
