import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PaymentsClient, unwrap } from "@payments/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { Receiver } from "../support/receiver.ts";
import { clientFor, createMerchant, createToken, useServer, withServer } from "./fixtures.ts";

// Sandboxes on demand (spec/resources/sandboxes.tsp) end to end: each sandbox is a store of its own, so
// what one makes (objects, keys, events, webhook endpoints, its clock's time) is invisible from every other
// one, from the default sandbox and from production; deleting one makes its keys answer 401 and erases its
// store. The two-sandbox test runs both sandboxes' work side by side, as two CI jobs sharing a server would.

const DAY = 86_400;

describe("sandboxes on demand", () => {
  const clock = new TestClock();
  const { server, client: admin } = useServer({ WEBHOOK_POLL_INTERVAL_MS: "50" }, { clock });
  const receiver = new Receiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  async function sandbox(name: string, manager: PaymentsClient = admin) {
    const created = await manager.POST("/v1/sandboxes", { body: { name } });
    expect(created.response.status).toBe(201);
    const made = unwrap(created);
    return { id: made.id, secret: made.key.secret, client: clientFor(server, made.key.secret), made };
  }

  it("creates a sandbox with its first `*` key, shown once; lists and gets it", async () => {
    const { made, client } = await sandbox("CI job 1");
    expect(made).toMatchObject({ object: "sandbox", name: "CI job 1", key: { scopes: ["*"], livemode: false } });
    expect(made.id).toMatch(/^sbx_[0-9A-Za-z]{24}$/);
    expect(made.key.secret).toMatch(/^key_test_[0-9A-Za-z]{32}$/);
    // The key works in its sandbox, which starts empty.
    const merchants = unwrap(await client.GET("/v1/merchants"));
    expect(merchants.data).toEqual([]);
    const got = unwrap(await admin.GET("/v1/sandboxes/{id}", { params: { path: { id: made.id } } }));
    expect(got).toEqual({
      id: made.id,
      object: "sandbox",
      name: "CI job 1",
      livemode: false,
      created_at: made.created_at,
    });
    const listed = unwrap(await admin.GET("/v1/sandboxes", { params: { query: { limit: 100 } } }));
    expect(listed.data.map((s) => s.id)).toContain(made.id);
    expect(JSON.stringify(listed)).not.toContain(made.key.secret);
  });

  it("is managed by `*` keys of the environment that made it, never by a sandbox's own key", async () => {
    const live = clientFor(server, await server.key(["*"], { live: true }));
    const { id, client, made } = await sandbox("made from production", live);
    expect(made.livemode).toBe(true);
    expect((await live.GET("/v1/sandboxes/{id}", { params: { path: { id } } })).response.status).toBe(200);
    // As for every object, the other environment's keys do not see it.
    expect((await admin.GET("/v1/sandboxes/{id}", { params: { path: { id } } })).response.status).toBe(404);
    const listed = unwrap(await admin.GET("/v1/sandboxes", { params: { query: { limit: 100 } } }));
    expect(listed.data.map((s) => s.id)).not.toContain(id);
    const refused = await client.POST("/v1/sandboxes", { body: { name: "nested" } });
    expect(refused.response.status).toBe(403);
    expect(refused.error?.detail).toContain(id);
    expect((await client.GET("/v1/sandboxes")).response.status).toBe(403);
    const narrow = clientFor(server, await server.key(["merchants"]));
    expect((await narrow.GET("/v1/sandboxes")).response.status).toBe(403);
  });

  it("keeps two sandboxes used in parallel apart: objects, keys, events, webhooks and clocks", async () => {
    const [a, b] = await Promise.all([sandbox("QA: Ana"), sandbox("QA: Bo")]);
    receiver.answers.set("/a", () => [200, "ok"]);
    receiver.answers.set("/b", () => [200, "ok"]);

    // The same work in both at once: an endpoint, a merchant, a captured charge, a refund, a clock advance.
    const work = async (s: typeof a, path: string) => {
      unwrap(
        await s.client.POST("/v1/webhook_endpoints", {
          body: { url: `${receiver.url}${path}`, enabled_events: ["payment.captured", "payment.refunded"] },
        }),
      );
      const merchant = await createMerchant(s.client, `merchant of ${path}`);
      const token = await createToken(s.client);
      const charge = unwrap(
        await s.client.POST("/v1/charges", {
          body: {
            merchant_id: merchant.id,
            amount: 4200,
            currency: "USD",
            payment_method: { type: "card", token: token.id },
          },
        }),
      );
      const refund = unwrap(
        await s.client.POST("/v1/charges/{id}/refunds", { params: { path: { id: charge.id } }, body: { amount: 200 } }),
      );
      const key = unwrap(await s.client.POST("/v1/service_keys", { body: { name: "extra", scopes: ["charges"] } }));
      return { merchant, token, charge, refund, key };
    };
    const [madeA, madeB] = await Promise.all([work(a, "/a"), work(b, "/b")]);
    const advancedA = unwrap(await a.client.POST("/v1/sandbox/clock/advance", { body: { seconds: DAY } }));
    const advancedB = unwrap(await b.client.POST("/v1/sandbox/clock/advance", { body: { seconds: 3 * DAY } }));

    // Each sandbox's clock moved by its own advances only (and neither advance was refused).
    expect(advancedA.clock.offset_seconds).toBe(DAY);
    expect(advancedB.clock.offset_seconds).toBe(3 * DAY);
    const defaultClock = unwrap(await admin.GET("/v1/sandbox/clock"));
    expect(defaultClock.offset_seconds).toBe(0);

    // Every id of one answers 404 from the other and from the default sandbox.
    const ids = (m: typeof madeA) => ({
      charge: m.charge.id,
      merchant: m.merchant.id,
      token: m.token.id,
      key: m.key.id,
    });
    for (const [owner, other] of [
      [madeA, b.client],
      [madeB, a.client],
      [madeA, admin],
      [madeB, admin],
    ] as const) {
      const id = ids(owner);
      expect((await other.GET("/v1/charges/{id}", { params: { path: { id: id.charge } } })).response.status).toBe(404);
      expect((await other.GET("/v1/merchants/{id}", { params: { path: { id: id.merchant } } })).response.status).toBe(
        404,
      );
      expect((await other.GET("/v1/tokens/{id}", { params: { path: { id: id.token } } })).response.status).toBe(404);
      expect((await other.GET("/v1/service_keys/{id}", { params: { path: { id: id.key } } })).response.status).toBe(
        404,
      );
    }
    // Lists show only their own sandbox's objects and events.
    const chargesOf = async (c: PaymentsClient) =>
      unwrap(await c.GET("/v1/charges", { params: { query: { limit: 100 } } })).data.map((x) => x.id);
    expect(await chargesOf(a.client)).toEqual([madeA.charge.id]);
    expect(await chargesOf(b.client)).toEqual([madeB.charge.id]);
    const eventsOf = async (c: PaymentsClient) =>
      unwrap(await c.GET("/v1/events", { params: { query: { limit: 100 } } })).data;
    const eventsA = JSON.stringify(await eventsOf(a.client));
    const eventsB = JSON.stringify(await eventsOf(b.client));
    expect(eventsA).toContain(madeA.charge.id);
    expect(eventsA).not.toContain(madeB.charge.id);
    expect(eventsB).not.toContain(madeA.charge.id);
    // A key of one sandbox is unknown in the other's (and the default sandbox's) requests' eyes: its
    // requests stay in its own sandbox.
    const extraA = clientFor(server, madeA.key.secret);
    expect(await chargesOf(extraA)).toEqual([madeA.charge.id]);

    // Each receiver path got its own sandbox's deliveries only.
    const gotA = await receiver.waitFor("/a", 2);
    const gotB = await receiver.waitFor("/b", 2);
    expect(gotA.map((d) => d.body).join()).toContain(madeA.charge.id);
    expect(gotA.map((d) => d.body).join()).not.toContain(madeB.charge.id);
    expect(gotB.map((d) => d.body).join()).toContain(madeB.charge.id);
    expect(gotB.map((d) => d.body).join()).not.toContain(madeA.charge.id);
  });

  it("keeps the default sandbox's objects out of every sandbox", async () => {
    const merchant = await createMerchant(admin, "default's own");
    const { client } = await sandbox("outsider");
    expect((await client.GET("/v1/merchants/{id}", { params: { path: { id: merchant.id } } })).response.status).toBe(
      404,
    );
    const listed = unwrap(await client.GET("/v1/merchants", { params: { query: { limit: 100 } } }));
    expect(listed.data).toEqual([]);
  });

  it("deletes a sandbox: its keys answer 401, its id 404, its store is closed", async () => {
    const { id, client, secret } = await sandbox("short-lived");
    await createMerchant(client, "gone soon");
    expect(server.running.sandboxes.openIds()).toContain(id);
    const deleted = await admin.DELETE("/v1/sandboxes/{id}", { params: { path: { id } } });
    expect(deleted.response.status).toBe(200);
    expect(deleted.data).toEqual({ id, object: "sandbox", deleted: true });
    expect((await clientFor(server, secret).GET("/v1/merchants")).response.status).toBe(401);
    expect((await admin.GET("/v1/sandboxes/{id}", { params: { path: { id } } })).response.status).toBe(404);
    expect((await admin.DELETE("/v1/sandboxes/{id}", { params: { path: { id } } })).response.status).toBe(404);
    expect(server.running.sandboxes.openIds()).not.toContain(id);
    // The sandbox's vault keys went with its record.
    expect(await server.running.store.get("sandboxes", id)).toBeNull();
  });
});

