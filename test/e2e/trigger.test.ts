import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { type EventType, unwrap } from "@payments/client";
import { parseOverride, TRIGGER_TYPES, trigger } from "@payments/client/trigger";
import document from "@payments/contract/openapi.3.1.json" with { type: "json" };
import { describe, expect, it } from "vitest";
import { childEnv, ROOT } from "../support/process.ts";
import { useServer } from "./fixtures.ts";

// `payments trigger` (clients/typescript/src/trigger.ts) against a real server: every event type the
// contract declares (read from the generated document, not from the trigger table) is triggered in the
// sandbox through the public API, and the event is then listed by GET /v1/events?type=… about an object
// the trigger made.

describe("payments trigger", { timeout: 60_000 }, () => {
  const { server, client } = useServer();

  it.each(Object.keys(document.webhooks).sort())("%s: makes the objects, and the event is listed", async (type) => {
    const result = await trigger({ baseUrl: server.url, apiKey: server.sandboxKey, type });
    expect(result.created.length).toBeGreaterThan(0);
    expect(result.events?.map((e) => e.type)).toContain(type);
    // The event, listed by type, is one the trigger reported.
    const listed = unwrap(
      await client.GET("/v1/events", { params: { query: { type: type as EventType, limit: 100 } } }),
    ).data;
    const reported = result.events?.find((e) => e.type === type)?.id;
    expect(listed.map((e) => e.id)).toContain(reported);
  });

  it("covers exactly the types of the generated document", () => {
    expect(TRIGGER_TYPES).toEqual(Object.keys(document.webhooks).sort());
  });

  it("applies --set overrides to the main object and to a named one", async () => {
    const result = await trigger({
      baseUrl: server.url,
      apiKey: server.sandboxKey,
      type: "payment.captured",
      overrides: ["amount=4200", "currency=EUR", "metadata.order=A-17", 'merchant:name="Override shop"'].map(
        parseOverride,
      ),
    });
    const chargeId = result.created.find((c) => c.object === "charge")?.id ?? "";
    const charge = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: chargeId } } }));
    expect(charge).toMatchObject({ amount: 4200, currency: "EUR", status: "captured", metadata: { order: "A-17" } });
    const merchant = unwrap(await client.GET("/v1/merchants/{id}", { params: { path: { id: charge.merchant_id } } }));
    expect(merchant.name).toBe("Override shop");
  });

  it("uses a merchant the caller names instead of making one", async () => {
    const mine = unwrap(await client.POST("/v1/merchants", { body: { name: "Mine" } }));
    const result = await trigger({
      baseUrl: server.url,
      apiKey: server.sandboxKey,
      type: "cashout.paid",
      overrides: [parseOverride(`merchant_id=${mine.id}`)],
    }).catch((err: Error) => err);
    // The named merchant has no funds and the trigger does not fund a merchant it did not make.
    expect(String(result)).toMatch(/insufficient_balance/);
  });

  describe("the CLI", () => {
    const run = promisify(execFile);
    const cli = (args: string[], env: Record<string, string> = {}) =>
      run(process.execPath, ["--import", "tsx", resolve(ROOT, "clients/typescript/src/cli.ts"), "trigger", ...args], {
        cwd: ROOT,
        env: childEnv({ PAYMENTS_KEY: server.sandboxKey, PAYMENTS_URL: server.url, ...env }),
      }).then(
        (r) => ({ code: 0, ...r }),
        (err: { code: number; stdout: string; stderr: string }) => err,
      );

    it("prints what it made and the events, then exits 0", async () => {
      const { code, stdout, stderr } = await cli([
        "payment.refunded",
        "--set",
        "charge:amount=3000",
        "--set",
        "amount=1000",
      ]);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain(`Triggering payment.refunded at ${server.url}:`);
      expect(stdout).toMatch(/^ {2}charge\s+tx_\w{24}\s+captured, 3000 USD$/m);
      expect(stdout).toMatch(/^ {2}refund\s+re_\w{24}\s+1000 USD of tx_\w{24}$/m);
      expect(stdout).toMatch(/^Events:\n(.*\n)*? {2}payment\.refunded\s+evt_\w{24}$/m);
    });

    it("exits 1 with the server's problem when an override breaks a request", async () => {
      const { code, stderr } = await cli(["merchant.created", "--set", "name=", "--set", "colour=red"]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/^The server refused a request of the trigger: 400 invalid_request: /);
    });

    it("exits 2 for an unknown type or a production key, before any request", async () => {
      const unknown = await cli(["payment.teleported"]);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('"payment.teleported" is not an event type of this API');
      const live = await cli(["merchant.created"], { PAYMENTS_KEY: "key_live_x" });
      expect(live.code).toBe(2);
      expect(live.stderr).toContain("sandbox only");
    });
  });
});
