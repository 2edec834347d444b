import { describe, expect, it } from "vitest";
import { createMerchant, useServer, withServer } from "./fixtures.ts";

describe("merchants", () => {
  const { client } = useServer();

  it("creates a merchant: 201, mch_ id, active by default (fixed facts of createMerchant)", async () => {
    const { data, response } = await client.POST("/v1/merchants", {
      body: { name: "Acme Coffee", metadata: { crm_id: "A-1" } },
    });
    expect(response.status).toBe(201);
    expect(data?.id).toMatch(/^mch_[0-9A-Za-z]{24}$/);
    expect(data).toMatchObject({ object: "merchant", name: "Acme Coffee", status: "active", livemode: false });
    expect(data?.metadata).toEqual({ crm_id: "A-1" });
    expect(response.headers.get("request-id")).toMatch(/^req_/);
  });

  it("accepts an initial status, but not closed", async () => {
    const { data } = await client.POST("/v1/merchants", { body: { name: "Paused", status: "suspended" } });
    expect(data?.status).toBe("suspended");
    // The contract's types refuse it too (MerchantCreate.status is `active` or `suspended`): sent as a caller
    // without them would.
    const closed = { name: "Gone", status: "closed" } as unknown as { name: string };
    const { error, response } = await client.POST("/v1/merchants", { body: closed });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ code: "invalid_request", param: "status" });
  });

  it("names the faulty field for invalid bodies", async () => {
    const missing = await client.POST("/v1/merchants", { body: {} as never });
    expect(missing.response.status).toBe(400);
    expect(missing.error).toMatchObject({ code: "invalid_request", param: "name" });

    const unknown = await client.POST("/v1/merchants", { body: { name: "x", colour: "red" } as never });
    expect(unknown.response.status).toBe(400);
    expect(JSON.stringify(unknown.error?.errors)).toContain("colour");

    const badStatus = await client.POST("/v1/merchants", { body: { name: "x", status: "open" } as never });
    expect(badStatus.error).toMatchObject({ param: "status" });

    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
    const meta = await client.POST("/v1/merchants", { body: { name: "x", metadata: tooMany } });
    expect(meta.response.status).toBe(400);
    expect(meta.error?.param).toBe("metadata");
  });

  it("gets a merchant, and 404s an unknown id", async () => {
    const m = await createMerchant(client);
    const got = await client.GET("/v1/merchants/{id}", { params: { path: { id: m.id } } });
    expect(got.data).toEqual(m);
    const missing = await client.GET("/v1/merchants/{id}", {
      params: { path: { id: "mch_000000000000000000000000" } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ code: "not_found", status: 404 });
    const malformed = await client.GET("/v1/merchants/{id}", {
      params: { path: { id: "tok_000000000000000000000000" } },
    });
    expect(malformed.response.status).toBe(400);
    expect(malformed.error?.param).toBe("id");
  });

  it("lists newest first with cursors both ways and a status filter", async () => {
    // A server of its own, so the list holds only the merchants made here.
    await withServer({}, async ({ client: c }) => {
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await createMerchant(c, `m${i}`));
      await c.PATCH("/v1/merchants/{id}", {
        params: { path: { id: made[1]?.id ?? "" } },
        body: { status: "suspended" },
      });
      const newestFirst = made.map((m) => m.id).reverse();

      const first = await c.GET("/v1/merchants", { params: { query: { limit: 2 } } });
      expect(first.data?.data.map((m) => m.id)).toEqual(newestFirst.slice(0, 2));
      expect(first.data?.has_more).toBe(true);

      const next = await c.GET("/v1/merchants", { params: { query: { limit: 2, starting_after: newestFirst[1] } } });
      expect(next.data?.data.map((m) => m.id)).toEqual(newestFirst.slice(2, 4));
      expect(next.data?.has_more).toBe(true);

      const last = await c.GET("/v1/merchants", { params: { query: { limit: 2, starting_after: newestFirst[3] } } });
      expect(last.data?.data.map((m) => m.id)).toEqual(newestFirst.slice(4));
      expect(last.data?.has_more).toBe(false);

      const back = await c.GET("/v1/merchants", { params: { query: { limit: 2, ending_before: newestFirst[4] } } });
      expect(back.data?.data.map((m) => m.id)).toEqual(newestFirst.slice(2, 4));
      expect(back.data?.has_more).toBe(true);

      const suspended = await c.GET("/v1/merchants", { params: { query: { status: "suspended" } } });
      expect(suspended.data?.data.map((m) => m.id)).toEqual([made[1]?.id]);

      const badLimit = await c.GET("/v1/merchants", { params: { query: { limit: 101 } } });
      expect(badLimit.response.status).toBe(400);
      expect(badLimit.error?.param).toBe("limit");
      const unknownFilter = await c.GET("/v1/merchants", { params: { query: { colour: "red" } as never } });
      expect(unknownFilter.response.status).toBe(400);
    });
  });

  it("follows the status machine: active ⇄ suspended → closed, closed is final (409)", async () => {
    const m = await createMerchant(client);
    const path = { id: m.id };
    const to = (status: "active" | "suspended" | "closed") =>
      client.PATCH("/v1/merchants/{id}", { params: { path }, body: { status } });

    expect((await to("suspended")).data?.status).toBe("suspended");
    expect((await to("suspended")).data?.status).toBe("suspended"); // same status: a no-op, safe to retry
    expect((await to("active")).data?.status).toBe("active");
    const closed = await to("closed");
    expect(closed.data?.status).toBe("closed");
    expect(closed.data?.updated_at).not.toBe(m.updated_at);
    for (const status of ["active", "suspended"] as const) {
      const refused = await to(status);
      expect(refused.response.status).toBe(409);
      expect(refused.error).toMatchObject({ code: "invalid_state_transition", param: "status" });
    }
    const renamed = await client.PATCH("/v1/merchants/{id}", { params: { path }, body: { name: "Still closed" } });
    expect(renamed.data).toMatchObject({ name: "Still closed", status: "closed" });
  });
});
