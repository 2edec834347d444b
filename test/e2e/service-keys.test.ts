import { describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { clientFor, createServiceKey, useServer } from "./fixtures.ts";

describe("service keys", () => {
  const clock = new TestClock();
  const { server, client: admin } = useServer({}, { clock });

  const status = async (key: string) => (await clientFor(server, key).GET("/v1/merchants")).response.status;

  it("creates a key (201, secret shown once) that works within its scopes", async () => {
    const created = await admin.POST("/v1/service_keys", { body: { name: "backend", scopes: ["merchants"] } });
    expect(created.response.status).toBe(201);
    const key = created.data;
    expect(key?.secret).toMatch(/^key_test_[0-9A-Za-z]{32}$/);
    expect(key?.prefix).toBe(key?.secret.slice(0, 13));
    expect(key).toMatchObject({ object: "service_key", name: "backend", scopes: ["merchants"], livemode: false });
    expect(await status(key?.secret ?? "")).toBe(200);

    const listed = await admin.GET("/v1/service_keys", { params: { query: { limit: 100 } } });
    const entry = listed.data?.data.find((k) => k.id === key?.id);
    expect(entry).toBeDefined();
    expect(entry).not.toHaveProperty("secret");
    expect(JSON.stringify(listed.data)).not.toContain(key?.secret);
    const stored = await server.running.store.get("service_keys", key?.id ?? "");
    expect(JSON.stringify(stored)).not.toContain(key?.secret); // only the SHA-256 digest is kept
  });

  it("records last use", async () => {
    const { id, secret } = await createServiceKey(admin, ["merchants"]);
    const lastUsed = async () =>
      (await admin.GET("/v1/service_keys/{id}", { params: { path: { id } } })).data?.last_used_at;
    expect(await lastUsed()).toBeNull();
    await status(secret);
    // Written beside the request, not before its answer.
    const used = await eventually("last_used_at to be recorded", lastUsed, (at) => at !== null);
    expect(Date.parse(used ?? "")).toBe(clock.ms);
  });

  it("rotates with a grace period: old and new secrets both work until it ends", async () => {
    const created = await admin.POST("/v1/service_keys", { body: { name: "rotating", scopes: ["merchants"] } });
    const old = created.data?.secret ?? "";
    const id = created.data?.id ?? "";
    const rotated = await admin.POST("/v1/service_keys/{id}/rotate", {
      params: { path: { id } },
      body: { grace_period_seconds: 3600 },
    });
    expect(rotated.response.status).toBe(200);
    const fresh = rotated.data?.secret ?? "";
    expect(fresh).not.toBe(old);
    expect(await status(old)).toBe(200);
    expect(await status(fresh)).toBe(200);

    const immediate = await admin.POST("/v1/service_keys/{id}/rotate", {
      params: { path: { id } },
      body: { grace_period_seconds: 0 },
    });
    expect(await status(fresh)).toBe(401);
    expect(await status(old)).toBe(401);
    expect(await status(immediate.data?.secret ?? "")).toBe(200);
  });

  it("revokes at once, grace secrets included; revoked keys cannot be rotated", async () => {
    const created = await admin.POST("/v1/service_keys", { body: { name: "doomed", scopes: ["merchants"] } });
    const id = created.data?.id ?? "";
    const rotated = await admin.POST("/v1/service_keys/{id}/rotate", { params: { path: { id } }, body: {} });
    const revoked = await admin.POST("/v1/service_keys/{id}/revoke", { params: { path: { id } } });
    expect(revoked.data?.revoked_at).not.toBeNull();
    expect(await status(created.data?.secret ?? "")).toBe(401);
    expect(await status(rotated.data?.secret ?? "")).toBe(401);
    const again = await admin.POST("/v1/service_keys/{id}/revoke", { params: { path: { id } } });
    expect(again.data?.revoked_at).toBe(revoked.data?.revoked_at);
    const rotate = await admin.POST("/v1/service_keys/{id}/rotate", { params: { path: { id } }, body: {} });
    expect(rotate.response.status).toBe(409);
    expect(rotate.error?.code).toBe("invalid_state_transition");
  });

  it("refuses expired keys and past expiry dates", async () => {
    const inAnHour = new Date(clock.ms + 3_600_000).toISOString();
    const created = await admin.POST("/v1/service_keys", {
      body: { name: "short-lived", scopes: ["merchants"], expires_at: inAnHour },
    });
    expect(await status(created.data?.secret ?? "")).toBe(200);
    clock.advance(3_599_999);
    expect(await status(created.data?.secret ?? "")).toBe(200);
    clock.advance(1);
    expect(await status(created.data?.secret ?? "")).toBe(401);
    const past = await admin.POST("/v1/service_keys", {
      body: { name: "past", scopes: ["merchants"], expires_at: "2020-01-01T00:00:00Z" },
    });
    expect(past.response.status).toBe(400);
    expect(past.error?.param).toBe("expires_at");
  });

  it("keeps environments apart: sandbox keys make sandbox keys, production ones production ones", async () => {
    const liveAdmin = clientFor(server, await server.key(["*"], { live: true }));
    const created = await liveAdmin.POST("/v1/service_keys", { body: { name: "live backend", scopes: ["merchants"] } });
    expect(created.data?.secret).toMatch(/^key_live_/);
    expect(created.data?.livemode).toBe(true);
    const fromSandbox = await admin.GET("/v1/service_keys/{id}", { params: { path: { id: created.data?.id ?? "" } } });
    expect(fromSandbox.response.status).toBe(404);
    const merchant = await clientFor(server, created.data?.secret ?? "").POST("/v1/merchants", {
      body: { name: "Live shop" },
    });
    expect(merchant.data?.livemode).toBe(true);
    const sandboxList = await admin.GET("/v1/merchants", { params: { query: { limit: 100 } } });
    expect(sandboxList.data?.data.some((m) => m.id === merchant.data?.id)).toBe(false);
  });
});
