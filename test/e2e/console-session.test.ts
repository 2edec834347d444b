import { describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import {
  clientFor,
  createServiceKey,
  createToken,
  json,
  requestLogThrough,
  storedConsoleSessionsOf,
  useServer,
  VISA,
  withServer,
} from "./fixtures.ts";

// The developer console's sessions and its way into the API (server/src/http/console.ts), at the HTTP
// level: the cookie's attributes, what the store keeps, the three CSRF layers, that a console request
// is an API request (scopes, idempotency, the request log), and that a session ends with its key.
// The pages themselves are tested in a browser (test/browser/console/).

interface Session {
  cookie: string;
  csrf: string;
  setCookie: string;
  body: Record<string, unknown> & { key: { prefix: string; scopes: string[]; id: string }; csrf_token: string };
}

describe("console sessions", () => {
  const clock = new TestClock();
  const { server, client: admin } = useServer({ CONSOLE_SESSION_TTL_SECONDS: "600" }, { clock });

  const origin = () => new URL(server.url).origin;

  async function signIn(key: string): Promise<Session> {
    const res = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: origin(), "sec-fetch-site": "same-origin" },
      body: JSON.stringify({ key }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const setCookie = res.headers.get("set-cookie") ?? "";
    const body = await json(res);
    return { cookie: setCookie.split(";")[0] ?? "", csrf: body.csrf_token, setCookie, body };
  }

  /** A request as the console's page makes it: same origin, the cookie and the CSRF token. */
  function viaConsole(session: Session, path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
    return fetch(`${server.url}/console/api${path}`, {
      ...init,
      headers: {
        cookie: session.cookie,
        "x-csrf-token": session.csrf,
        "sec-fetch-site": "same-origin",
        ...(init.method && init.method !== "GET" ? { origin: origin() } : {}),
        ...(init.body ? { "content-type": "application/json" } : {}),
        ...init.headers,
      },
    });
  }

  it("exchanges a key for an HttpOnly, SameSite=Strict session cookie; the key is stored nowhere in clear", async () => {
    const session = await signIn(server.sandboxKey);
    expect(session.setCookie).toMatch(/^payments_console=csess_[0-9A-Za-z]{43}; /);
    expect(session.setCookie).toMatch(/; HttpOnly/);
    expect(session.setCookie).toMatch(/; SameSite=Strict/);
    expect(session.setCookie).toMatch(/; Path=\//);
    expect(session.setCookie).toMatch(/; Max-Age=600/);
    // The test server's address is loopback over http: no Secure there (see the unit test for the rest).
    expect(session.setCookie).not.toMatch(/Secure/);
    expect(session.body.key).toMatchObject({ prefix: server.sandboxKey.slice(0, 13), scopes: ["*"], livemode: false });
    expect(JSON.stringify(session.body)).not.toContain(server.sandboxKey);

    const token = session.cookie.split("=")[1] ?? "";
    const stored = await server.running.store.findAll("console_sessions", {}, 100);
    expect(stored.length).toBeGreaterThan(0);
    const text = JSON.stringify(stored);
    expect(text).not.toContain(server.sandboxKey);
    expect(text).not.toContain(token);
    expect(text).not.toContain(session.csrf);
  });

  it("serves the API to the session's key: the same operations, answers and problems", async () => {
    const session = await signIn(server.sandboxKey);
    const res = await viaConsole(session, "/v1/merchants?limit=1");
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ object: "list" });

    const bad = await viaConsole(session, "/v1/merchants", { method: "POST", body: JSON.stringify({ name: "" }) });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ code: "invalid_request", param: "name" });
  });

  it("replays a POST with the same Idempotency-Key, as the API does", async () => {
    const session = await signIn(server.sandboxKey);
    const post = () =>
      viaConsole(session, "/v1/merchants", {
        method: "POST",
        headers: { "idempotency-key": "console-idem-1" },
        body: JSON.stringify({ name: "Console Coffee" }),
      });
    const first = await post();
    expect(first.status).toBe(201);
    const again = await post();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await json(again)).id).toBe((await json(first)).id);
  });

  it("refuses requests without the CSRF token, from another origin or site, or without Origin on a change", async () => {
    const session = await signIn(server.sandboxKey);
    const noToken = await viaConsole(session, "/v1/merchants", { headers: { "x-csrf-token": "" } });
    expect(noToken.status).toBe(403);
    const wrongToken = await viaConsole(session, "/v1/merchants", { headers: { "x-csrf-token": "x".repeat(43) } });
    expect(wrongToken.status).toBe(403);
    const crossSite = await viaConsole(session, "/v1/merchants", { headers: { "sec-fetch-site": "cross-site" } });
    expect(crossSite.status).toBe(403);
    const sameSite = await viaConsole(session, "/v1/merchants", { headers: { "sec-fetch-site": "same-site" } });
    expect(sameSite.status).toBe(403);
    const foreign = await viaConsole(session, "/v1/merchants", {
      method: "POST",
      headers: { origin: "https://evil.example" },
      body: JSON.stringify({ name: "Forged" }),
    });
    expect(foreign.status).toBe(403);
    expect(await json(foreign)).toMatchObject({ code: "forbidden" });
    const noOrigin = await fetch(`${server.url}/console/api/v1/merchants`, {
      method: "POST",
      headers: { cookie: session.cookie, "x-csrf-token": session.csrf, "content-type": "application/json" },
      body: JSON.stringify({ name: "No origin" }),
    });
    expect(noOrigin.status).toBe(403);
    // A session cookie means nothing to /v1 itself, which only takes Bearer keys.
    const direct = await fetch(`${server.url}/v1/merchants`, { headers: { cookie: session.cookie } });
    expect(direct.status).toBe(401);
    // Nothing forged was created.
    const names = (await json(await viaConsole(session, "/v1/merchants?limit=100"))).data.map(
      (m: { name: string }) => m.name,
    );
    expect(names).not.toContain("Forged");
    expect(names).not.toContain("No origin");
  });

  it("refuses a cross-origin sign-in, a non-JSON one and a bad key", async () => {
    const foreign = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://evil.example" },
      body: JSON.stringify({ key: server.sandboxKey }),
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("set-cookie")).toBeNull();
    const form = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: origin() },
      body: `key=${server.sandboxKey}`,
    });
    expect(form.status).toBe(415);
    const bad = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: origin() },
      body: JSON.stringify({ key: `key_test_${"x".repeat(32)}` }),
    });
    expect(bad.status).toBe(401);
    expect(await json(bad)).toMatchObject({ code: "unauthorized" });
    const missing = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: origin() },
      body: "{}",
    });
    expect(missing.status).toBe(400);
    expect(await json(missing)).toMatchObject({ code: "invalid_request", param: "key" });
  });

  it("answers the current session (with its CSRF token) and ends it at sign-out", async () => {
    const session = await signIn(server.sandboxKey);
    const current = await fetch(`${server.url}/console/session`, { headers: { cookie: session.cookie } });
    expect(current.status).toBe(200);
    expect(await json(current)).toMatchObject({ csrf_token: session.csrf, key: { id: session.body.key.id } });

    const noToken = await fetch(`${server.url}/console/session`, {
      method: "DELETE",
      headers: { cookie: session.cookie, origin: origin() },
    });
    expect(noToken.status).toBe(403);
    const out = await fetch(`${server.url}/console/session`, {
      method: "DELETE",
      headers: { cookie: session.cookie, origin: origin(), "x-csrf-token": session.csrf },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^payments_console=; .*Max-Age=0/);
    // No session any more: the current session is none (204), and the API refuses the cookie.
    expect((await fetch(`${server.url}/console/session`, { headers: { cookie: session.cookie } })).status).toBe(204);
    expect((await viaConsole(session, "/v1/merchants")).status).toBe(401);
  });

  it("ends an event stream opened through the console when its session ends (event-stream.ts)", async () => {
    const session = await signIn(server.sandboxKey);
    const stream = await viaConsole(session, "/v1/events/stream");
    expect(stream.status).toBe(200);
    const whole = stream.text();
    const out = await fetch(`${server.url}/console/session`, {
      method: "DELETE",
      headers: { cookie: session.cookie, origin: origin(), "x-csrf-token": session.csrf },
    });
    expect(out.status).toBe(204);
    // Read to its end: the server ends it, as the next console request would be refused.
    expect((await whole).startsWith(": connected\n\n")).toBe(true);
  });

  it("offers exactly the key's scopes: a vault key gets 403 on charges", async () => {
    const session = await signIn(await server.key(["vault"]));
    expect(session.body.key.scopes).toEqual(["vault"]);
    const charges = await viaConsole(session, "/v1/charges");
    expect(charges.status).toBe(403);
    expect(await json(charges)).toMatchObject({ code: "forbidden" });
    const refund = await viaConsole(session, "/v1/charges/tx_9Lm2QwErTy7UiOp3AsDf5GhJ/refunds", {
      method: "POST",
      body: JSON.stringify({ amount: 100 }),
    });
    expect(refund.status).toBe(403);
  });

  it("ends every session of a key at once when it is revoked", async () => {
    const { id, secret } = await createServiceKey(admin, ["merchants"]);
    const session = await signIn(secret);
    const other = await signIn(secret);
    expect((await viaConsole(session, "/v1/merchants")).status).toBe(200);
    await admin.POST("/v1/service_keys/{id}/revoke", { params: { path: { id } } });
    expect((await viaConsole(session, "/v1/merchants")).status).toBe(401);
    expect((await viaConsole(other, "/v1/merchants")).status).toBe(401);
    expect(await storedConsoleSessionsOf(server, id)).toEqual([]);
  });

  it("keeps a session through a rotation's grace period, and ends it when the signed-in secret stops working", async () => {
    const { id, secret } = await createServiceKey(admin, ["merchants"]);
    const session = await signIn(secret);
    await admin.POST("/v1/service_keys/{id}/rotate", {
      params: { path: { id } },
      body: { grace_period_seconds: 60 },
    });
    expect((await viaConsole(session, "/v1/merchants")).status).toBe(200);
    clock.advance(59_999);
    expect((await viaConsole(session, "/v1/merchants")).status).toBe(200);
    clock.advance(1);
    expect((await viaConsole(session, "/v1/merchants")).status).toBe(401);
  });

  it("ends a session after CONSOLE_SESSION_TTL_SECONDS, whatever its use", async () => {
    const session = await signIn(server.sandboxKey);
    clock.advance(300_000);
    expect((await viaConsole(session, "/v1/merchants")).status).toBe(200);
    clock.advance(300_000);
    expect((await viaConsole(session, "/v1/merchants")).status).toBe(401);
    // Expired sessions are swept by the retention job.
    const expired = await signIn(server.sandboxKey);
    clock.advance(600_000);
    expect(await server.running.domain.jobs.sweepConsoleSessions()).toBeGreaterThan(0);
    expect((await fetch(`${server.url}/console/session`, { headers: { cookie: expired.cookie } })).status).toBe(204);
  });
});

