import { type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import type { LinkPayment } from "./pay.ts";
import type { PaymentLinks } from "./payment-links.ts";
import type { PaymentLinkDoc } from "./records.ts";
import * as serialize from "./serialize.ts";

// Payment links (spec/resources/payment-links.tsp; scope `payment_links`) and the public payment their
// hosted page makes (payPaymentLink: no key).

export function paymentLinkHandlers(
  { paymentLinks }: { paymentLinks: PaymentLinks },
  { answer, afterCommit }: HandlerKit,
) {
  const link = (l: PaymentLinkDoc) => serialize.paymentLink(l, paymentLinks.url(l));
  return {
    createPaymentLink: answer(201, link, ({ caller, body }) => paymentLinks.create(caller, body)),
    getPaymentLink: async ({ caller, path }) => ({ status: 200, body: link(await paymentLinks.get(caller, path.id)) }),
    listPaymentLinks: async ({ caller, query }) => ({
      status: 200,
      body: list(
        await paymentLinks.list(
          caller,
          {
            merchant_id: query.merchant_id,
            active: query.active === undefined ? undefined : String(query.active) === "true",
          },
          page(query),
        ),
        link,
      ),
    }),
    updatePaymentLink: async ({ caller, path, body }) => ({
      status: 200,
      body: link(await paymentLinks.update(caller, path.id, body)),
    }),
    // Public (no key): the domain builds the link's own caller; the answer is recorded with the charge
    // through the Idempotency-Key's recorder, as answer() does for keyed POSTs.
    payPaymentLink: async ({ path, body, requestId, ip, idempotency }) => {
      const toReply = (result: LinkPayment) => ({ status: 201 as const, body: serialize.paymentLinkPayment(result) });
      // cast: the recorder is handed what pay() returns (a LinkPayment), through commit(), which types it unknown.
      const outcome = idempotency?.recorder((result) => toReply(result as LinkPayment));
      const result = await paymentLinks.pay(path.id, body, { requestId, ip, outcome });
      afterCommit();
      return toReply(result);
    },
  } satisfies Partial<Handlers>;
}
