import { connect } from "node:net";
import { unwrap } from "@payments/client";
import { beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { createServiceKey, json, requestLogThrough, useServer } from "./fixtures.ts";

// Abuse limits and protocol hygiene: rate limits per key and per address (429 with Retry-After and the
// IETF RateLimit headers), one 401 for every bad key, headers on every answer, bodies refused where the
// contract has none, strict query numbers and dates, both cursors at once, slow senders cut off, and a
// request log that anonymous callers cannot fill.

describe("rate limits", () => {
  // The per-second limits run on the real clock, whose windows the RateLimit headers are computed against.
  const { server } = useServer({ RATE_LIMIT_TEST_PER_SECOND: "5", RATE_LIMIT_LIVE_PER_SECOND: "8" });

  const burst = (n: number, headers: Record<string, string>) =>
    Promise.all(Array.from({ length: n }, () => fetch(`${server.url}/v1/merchants?limit=1`, { headers })));

  it("allows a sandbox key its requests per second, then answers 429 with Retry-After and RateLimit headers", async () => {
    // The limit counts in windows of one second on the wall clock (express-rate-limit reads Date.now, not the
    // injected clock). A burst inside one second meets at most one window's end, so at most two windows'
    // worth pass; on a machine so busy that the burst itself outlasts a second it can meet two ends, and the
    // bound says nothing. Such a burst is sent again with a fresh key (a precondition, not a timed assertion).
    let answers: Response[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const key = await server.key(["merchants"]);
      const sent = performance.now();
      answers = await burst(12, { authorization: `Bearer ${key}` });
      if (performance.now() - sent < 1000) break;
    }
    const ok = answers.filter((r) => r.status === 200);
    const limited = answers.filter((r) => r.status === 429);
    // One window may end mid-burst, so up to two windows' worth pass; the rest are refused.
    expect(ok.length).toBeGreaterThanOrEqual(5);
    expect(ok.length).toBeLessThanOrEqual(10);
    expect(limited.length).toBe(12 - ok.length);
    expect(ok[0]?.headers.get("ratelimit-policy")).toMatch(/^"5-in-1sec"; q=5; w=1/);
    expect(ok[0]?.headers.get("ratelimit")).toMatch(/^"5-in-1sec"; r=\d+; t=1/);
    const refused = limited[0] as Response;
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(await refused.json()).toMatchObject({ status: 429, code: "rate_limited" });
  });

  it("counts each key on its own, and production keys by the production limit", async () => {
    const live = await server.key(["merchants"], { live: true });
    const other = await server.key(["merchants"]);
    const liveAnswers = await burst(8, { authorization: `Bearer ${live}` });
    // Eight fit the production limit unless the burst straddles a window edge (then more, never fewer).
    expect(liveAnswers.filter((r) => r.status === 200).length).toBe(8);
    expect((await burst(1, { authorization: `Bearer ${other}` }))[0]?.status).toBe(200);
  });

  it("shares the counts through the store, so another instance on it sees them", async () => {
    const key = await server.key(["merchants"]);
    await burst(3, { authorization: `Bearer ${key}` });
    // The counts are written to the store in the background, a moment later.
    const shared = await eventually(
      "the counts to reach the store",
      () => server.running.store.findAll("rate_limits", {}),
      (counts) => counts.some((d) => d.id.startsWith("key:") && d.hits >= 3),
    );
    expect(shared.some((d) => d.id.startsWith("key:") && d.hits >= 3)).toBe(true);
  });
});

describe("the per-address limit on requests without a valid key", () => {
  const clock = TestClock.atNextMinute();
  const { server } = useServer({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: "4" }, { clock });

  it("counts requests without a valid key per address: bad-key guesses get 429 after the budget", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await fetch(`${server.url}/v1/merchants`, {
        headers: { authorization: `Bearer key_test_${String(i).padStart(32, "x")}` },
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401]);
    expect(statuses.slice(4)).toEqual([429, 429, 429]);
    // A valid key from the same address is counted per key, not refused with the guesses.
    const key = await server.key(["merchants"]);
    expect((await fetch(`${server.url}/v1/merchants`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(
      200,
    );
  });
});

describe("protocol hygiene", () => {
  const clock = new TestClock();
  const { server, client } = useServer({ REQUEST_TIMEOUT_SECONDS: "2", HEADERS_TIMEOUT_SECONDS: "1" }, { clock });
  let auth: Record<string, string>;
  beforeAll(() => {
    auth = { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json" };
  });

  it("gives one 401 detail for a missing, malformed, unknown, expired or revoked key", async () => {
    const expired = unwrap(
      await client.POST("/v1/service_keys", {
        body: { name: "soon", scopes: ["merchants"], expires_at: new Date(clock.ms + 1000).toISOString() },
      }),
    );
    const revoked = await createServiceKey(client, ["merchants"], "gone");
    unwrap(await client.POST("/v1/service_keys/{id}/revoke", { params: { path: { id: revoked.id } } }));
    clock.advance(1000);
    const headers: Record<string, string>[] = [
      {},
      { authorization: "Bearer nonsense" },
      { authorization: "Basic abc" },
      { authorization: `Bearer key_test_${"x".repeat(32)}` },
      { authorization: `Bearer ${expired.secret}` },
      { authorization: `Bearer ${revoked.secret}` },
    ];
    const details = new Set<string>();
    for (const h of headers) {
      const res = await fetch(`${server.url}/v1/merchants`, { headers: h });
      expect(res.status).toBe(401);
      const body = await json(res);
      expect(body.code).toBe("unauthorized");
      details.add(body.detail);
    }
    expect(details.size).toBe(1);
  });

  it("sends Cache-Control: no-store and X-Content-Type-Options: nosniff on every answer", async () => {
    for (const res of [
      await fetch(`${server.url}/v1/merchants`, { headers: auth }),
      await fetch(`${server.url}/v1/nothing-here`, { headers: auth }),
      await fetch(`${server.url}/v1/service_keys`, {
        method: "POST",
        headers: auth,
        body: '{"name":"k","scopes":["fraud"]}',
      }),
    ]) {
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  it("refuses a body on an operation that takes none, whatever its content type", async () => {
    const created = await json(
      await fetch(`${server.url}/v1/merchants`, { method: "POST", headers: auth, body: '{"name":"x"}' }),
    );
    const token = await json(
      await fetch(`${server.url}/v1/tokens`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ card: "4242424242424242", holder: "A", exp_month: 12, exp_year: 2031 }),
      }),
    );
    for (const [type, body] of [
      ["application/json", '{"anything":true}'],
      ["text/plain", "hello"],
    ] as const) {
      const res = await fetch(`${server.url}/v1/tokens/${token.id}/reveal`, {
        method: "POST",
        headers: { ...auth, "content-type": type },
        body,
      });
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ code: "invalid_request", param: "body" });
    }
    const empty = await fetch(`${server.url}/v1/tokens/${token.id}/reveal`, { method: "POST", headers: auth });
    expect(empty.status).toBe(200);
    expect(created.id).toMatch(/^mch_/);
  });

  it("answers a method a path does not have with 405 and Allow, and oversized headers with 431", async () => {
    const put = await fetch(`${server.url}/v1/merchants`, { method: "PUT", headers: auth });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")?.split(", ").sort()).toEqual(["GET", "POST"]);
    expect(await json(put)).toMatchObject({ code: "method_not_allowed" });
    const one = await fetch(`${server.url}/v1/merchants/mch_000000000000000000000000`, {
      method: "POST",
      headers: auth,
    });
    expect(one.headers.get("allow")?.split(", ").sort()).toEqual(["GET", "PATCH"]);
    const big = await fetch(`${server.url}/v1/merchants`, { headers: { ...auth, "x-padding": "a".repeat(20_000) } });
    expect(big.status).toBe(431);
  });

  it("takes query numbers only in decimal digits", async () => {
    for (const limit of ["0x10", "1e1", "5.0", "+5", " 5", "0o7"]) {
      const res = await fetch(`${server.url}/v1/merchants?limit=${encodeURIComponent(limit)}`, { headers: auth });
      expect(res.status, limit).toBe(400);
      expect((await json(res)).param).toBe("limit");
    }
    expect((await fetch(`${server.url}/v1/merchants?limit=16`, { headers: auth })).status).toBe(200);
  });

  it("refuses impossible dates", async () => {
    const res = await fetch(`${server.url}/v1/service_keys`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "x", scopes: ["fraud"], expires_at: "2031-02-30T10:00:00Z" }),
    });
    expect(res.status).toBe(400);
    expect((await json(res)).param).toBe("expires_at");
  });

  it("answers 400 naming both cursors when a list gets both", async () => {
    for (const path of ["/v1/merchants", "/v1/charges", "/v1/events", "/v1/service_keys"]) {
      const res = await fetch(`${server.url}${path}?starting_after=a&ending_before=b`, { headers: auth });
      expect(res.status, path).toBe(400);
      const body = await json(res);
      expect(body.code).toBe("invalid_request");
      expect(body.errors.map((e: { param: string }) => e.param)).toEqual(["starting_after", "ending_before"]);
    }
  });

  it("closes a connection whose body arrives too slowly", async () => {
    // A body that never ends, one byte at a time: only the server's request timeout can end the request.
    const { port } = new URL(server.url);
    const closed = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write(
          `POST /v1/merchants HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
        );
        const drip = setInterval(() => socket.write(" "), 100);
        let answer = "";
        socket.on("data", (d) => {
          answer += String(d);
        });
        socket.on("close", () => {
          clearInterval(drip);
          resolve(answer);
        });
      });
    });
    // REQUEST_TIMEOUT_SECONDS=2: a 408, and the connection closed.
    expect(closed.startsWith("HTTP/1.1 408")).toBe(true);
  });
});

describe("request log", () => {
  const { server, client } = useServer();

  it("stores only requests made with a valid key, with masked, decoded and capped paths", async () => {
    const auth = { authorization: `Bearer ${server.sandboxKey}` };
    for (let i = 0; i < 20; i++) await fetch(`${server.url}/v1/nothing-${i}?x=${"a".repeat(10_000)}`);
    await fetch(`${server.url}/v1/merchants`, { headers: { authorization: "Bearer wrong" } });
    const kept = await fetch(`${server.url}/v1/merchants?status=4783+6493+0881+5991&x=${"b".repeat(5000)}`, {
      headers: auth,
    });
    const keptId = kept.headers.get("request-id") ?? "";
    // Apart from the reads of the log itself (this test's own), only the request with a valid key is there.
    const rows = (await requestLogThrough(client, keptId)).filter((r) => !r.path.startsWith("/v1/request_log"));
    expect(rows.map((r) => r.id)).toEqual([keptId]);
    const [row] = rows;
    expect(row?.path.startsWith("/v1/merchants?status=4783 **** **** 5991&x=bbb")).toBe(true);
    expect(row?.path.length).toBe(1024);
  });
});
