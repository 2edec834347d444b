import { type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import type { Charges } from "./charges.ts";
import * as serialize from "./serialize.ts";

// Charges, refunds and reviews (spec/resources/charges.tsp; scope `charges`), with the sandbox helpers
// that play a local payment's payer.

export function chargeHandlers({ charges }: { charges: Charges }, { answer }: HandlerKit) {
  return {
    createCharge: answer(201, serialize.charge, ({ caller, body }) => charges.create(caller, body)),
    getCharge: async ({ caller, path }) => ({
      status: 200,
      body: serialize.charge(await charges.get(caller, path.id)),
    }),
    listCharges: async ({ caller, query }) => ({
      status: 200,
      body: list(
        await charges.list(
          caller,
          { merchant_id: query.merchant_id, status: query.status, payment_link_id: query.payment_link_id },
          page(query),
        ),
        serialize.charge,
      ),
    }),
    captureCharge: answer(200, serialize.charge, ({ caller, path, body }) =>
      charges.capture(caller, path.id, body.amount),
    ),
    voidCharge: answer(200, serialize.charge, ({ caller, path }) => charges.void(caller, path.id)),
    createRefund: answer(201, serialize.refund, ({ caller, path, body }) => charges.refund(caller, path.id, body)),
    listRefunds: async ({ caller, path, query }) => ({
      status: 200,
      body: list(await charges.listRefunds(caller, path.id, page(query)), serialize.refund),
    }),
    approveChargeReview: answer(200, serialize.charge, ({ caller, path }) => charges.approveReview(caller, path.id)),
    rejectChargeReview: answer(200, serialize.charge, ({ caller, path }) => charges.rejectReview(caller, path.id)),
    sandboxCompleteCharge: answer(200, serialize.charge, ({ caller, path }) => charges.complete(caller, path.id)),
    sandboxExpireCharge: answer(200, serialize.charge, ({ caller, path }) => charges.expire(caller, path.id)),
    sandboxAnswerThreeDSecure: answer(200, serialize.charge, ({ caller, path, body }) =>
      charges.answerChallenge(caller, path.id, body.outcome),
    ),
  } satisfies Partial<Handlers>;
}
