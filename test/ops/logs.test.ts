import { describe, expect, it } from "vitest";
import { linesOf, spawnServer } from "../support/process.ts";

// Logs: human-readable lines in development (pino-pretty), one JSON object a line elsewhere; card
// numbers masked in both.

const PAN = "4242424242424242";

describe("log format", { timeout: 60_000 }, () => {
  it("is human-readable with LOG_FORMAT=pretty (the development default), and still masks card numbers", async () => {
    const server = spawnServer({ PORT: "0", DATA_DIR: ":memory:", NODE_ENV: "development" });
    try {
      await expect.poll(() => server.stdout(), { timeout: 30_000 }).toMatch(/INFO.*payments API listening/);
      const url = /url: "(http:\/\/[^"]+)"/.exec(server.stdout())?.[1] ?? /"url":"([^"]+)"/.exec(server.stdout())?.[1];
      expect(url).toBeDefined();
      await (await fetch(`${url}/v1/tokens/${PAN}`)).body?.cancel();
      await expect.poll(() => server.stdout(), { timeout: 10_000 }).toMatch(/\/v1\/tokens\/4242\*+4242/);
    } finally {
      await server.stop();
    }
    expect(server.stdout()).not.toContain(PAN);
    const logLines = linesOf(server.stdout()).filter((l) => /^\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+:/.test(l));
    expect(logLines.length).toBeGreaterThan(0);
    expect(linesOf(server.stdout()).some((l) => l.startsWith("{"))).toBe(false);
  });

  it("is one JSON object a line in production and tests", async () => {
    const server = spawnServer({ PORT: "0", DATA_DIR: ":memory:", NODE_ENV: "test" });
    try {
      await server.listening;
    } finally {
      await server.stop();
    }
    const logLines = linesOf(server.stdout()).filter((l) => l.startsWith("{"));
    expect(logLines.length).toBeGreaterThanOrEqual(2); // listening, shutting down
    for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow();
  });
});
