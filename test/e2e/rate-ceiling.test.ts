import { describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { createServiceKey, json, useServer } from "./fixtures.ts";

// Keys made by another key share their environment's ceiling (RATE_LIMIT_ENVIRONMENT_KEYS, docs/api.md
// "Rate limits"): a `*` key that mints keys gets no more than that many keys' worth of requests a second
// from all of them together, where each minted key once brought a quota of its own (issue 35). The
// server's clock is the test's and never moves, so every request falls in one window.

describe("the environment's ceiling", () => {
  const clock = new TestClock();
  const { server, client } = useServer(
    { RATE_LIMIT_TEST_PER_SECOND: "5", RATE_LIMIT_LIVE_PER_SECOND: "5", RATE_LIMIT_ENVIRONMENT_KEYS: "2" },
    { clock },
  );

  it("holds minted keys together to RATE_LIMIT_ENVIRONMENT_KEYS keys' worth, each still within its own limit", async () => {
    // Minting takes requests of the minting key's own: three keys, three requests of the sandbox's ten.
    const minted = [];
    for (let i = 0; i < 3; i++) minted.push(await createServiceKey(client, ["merchants"], `minted ${i}`));
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (const key of minted) {
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${server.url}/v1/merchants?limit=1`, {
          headers: { authorization: `Bearer ${key.secret}` },
        });
        statuses.push(res.status);
        if (res.status === 429) refused ??= res;
        else await res.arrayBuffer();
      }
    }
    // 10 a second in all (2 keys' worth), 3 of them spent on minting: 7 of the 15 pass.
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 429)).toHaveLength(8);
    expect(refused?.headers.get("retry-after")).toBe("1");
    expect(await json(refused as Response)).toMatchObject({
      code: "rate_limited",
      detail: expect.stringContaining("all the keys of the sandbox together: at most 10 per second"),
    });
    // Production has a ceiling of its own.
    const live = await server.key(["merchants"], { live: true });
    const res = await fetch(`${server.url}/v1/merchants?limit=1`, { headers: { authorization: `Bearer ${live}` } });
    expect(res.status).toBe(200);
  });
});
