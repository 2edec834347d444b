import { describe } from "vitest";
import { itHoldsTheTable } from "../../../test-support/state-machine.ts";
import { MERCHANT_MACHINE } from "./state.ts";

// The merchant state machine (spec/resources/merchants.tsp), its whole table; merchants.test.ts checks
// what createMerchant and updateMerchant answer.

describe("the merchant state machine", () => {
  itHoldsTheTable(MERCHANT_MACHINE, {
    initial: ["active", "suspended"],
    edges: [
      ["active", "suspended"],
      ["active", "closed"],
      ["suspended", "active"],
      ["suspended", "closed"],
    ],
  });
});
