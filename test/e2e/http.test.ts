import { beforeAll, describe, expect, it } from "vitest";
import { json, useServer } from "./fixtures.ts";

// HTTP-level behaviour every operation shares: problems for malformed input, unknown routes, wrong methods
// and oversized bodies, and a Request-Id on every response (docs/api.md 'Conventions').

describe("HTTP conventions", () => {
  const { server } = useServer({ BODY_LIMIT_BYTES: "2048" });
  let auth: Record<string, string>;
  beforeAll(() => {
    auth = { authorization: `Bearer ${server.sandboxKey}` };
  });

  async function problemOf(res: Response) {
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.headers.get("request-id")).toMatch(/^req_[0-9A-Za-z]{24}$/);
    const body = await json(res);
    expect(body.request_id).toBe(res.headers.get("request-id"));
    // The type is the entry for its code in this server's error reference (GET /docs/errors).
    expect(body.type).toBe(`${server.url}/docs/errors#${body.code}`);
    expect(body.status).toBe(res.status);
    return body;
  }

  it("answers malformed JSON with a 400 problem", async () => {
    const res = await fetch(`${server.url}/v1/merchants`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: '{"name": "Acme",',
    });
    expect(res.status).toBe(400);
    expect(await problemOf(res)).toMatchObject({ code: "invalid_request", param: "body" });
  });

  it("answers a body over the limit with a 413 problem", async () => {
    const res = await fetch(`${server.url}/v1/merchants`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "x".repeat(4096) }),
    });
    expect(res.status).toBe(413);
    const body = JSON.stringify({ name: "x".repeat(4096) });
    expect(await problemOf(res)).toMatchObject({
      code: "payload_too_large",
      detail: `The request body is larger than this server takes: at most 2048 bytes (this one is ${body.length}), its \`BODY_LIMIT_BYTES\` setting.`,
    });
  });

  it("answers a non-JSON body with a 4xx problem", async () => {
    const res = await fetch(`${server.url}/v1/merchants`, {
      method: "POST",
      headers: { ...auth, "content-type": "text/plain" },
      body: "name=Acme",
    });
    expect([400, 415]).toContain(res.status);
    await problemOf(res);
  });

  it("answers unknown routes with a 404 problem and wrong methods with a 405 problem", async () => {
    const unknown = await fetch(`${server.url}/v1/nothing-here`, { headers: auth });
    expect(unknown.status).toBe(404);
    expect(await problemOf(unknown)).toMatchObject({
      code: "not_found",
      detail:
        "No route GET /v1/nothing-here: the API has no such path. Its paths are listed in the reference at /docs.",
    });
    const typo = await fetch(`${server.url}/v1/chargess`, { headers: auth });
    expect(await problemOf(typo)).toMatchObject({
      code: "not_found",
      detail:
        "No route GET /v1/chargess: the API has no such path (did you mean /v1/charges?). Its paths are listed in the reference at /docs.",
    });
    const outside = await fetch(`${server.url}/v2/merchants`, { headers: auth });
    expect(outside.status).toBe(404);
    await problemOf(outside);
    const wrong = await fetch(`${server.url}/v1/merchants`, { method: "DELETE", headers: auth });
    expect(wrong.status).toBe(405);
    expect(await problemOf(wrong)).toMatchObject({ code: "method_not_allowed" });
  });

  it("answers a malformed Authorization header with 401 and WWW-Authenticate", async () => {
    for (const authorization of ["Basic Zm9vOmJhcg==", "Bearer", "Bearer key_live_short"]) {
      const res = await fetch(`${server.url}/v1/merchants`, { headers: { authorization } });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(await problemOf(res)).toMatchObject({ code: "unauthorized" });
    }
  });

  it("gives every success a fresh Request-Id", async () => {
    const a = await fetch(`${server.url}/v1/merchants`, { headers: auth });
    const b = await fetch(`${server.url}/v1/merchants`, { headers: auth });
    expect(a.status).toBe(200);
    expect(a.headers.get("request-id")).toMatch(/^req_/);
    expect(a.headers.get("request-id")).not.toBe(b.headers.get("request-id"));
  });
});
