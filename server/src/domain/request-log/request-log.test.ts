import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";

describe("retention", () => {
  it("deletes request-log records older than the retention period (30 days by default)", async () => {
    const ctx = testDomain({ start: new Date("2026-11-22T10:00:00Z") });
    const row = (id: string, at: string) => ({
      id,
      livemode: false,
      created_at: at,
      request_id: id,
      method: "GET",
      path: "/v1/merchants",
      status: 200,
      latency_ms: 1,
      key_prefix: "key_test_abcd",
    });
    await ctx.store.insert("request_log", row("req_old", "2026-10-23T09:59:59.000000Z")); // 30 days and a second
    await ctx.store.insert("request_log", row("req_new", "2026-10-23T10:00:01.000000Z"));
    expect(await ctx.domain.jobs.sweepRequestLog()).toBe(1);
    expect((await ctx.store.findAll("request_log", {})).map((r) => r.id)).toEqual(["req_new"]);
    await ctx.store.close();
  });
});
