import { IN_MEMORY, loadConfig, startServer } from "@payments/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientFor, createMerchant, createToken } from "./fixtures.ts";

// PRODUCTION_ACQUIRER unset (docs/operating.md "Configuration"; AcquirerNotConfigured in the contract):
// production money operations answer 503 `acquirer_not_configured` naming the setting, and store
// nothing; the sandbox keeps its simulator. Through the typed client, with response validation on.

describe("production without an acquirer", () => {
  let running: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    running = await startServer({
      config: loadConfig({
        NODE_ENV: "test",
        PORT: "0",
        DATA_DIR: IN_MEMORY,
        LOG_LEVEL: "silent",
        VALIDATE_RESPONSES: "true",
      }),
    });
  });
  afterAll(() => running.close());

  it("refuses a production charge with the documented problem and stores nothing; the sandbox charges", async () => {
    const server = { url: running.url } as Parameters<typeof clientFor>[0];
    const { secret } = await running.domain.serviceKeys.issue(true, { name: "live", scopes: ["*"] });
    const live = clientFor(server, secret);
    const merchant = await createMerchant(live);
    const token = await createToken(live);
    const refused = await live.POST("/v1/charges", {
      body: {
        merchant_id: merchant.id,
        amount: 1000,
        currency: "USD",
        payment_method: { type: "card", token: token.id },
      },
    });
    expect(refused.response.status).toBe(503);
    expect(refused.error).toMatchObject({ status: 503, code: "acquirer_not_configured" });
    expect(refused.error?.detail).toContain("PRODUCTION_ACQUIRER");
    const listed = await live.GET("/v1/charges", { params: { query: {} } });
    expect(listed.data?.data).toEqual([]);

    const sandbox = clientFor(server, running.bootstrapSecret as string);
    const m = await createMerchant(sandbox);
    const t = await createToken(sandbox);
    const charged = await sandbox.POST("/v1/charges", {
      body: { merchant_id: m.id, amount: 1000, currency: "USD", payment_method: { type: "card", token: t.id } },
    });
    expect(charged.response.status).toBe(201);
  });
});