describe("console cookie outside localhost", () => {
  it("is Secure, with the __Host- prefix, when BASE_URL is not a loopback http address", async () => {
    await withServer({ BASE_URL: "https://pay.example.com" }, async ({ server }) => {
      const res = await fetch(`${server.url}/console/session`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: "https://pay.example.com" },
        body: JSON.stringify({ key: server.sandboxKey }),
      });
      expect(res.status).toBe(200);
      const cookie = res.headers.get("set-cookie") ?? "";
      expect(cookie).toMatch(
        /^__Host-payments_console=csess_[0-9A-Za-z]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=3600; Secure$/,
      );
    });
  });
});

describe("the request log (GET /v1/request_log)", () => {
  const { server, client: admin } = useServer();

  it("lists requests newest first with method, path, status, latency, key and request id, card numbers masked", async () => {
    const { id, secret: merchantsKey } = await createServiceKey(admin, ["merchants", "tokenization"], "log test");
    const other = clientFor(server, merchantsKey);
    await createToken(other);
    const lookup = await fetch(`${server.url}/v1/merchants/${VISA}`, {
      headers: { authorization: `Bearer ${merchantsKey}` },
    });
    expect(lookup.status).toBe(400); // not a merchant id
    const requestId = lookup.headers.get("request-id") ?? "";
    const entries = await requestLogThrough(admin, requestId);
    const found = entries.find((e) => e.id === requestId);
    expect(found).toMatchObject({
      method: "GET",
      path: "/v1/merchants/4242********4242",
      status: 400,
      key_prefix: merchantsKey.slice(0, 13),
      source: "api",
    });
    expect(JSON.stringify(entries)).not.toContain(VISA);

    const mine = await admin.GET("/v1/request_log", { params: { query: { key_id: id, limit: 100 } } });
    expect(mine.data?.data.map((e) => e.path).sort()).toEqual(["/v1/merchants/4242********4242", "/v1/tokens"]);
    const failed = await admin.GET("/v1/request_log", { params: { query: { key_id: id, outcome: "failed" } } });
    expect(failed.data?.data.map((e) => e.status)).toEqual([400]);
    const posts = await admin.GET("/v1/request_log", { params: { query: { key_id: id, method: "POST" } } });
    expect(posts.data?.data.map((e) => e.path)).toEqual(["/v1/tokens"]);
    // Newest first, with cursors.
    const first = await admin.GET("/v1/request_log", { params: { query: { key_id: id, limit: 1 } } });
    expect(first.data?.has_more).toBe(true);
    const next = await admin.GET("/v1/request_log", {
      params: { query: { key_id: id, limit: 1, starting_after: first.data?.data[0]?.id ?? "" } },
    });
    expect(next.data?.data[0]?.path).toBe("/v1/tokens");
  });
});

