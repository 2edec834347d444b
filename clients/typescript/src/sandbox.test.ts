import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createPaymentsClient, unwrap } from "./index.ts";
import { startSandbox } from "./sandbox.ts";

// The embeddable sandbox from the repository's own sources (server/src/sandbox-main.ts through tsx): two
// started at once are separate servers with separate data, and a stopped one no longer answers. The
// packed client starts one from a project outside the repository in test/package/client.test.ts.

const repository = resolve(import.meta.dirname, "../../..");

describe("startSandbox", { timeout: 180_000 }, () => {
  it("starts fresh, separate sandboxes with a `*` key each, and stops them", async () => {
    const [a, b] = await Promise.all([startSandbox({ repository }), startSandbox({ repository })]);
    try {
      expect(a.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(a.url).not.toBe(b.url);
      expect(a.key).toMatch(/^key_test_/);
      const clientA = createPaymentsClient({ baseUrl: a.url, apiKey: a.key, maxRetries: 0 });
      const clientB = createPaymentsClient({ baseUrl: b.url, apiKey: b.key, maxRetries: 0 });
      const merchant = unwrap(await clientA.POST("/v1/merchants", { body: { name: "Only in A" } }));
      expect(unwrap(await clientA.GET("/v1/merchants")).data.map((m) => m.id)).toEqual([merchant.id]);
      expect(unwrap(await clientB.GET("/v1/merchants")).data).toEqual([]);
      // Each key belongs to its own sandbox only.
      const crossed = await createPaymentsClient({ baseUrl: b.url, apiKey: a.key, maxRetries: 0 }).GET("/v1/merchants");
      expect(crossed.response.status).toBe(401);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    await expect(fetch(`${a.url}/healthz`)).rejects.toThrow(/fetch failed/);
  });

  it("says what is missing when it cannot start", async () => {
    const saved = process.env.PAYMENTS_REPOSITORY;
    delete process.env.PAYMENTS_REPOSITORY;
    try {
      await expect(startSandbox()).rejects.toThrow(/PAYMENTS_REPOSITORY/);
    } finally {
      if (saved !== undefined) process.env.PAYMENTS_REPOSITORY = saved;
    }
    await expect(startSandbox({ repository: "/nonexistent" })).rejects.toThrow(
      /not a clone of the payments repository/,
    );
    await expect(startSandbox({ repository: "/nonexistent", built: true })).rejects.toThrow(/run `npm run build`/);
  });
});
