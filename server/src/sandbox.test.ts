import { describe, expect, it } from "vitest";
import { startSandbox } from "./sandbox.ts";

// The embeddable sandbox in process (the command and the client's startSandbox are tested in
// clients/typescript/src/sandbox.test.ts): its key works, its settings can be changed but never point it
// at stored data, and stop() closes it.

describe("startSandbox", () => {
  it("serves the API on a loopback port with a `*` sandbox key, and stops", async () => {
    const sandbox = await startSandbox();
    try {
      expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${sandbox.url}/v1/service_keys`, {
        headers: { authorization: `Bearer ${sandbox.key}` },
      });
      expect(res.status).toBe(200);
      const { data } = (await res.json()) as { data: { scopes: string[]; livemode: boolean }[] };
      expect(data).toEqual([expect.objectContaining({ scopes: ["*"], livemode: false })]);
    } finally {
      await sandbox.stop();
    }
    await expect(fetch(`${sandbox.url}/healthz`)).rejects.toThrow();
    await sandbox.stop(); // a second stop is harmless
  });

  it("takes other settings, but never a store on disk or a MongoDB", async () => {
    await expect(startSandbox({ settings: { DATA_DIR: "./data" } })).rejects.toThrow(/in-memory store/);
    await expect(startSandbox({ settings: { MONGODB_URI: "mongodb://127.0.0.1:9" } })).rejects.toThrow(
      /in-memory store/,
    );
    const limited = await startSandbox({ settings: { RATE_LIMIT_TEST_PER_SECOND: "1" } });
    try {
      const call = () => fetch(`${limited.url}/v1/merchants`, { headers: { authorization: `Bearer ${limited.key}` } });
      // Five calls at once against one request a second: at most two fixed one-second windows, so a 429.
      const statuses = (await Promise.all([call(), call(), call(), call(), call()])).map((r) => r.status);
      expect(statuses).toContain(429);
    } finally {
      await limited.stop();
    }
  });
});