describe("problem types resolve to the error reference", () => {
  const { server } = useServer();

  it("names <BASE_URL>/docs/errors#<code>, which this server serves with an entry for that code", async () => {
    const res = await fetch(`${server.url}/v1/merchants`);
    const body = await json(res);
    expect(body.type).toBe(`${server.url}/docs/errors#unauthorized`);
    const page = await fetch(body.type);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    const html = await page.text();
    expect(html).toContain('id="unauthorized"');
  });

  it("uses BASE_URL when it is set, in problems, the error reference and the served document's examples", async () => {
    await withServer({ BASE_URL: "https://pay.example.com" }, async ({ server: other }) => {
      const body = await json(await fetch(`${other.url}/v1/merchants`));
      expect(body.type).toBe("https://pay.example.com/docs/errors#unauthorized");
      // The error reference shows each code's type as a problem of this server has it.
      const html = await (await fetch(`${other.url}/docs/errors`)).text();
      expect(html).toContain("type: <code>https://pay.example.com/docs/errors#unauthorized</code>");
      expect(html).not.toContain("base URL");
      // The document's examples link to this server: problem types and payment link pages.
      const served = await (await fetch(`${other.url}/docs/openapi.json`)).text();
      expect(served).toContain('"https://pay.example.com/docs/errors#invalid_request"');
      expect(served).toMatch(/"https:\/\/pay\.example\.com\/pay\/plink_[0-9A-Za-z]{24}"/);
      expect(served).not.toContain('"http://127.0.0.1:3000/');
    });
  });
});