describe("the number of sandboxes", () => {
  it("is bounded by SANDBOX_LIMIT: one more answers 409 sandbox_limit_reached, until one is deleted", async () => {
    await withServer({ SANDBOX_LIMIT: "2" }, async ({ client }) => {
      const first = unwrap(await client.POST("/v1/sandboxes", { body: { name: "one" } }));
      unwrap(await client.POST("/v1/sandboxes", { body: { name: "two" } }));
      const third = await client.POST("/v1/sandboxes", { body: { name: "three" } });
      expect(third.response.status).toBe(409);
      expect(third.error).toMatchObject({ code: "sandbox_limit_reached", status: 409 });
      expect(third.error?.detail).toContain("SANDBOX_LIMIT");
      unwrap(await client.DELETE("/v1/sandboxes/{id}", { params: { path: { id: first.id } } }));
      expect((await client.POST("/v1/sandboxes", { body: { name: "three" } })).response.status).toBe(201);
    });
  });
});

describe("a sandbox's store on disk", () => {
  it("is a file of its own under DATA_DIR/sandboxes, erased when the sandbox is deleted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandboxes-"));
    try {
      await withServer({ DATA_DIR: dir }, async ({ client, server }) => {
        const made = unwrap(await client.POST("/v1/sandboxes", { body: { name: "on disk" } }));
        const inside = clientFor(server, made.key.secret);
        const token = await createToken(inside);
        const file = join(dir, "sandboxes", `${made.id}.sqlite`);
        expect(existsSync(file)).toBe(true);
        // The card is the sandbox's: the account's store holds none of it.
        expect(await server.running.store.get("tokens", token.id)).toBeNull();
        unwrap(await client.DELETE("/v1/sandboxes/{id}", { params: { path: { id: made.id } } }));
        expect(existsSync(file)).toBe(false);
        expect(existsSync(`${file}-wal`)).toBe(false);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
