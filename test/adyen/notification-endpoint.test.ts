import { type PaymentsClient, unwrap } from "@payments/client";
import type { NotificationItem } from "@payments/server/adyen";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMerchant, createToken, freshCardNumber } from "../e2e/fixtures.ts";
import { signedItem, startNotifiedServer, testRequest } from "../support/adyen-notifications.ts";
import { deliverNotifications } from "../support/adyen-stand-in/stand-in.ts";
import type { TestServer } from "../support/server.ts";

// Adyen's notification endpoint (receiveAdyenNotifications) on a real server: notifications signed per
// Adyen's scheme (the signer the stand-in uses) and delivered as the stand-in delivers them (one POST per
// item, JSON). A tampered or unsigned item is refused (401) and stores nothing; 1,000 notifications, each
// delivered twice and the whole shuffled (so a chargeback's reversal often arrives before the chargeback),
// are each applied exactly once: the effects are counted in the store and the ledger verifies clean.

let server: TestServer;
let client: PaymentsClient;
let endpoint: string;

beforeAll(async () => {
  ({ server, client, endpoint } = await startNotifiedServer());
});

afterAll(async () => {
  await server?.close();
});

/** An item as Adyen's test environment sends it, signed with the server's key (or `key`). */
const signed = signedItem;
// From Adyen's test environment (`live: "false"`): the sandbox's objects.
const request = testRequest;

/** Runs `make` `count` times, a few at a time. */
async function many<T>(count: number, make: () => Promise<T>, batch = 10): Promise<T[]> {
  const made: T[] = [];
  while (made.length < count) {
    made.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - made.length) }, make))));
  }
  return made;
}

const stored = () => server.running.domain.acquirerNotifications;

describe("forged notifications", () => {
  it("refuses a tampered item and an unsigned one with 401, storing nothing", async () => {
    const merchant = await createMerchant(client);
    const charge = unwrap(
      await client.POST("/v1/charges", {
        body: { merchant_id: merchant.id, amount: 5000, currency: "BRL", payment_method: { type: "pix" } },
      }),
    );
    const good = signed({ eventCode: "AUTHORISATION", merchantReference: charge.id });
    const tampered = { ...good, amount: { value: 1, currency: "BRL" } } as NotificationItem;
    const { hmacSignature: _, ...rest } = good.additionalData as Record<string, string>;
    const unsigned = { ...good, additionalData: rest } as NotificationItem;
    const byAnotherKey = signed({ eventCode: "AUTHORISATION", merchantReference: charge.id }, "00112233445566778899");
    for (const item of [tampered, unsigned, byAnotherKey]) {
      const [answer] = await deliverNotifications(endpoint, [request(item)]);
      expect(answer?.status).toBe(401);
      expect(JSON.parse(answer?.text ?? "{}")).toMatchObject({ code: "unauthorized", status: 401 });
    }
    expect(await stored().inState(false, "received")).toHaveLength(0);
    expect(await stored().inState(false, "applied")).toHaveLength(0);
    expect(unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: charge.id } } })).status).toBe(
      "pending",
    );

    // The genuine item is accepted, with the text Adyen requires.
    const [accepted] = await deliverNotifications(endpoint, [request(good)]);
    expect(accepted).toEqual({ status: 200, text: "[accepted]" });
    expect(unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: charge.id } } })).status).toBe(
      "captured",
    );
  });

  it("answers 400 naming the field for a body that is not Adyen's shape", async () => {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ live: "false" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "invalid_request", param: "notificationItems" });
  });
});

describe("1,000 notifications, each delivered twice, shuffled", () => {
  it("applies each exactly once: 700 local payments captured, 150 chargebacks opened, all 150 won", async () => {
    const merchant = await createMerchant(client);
    const pix = await many(700, async () =>
      unwrap(
        await client.POST("/v1/charges", {
          body: { merchant_id: merchant.id, amount: 5000, currency: "BRL", payment_method: { type: "pix" } },
        }),
      ),
    );
    const cards = await many(150, async () => {
      const token = await createToken(client, freshCardNumber());
      return unwrap(
        await client.POST("/v1/charges", {
          body: {
            merchant_id: merchant.id,
            amount: 8000,
            currency: "USD",
            payment_method: { type: "card", token: token.id },
          },
        }),
      );
    });
    const items = [
      ...pix.map((c) => signed({ eventCode: "AUTHORISATION", merchantReference: c.id })),
      ...cards.flatMap((c, i) => {
        const dispute = {
          pspReference: `DSP${String(i).padStart(13, "0")}`,
          originalReference: `PAY${String(i).padStart(13, "0")}`,
          merchantReference: c.id,
          amount: { value: 8000, currency: "USD" },
          additionalData: { chargebackReasonCode: "10.4" } as NotificationItem["additionalData"],
        };
        return [
          signed({ eventCode: "CHARGEBACK", ...dispute }),
          signed({ eventCode: "CHARGEBACK_REVERSED", ...dispute }),
        ];
      }),
    ];
    expect(items).toHaveLength(1000);

    const answers = await deliverNotifications(
      endpoint,
      items.map((i) => request(i)),
      { times: 2, seed: 32 },
    );
    expect(answers).toHaveLength(2000);
    expect(answers.filter((a) => a.status !== 200 || a.text !== "[accepted]")).toEqual([]);

    // Each item stored once and applied; none left waiting (every reversal found its chargeback).
    expect(await stored().inState(false, "applied")).toHaveLength(1000 + 1);
    expect(await stored().inState(false, "waiting")).toHaveLength(0);
    // Counted effects: every pix charge captured once, every chargeback withdrawn once and reinstated once.
    const { store } = server.running;
    const ids = new Set(pix.map((c) => c.id));
    const captures = (await store.findAll("postings", { type: "capture" }, 100_000)).filter((p) =>
      ids.has(p.source_id),
    );
    expect(captures).toHaveLength(700);
    const events = await store.findAll("events", { livemode: false }, 100_000);
    const count = (type: string) => events.filter((e) => e.type === type).length;
    expect(count("dispute.funds_withdrawn")).toBe(150);
    expect(count("dispute.funds_reinstated")).toBe(150);
    for (const c of cards.slice(0, 5)) {
      const charge = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: c.id } } }));
      expect(charge.status).toBe("captured");
    }
    const disputes = await store.findAll("disputes", { livemode: false }, 100_000);
    expect(disputes.filter((d) => d.status === "won")).toHaveLength(150);
    const balance = unwrap(await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } }));
    expect(balance.balances.find((b) => b.currency === "BRL")?.available).toBe(700 * 5000);
    expect((await server.running.domain.ledger.verify()).differences).toEqual([]);
  }, 600_000);
});