describe("CONSOLE_ENABLED=false", () => {
  it("serves neither the console nor its sign-in, and keeps the API reference", async () => {
    await withServer({ CONSOLE_ENABLED: "false" }, async ({ server }) => {
      expect((await fetch(`${server.url}/console`)).status).toBe(404);
      const signIn = await fetch(`${server.url}/console/session`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.url },
        body: JSON.stringify({ key: server.sandboxKey }),
      });
      expect(signIn.status).toBe(404);
      expect(signIn.headers.get("set-cookie")).toBeNull();
      expect((await fetch(`${server.url}/docs/errors`)).status).toBe(200);
    });
  });
});

describe("console requests without a valid session", () => {
  it("count against the client address's limit, like API requests without a valid key", async () => {
    const clock = TestClock.atNextMinute();
    await withServer(
      { RATE_LIMIT_ANONYMOUS_PER_MINUTE: "3" },
      async ({ server }) => {
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) {
          const res = await fetch(`${server.url}/console/api/v1/merchants`, {
            headers: { cookie: "payments_console=forged", "x-csrf-token": "x", "sec-fetch-site": "same-origin" },
          });
          statuses.push(res.status);
        }
        expect(statuses.slice(0, 3)).toEqual([403, 403, 403]);
        expect(statuses.slice(3)).toEqual([429, 429]);
        // Sign-in attempts are counted too.
        const signIn = await fetch(`${server.url}/console/session`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: server.url },
          body: JSON.stringify({ key: server.sandboxKey }),
        });
        expect(signIn.status).toBe(429);
      },
      { clock },
    );
  });
});
