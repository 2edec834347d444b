import { describe, expect, it } from "vitest";
import { createMerchant, useServer } from "./fixtures.ts";

// The contract's rule for metadata keys (spec/common/ids.tsp, Metadata): no dot, no NUL character, no
// leading `$`, so that every key can be stored on both stores. Such a key is a 400 naming `metadata`,
// on create and update alike; any other key up to 40 characters is kept as sent.

describe("metadata keys", () => {
  const { client } = useServer();

  const refused = ["order\u0000id", "$where", "order.id", "."];

  it("refuses a key with a NUL character, a dot or a leading $ when a merchant is created or updated", async () => {
    const merchant = await createMerchant(client);
    for (const key of refused) {
      const created = await client.POST("/v1/merchants", { body: { name: "x", metadata: { [key]: "v" } } });
      expect(created.response.status, key).toBe(400);
      expect(created.error, key).toMatchObject({ code: "invalid_request", param: "metadata" });
      const updated = await client.PATCH("/v1/merchants/{id}", {
        params: { path: { id: merchant.id } },
        body: { metadata: { [key]: "v" } },
      });
      expect(updated.response.status, key).toBe(400);
      expect(updated.error, key).toMatchObject({ code: "invalid_request", param: "metadata" });
    }
    const unchanged = await client.GET("/v1/merchants/{id}", { params: { path: { id: merchant.id } } });
    expect(unchanged.data?.metadata).toEqual(merchant.metadata);
  });

  it("keeps every other key as sent, a $ after the first character included", async () => {
    const metadata = { "crm-id": "1", price$: "2", "Ünïcode key": "3", "a/b:c": "4" };
    const created = await client.POST("/v1/merchants", { body: { name: "x", metadata } });
    expect(created.response.status).toBe(201);
    expect(created.data?.metadata).toEqual(metadata);
  });
});
