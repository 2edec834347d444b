import { unwrap } from "@payments/client";
import { describe, expect, it } from "vitest";
import { createMerchant, createSandbox, json, useServer } from "./fixtures.ts";

// The developer console in a sandbox on demand (server/src/sandboxes/console-routing.ts): a sign-in
// with a sandbox's key opens a session in that sandbox's own store, every console request of that
// session is served by the sandbox (its objects, never the default sandbox's), the session says which
// sandbox it is in, sign-out works as anywhere, and deleting the sandbox ends the session with its keys.
// The console's pages over it are tested in a browser (test/browser/console/sandboxes.test.ts).

interface Session {
  cookie: string;
  csrf: string;
  body: {
    sandbox: { id: string; name: string } | null;
    key: { id: string; livemode: boolean };
    csrf_token: string;
  };
}

describe("console sessions in a sandbox on demand", () => {
  const { server, client: admin } = useServer({ CONSOLE_SESSION_TTL_SECONDS: "600" });
  const origin = () => new URL(server.url).origin;

  async function signIn(key: string, cookie?: string): Promise<Session> {
    const res = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        origin: origin(),
        "sec-fetch-site": "same-origin",
        ...(cookie ? { cookie } : {}),
      },
      body: JSON.stringify({ key }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = await json(res);
    return { cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "", csrf: body.csrf_token, body };
  }

  const viaConsole = (session: Session, path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${server.url}/console/api${path}`, {
      ...init,
      headers: {
        cookie: session.cookie,
        "x-csrf-token": session.csrf,
        "sec-fetch-site": "same-origin",
        ...(init.method && init.method !== "GET" ? { origin: origin(), "content-type": "application/json" } : {}),
        ...init.headers,
      },
    });

  const current = (session: Session) => fetch(`${server.url}/console/session`, { headers: { cookie: session.cookie } });

  const sandbox = (name: string) => createSandbox(server, admin, name);

  it("signs in with a sandbox's key, into that sandbox: its objects only, and the session names it", async () => {
    const qa = await sandbox("QA: Ana");
    const mine = await createMerchant(qa.client, "Only in QA");
    const outside = await createMerchant(admin, "Only in the default sandbox");

    const session = await signIn(qa.secret);
    expect(session.body.sandbox).toEqual({ id: qa.id, name: "QA: Ana" });
    expect(session.body.key.livemode).toBe(false);
    expect(session.cookie).toMatch(/^payments_console=csess_[0-9A-Za-z]{43}$/);
    // The session lives in the sandbox's store, not the account's.
    const token = session.cookie.split("=")[1] ?? "";
    expect(await server.running.store.findAll("console_sessions", { key_id: session.body.key.id }, 10)).toEqual([]);
    const inside = await server.running.sandboxes.inspect(qa.id);
    expect(inside?.domain.consoleSessions.sandbox).toEqual({ id: qa.id, name: "QA: Ana" });
    expect(await inside?.domain.consoleSessions.holds(token)).toBe(true);

    const listed = await json(await viaConsole(session, "/v1/merchants?limit=100"));
    expect(listed.data.map((m: { id: string }) => m.id)).toEqual([mine.id]);
    const other = await viaConsole(session, `/v1/merchants/${outside.id}`);
    expect(other.status).toBe(404);
    // A change made through the console lands in the sandbox.
    const made = await viaConsole(session, "/v1/merchants", {
      method: "POST",
      body: JSON.stringify({ name: "Made in the console" }),
    });
    expect(made.status).toBe(201);
    const madeId = (await json(made)).id;
    expect((await qa.client.GET("/v1/merchants/{id}", { params: { path: { id: madeId } } })).response.status).toBe(200);
    expect((await admin.GET("/v1/merchants/{id}", { params: { path: { id: madeId } } })).response.status).toBe(404);

    const again = await json(await current(session));
    expect(again).toMatchObject({ sandbox: { id: qa.id, name: "QA: Ana" }, csrf_token: session.csrf });
  });

  it("says no sandbox for a session of the account's keys, and keeps it there", async () => {
    const session = await signIn(server.sandboxKey);
    expect(session.body.sandbox).toBeNull();
    const merchant = await createMerchant(admin, "Default sandbox merchant");
    const got = await viaConsole(session, `/v1/merchants/${merchant.id}`);
    expect(got.status).toBe(200);
  });

  it("signs out of a sandbox's session; a sign-in there replaces the browser's session in the sandbox", async () => {
    const qa = await sandbox("QA: sign-out");
    const first = await signIn(qa.secret);
    const second = await signIn(qa.secret, first.cookie);
    expect((await current(first)).status).toBe(204);
    const out = await fetch(`${server.url}/console/session`, {
      method: "DELETE",
      headers: { cookie: second.cookie, origin: origin(), "x-csrf-token": second.csrf },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    expect((await current(second)).status).toBe(204);
    expect((await viaConsole(second, "/v1/merchants")).status).toBe(401);
  });

  it("ends the session when its sandbox is deleted, as its keys end", async () => {
    const qa = await sandbox("QA: deleted");
    const session = await signIn(qa.secret);
    expect((await viaConsole(session, "/v1/merchants")).status).toBe(200);
    unwrap(await admin.DELETE("/v1/sandboxes/{id}", { params: { path: { id: qa.id } } }));
    const after = await viaConsole(session, "/v1/merchants");
    expect(after.status).toBe(401);
    expect(await json(after)).toMatchObject({ code: "unauthorized" });
    expect((await current(session)).status).toBe(204);
    expect((await qa.client.GET("/v1/merchants")).response.status).toBe(401);
    // Signing in again with its key is refused like any unknown key.
    const refused = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: origin() },
      body: JSON.stringify({ key: qa.secret }),
    });
    expect(refused.status).toBe(401);
  });

  it("refuses a sign-in body that is not JSON with the parser's 400, wherever the key would go", async () => {
    const res = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: origin() },
      body: '{"key": "key_test_',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
  });
});
