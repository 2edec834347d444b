import type { Page, PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import type { QueryParams } from "../kernel/operations.ts";
import { captureAndVoid } from "./capture.ts";
import { type ChargesDeps, chargeContext } from "./context.ts";
import { chargeCreation } from "./create.ts";
import { localPayments } from "./local-payments.ts";
import type { ChargeDoc } from "./records.ts";
import { refunds } from "./refunds.ts";
import { reviews } from "./reviews.ts";
import { threeDSecure } from "./three-d-secure.ts";

// Charges, refunds and their money movements (spec/resources/charges.tsp; docs/charges.md 'Charges'): the use
// cases, one file per operation group, over one shared context (context.ts). The state machine is
// state.ts.

export function createCharges(deps: ChargesDeps) {
  const ctx = chargeContext(deps);
  return {
    load: ctx.load,
    get: (caller: Caller, id: string) => ctx.load(caller.livemode, id),
    list: (
      caller: Caller,
      filter: Pick<QueryParams<"listCharges">, "merchant_id" | "status" | "payment_link_id">,
      page: Page,
    ): Promise<PageResult<ChargeDoc>> =>
      deps.store.list(
        "charges",
        {
          livemode: caller.livemode,
          ...(filter.merchant_id ? { merchant_id: filter.merchant_id } : {}),
          ...(filter.status ? { status: filter.status } : {}),
          ...(filter.payment_link_id ? { payment_link_id: filter.payment_link_id } : {}),
        },
        page,
      ),
    ...chargeCreation(ctx),
    ...threeDSecure(ctx),
    ...captureAndVoid(ctx),
    ...refunds(ctx),
    ...reviews(ctx),
    ...localPayments(ctx),
  };
}

export type Charges = ReturnType<typeof createCharges>;
