import { NOTIFICATION_ACKNOWLEDGEMENT } from "../../adapters/adyen/notifications.ts";
import { DomainError } from "../kernel/errors.ts";
import { type HandlerKit, type Handlers, plainText } from "../kernel/operations.ts";
import type { AcquirerNotifications } from "./notifications.ts";

// receiveAdyenNotifications (spec/resources/acquirer-notifications.tsp): public (Adyen has no service key;
// each item's HMAC signature is the proof), so there is no caller: the items are applied by the area,
// and the answer is Adyen's `[accepted]`, or 401 when an item was refused (after the valid ones were
// stored: Adyen retries the request, and a retry applies nothing twice).

export function acquirerNotificationHandlers(
  { acquirerNotifications }: { acquirerNotifications: AcquirerNotifications },
  kit: HandlerKit,
) {
  return {
    receiveAdyenNotifications: async ({ body }) => {
      const receipt = await acquirerNotifications.receive(body);
      kit.afterCommit();
      if (receipt.refused > 0) {
        throw new DomainError(
          "unauthorized",
          `${receipt.refused} of the request's notification items ${receipt.refused === 1 ? "is" : "are"} unsigned or wrongly signed (additionalData.hmacSignature): none of the server's ADYEN_HMAC_KEYS produces the signature. The other items were stored.`,
        );
      }
      return { status: 200, body: plainText(NOTIFICATION_ACKNOWLEDGEMENT) };
    },
  } satisfies Partial<Handlers>;
}
