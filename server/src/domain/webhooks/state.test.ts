import { describe } from "vitest";
import { itHoldsTheTable } from "../../../test-support/state-machine.ts";
import { DELIVERY_MACHINE, ENDPOINT_MACHINE } from "./state.ts";

// The webhooks area's state machines, table by table; queue.test.ts and dispatcher.test.ts check the
// use cases that move them.

describe("the webhook endpoint state machine", () => {
  itHoldsTheTable(ENDPOINT_MACHINE, {
    initial: ["enabled"],
    edges: [
      ["enabled", "disabled"],
      ["disabled", "enabled"],
    ],
  });
});

describe("the webhook delivery state machine", () => {
  itHoldsTheTable(DELIVERY_MACHINE, {
    initial: ["pending"],
    edges: [
      ["pending", "pending"],
      ["pending", "succeeded"],
      ["pending", "failed"],
      ["succeeded", "pending"],
      ["failed", "pending"],
    ],
  });
});
