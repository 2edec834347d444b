import { createPaymentsClient, type PaymentsClient } from "@payments/client";
import { type NotificationItem, signItem } from "@payments/server/adyen";
import type { NotificationRequestBody } from "./adyen-stand-in/stand-in.ts";
import { startTestServer, TEST_ADYEN_HMAC_KEY, type TestServer } from "./server.ts";

// Adyen's notifications as its test (or live) environment would send them to the test server's endpoint
// (receiveAdyenNotifications): each item signed per Adyen's scheme with the test server's ADYEN_HMAC_KEYS
// (the signer the stand-in uses), one item per request as Adyen sends them.

let sequence = 0;

/** An item naming `merchantReference` (our charge, refund or cashout id), signed with `key`. */
export function signedItem(
  fields: Pick<NotificationItem, "eventCode" | "merchantReference"> & Partial<NotificationItem>,
  key = TEST_ADYEN_HMAC_KEY,
): NotificationItem {
  const item = {
    pspReference: `TST${String(++sequence).padStart(13, "0")}${Math.random().toString(36).slice(2, 6).toUpperCase()}`,
    merchantAccountCode: "PaymentsPlatformECOM",
    amount: { value: 5000, currency: "BRL" },
    success: "true",
    eventDate: "2026-11-27T12:00:00+01:00",
    ...fields,
  } as NotificationItem;
  return {
    ...item,
    additionalData: { ...item.additionalData, hmacSignature: signItem(item, key) },
  } as NotificationItem;
}

/** A notification request carrying `items`, from Adyen's live environment (production) or its test one. */
export function notificationRequest(
  items: NotificationItem[],
  live = false,
): Omit<NotificationRequestBody, "live"> & { live: "true" | "false" } {
  return {
    live: live ? "true" : "false",
    notificationItems: items.map((NotificationRequestItem) => ({ NotificationRequestItem })),
  };
}

/** A request of Adyen's test environment (`live: "false"`: the sandbox's objects) carrying `items`. */
export const testRequest = (...items: NotificationItem[]) => notificationRequest(items) as NotificationRequestBody;

/** A test server, a sandbox client and the server's notification endpoint: what the test/adyen suites post to. */
export async function startNotifiedServer(): Promise<{ server: TestServer; client: PaymentsClient; endpoint: string }> {
  const server = await startTestServer();
  const client = createPaymentsClient({ baseUrl: server.url, apiKey: server.sandboxKey });
  return { server, client, endpoint: `${server.url}/v1/acquirers/adyen/notifications` };
}
