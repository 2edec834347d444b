import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DomainError } from "../domain/kernel/errors.ts";
import type { ServiceKeyDoc } from "../domain/service-keys/records.ts";
import { credentialOf, ownedBy, tagOf } from "./console-routing.ts";

// Which credential routes a request to a sandbox on demand (console-routing.ts): a Bearer key, the
// console's sign-in key (read from its JSON body here, and not read again) or its session cookie.

const KEY = `key_test_${"a".repeat(24)}Tg5Rx8Qa`;
const TOKEN = `csess_${"b".repeat(35)}Tg5Rx8Qa`;

describe("credentialOf", () => {
  let url = "";
  let server: ReturnType<ReturnType<typeof express>["listen"]>;
  beforeAll(async () => {
    const find = credentialOf({ cookieName: "payments_console", bodyLimitBytes: 1024, console: true });
    const app = express();
    app.use(async (req, res, next) => {
      try {
        const credential = await find(req, res);
        // What the app behind would see of the body: the parsed sign-in, not the stream again.
        res.json({ credential: credential ?? null, body: req.body ?? null });
      } catch (err) {
        next(err);
      }
    });
    app.use((err: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(err.status ?? 500).json({ error: true });
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    // A cast: listening on TCP, the address is an AddressInfo.
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const ask = async (path: string, init: RequestInit = {}) => (await fetch(`${url}${path}`, init)).json();
  const signIn = (body: string, type = "application/json") =>
    ask("/console/session", { method: "POST", headers: { "content-type": type }, body });

  it("takes a Bearer sandbox key, on any path; never a live key or a malformed one", async () => {
    expect(await ask("/v1/merchants", { headers: { authorization: `Bearer ${KEY}` } })).toMatchObject({
      credential: { kind: "key", secret: KEY },
    });
    const live = KEY.replace("key_test_", "key_live_");
    expect(await ask("/v1/merchants", { headers: { authorization: `Bearer ${live}` } })).toMatchObject({
      credential: null,
    });
    expect(await ask("/v1/merchants", { headers: { authorization: "Bearer key_test_short" } })).toMatchObject({
      credential: null,
    });
  });

  it("takes the console's sign-in key from its JSON body, which it leaves parsed for the app", async () => {
    expect(await signIn(JSON.stringify({ key: KEY }))).toEqual({
      credential: { kind: "key", secret: KEY },
      body: { key: KEY },
    });
    expect(await signIn(JSON.stringify({ key: 42 }))).toEqual({ credential: null, body: { key: 42 } });
    // Not JSON: left unread, for the account's app to refuse as it does today (415).
    expect(await signIn(`key=${KEY}`, "application/x-www-form-urlencoded")).toEqual({ credential: null, body: null });
  });

  it("rejects a sign-in body that is not valid JSON with the parser's 400", async () => {
    const res = await fetch(`${url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"key": ',
    });
    expect(res.status).toBe(400);
  });

  it("takes the session cookie on the console's session and API paths only", async () => {
    const cookie = { cookie: `other=1; payments_console=${TOKEN}` };
    expect(await ask("/console/session", { headers: cookie })).toMatchObject({
      credential: { kind: "session", token: TOKEN },
    });
    expect(await ask("/console/api/v1/charges", { headers: cookie })).toMatchObject({
      credential: { kind: "session", token: TOKEN },
    });
    expect(await ask("/v1/charges", { headers: cookie })).toMatchObject({ credential: null });
    expect(await ask("/console/api/v1/charges", { headers: { cookie: "payments_console=csess_short" } })).toMatchObject(
      { credential: null },
    );
  });

  it("takes Bearer keys only when the console is off", async () => {
    const off = credentialOf({ cookieName: "payments_console", bodyLimitBytes: 1024, console: false });
    const req = { headers: { cookie: `payments_console=${TOKEN}` }, path: "/console/session", method: "GET" };
    // A cast: the function reads only these fields of the request when the console is off.
    expect(await off(req as unknown as express.Request, {} as express.Response)).toBeUndefined();
  });
});

describe("tagOf and ownedBy", () => {
  it("read the tag a key or a token ends with", () => {
    expect(tagOf({ kind: "key", secret: KEY })).toBe("Tg5Rx8Qa");
    expect(tagOf({ kind: "session", token: TOKEN })).toBe("Tg5Rx8Qa");
  });

  it("own a live key of the domain (with its record) or a session its store holds, and nothing else", async () => {
    // A cast: only the id is read of the record in this test.
    const key = { id: "kid_1" } as ServiceKeyDoc;
    const domain = {
      serviceKeys: {
        authenticate: async (secret: string) => {
          if (secret === KEY) return key;
          throw new DomainError("unauthorized", "unknown key");
        },
      },
      consoleSessions: { holds: async (token: string) => token === TOKEN },
    };
    expect(await ownedBy(domain, { kind: "key", secret: KEY })).toEqual({ owned: true, key });
    expect(await ownedBy(domain, { kind: "key", secret: `${KEY.slice(0, -9)}xTg5Rx8Qa` })).toEqual({ owned: false });
    expect(await ownedBy(domain, { kind: "session", token: TOKEN })).toEqual({ owned: true });
    expect(await ownedBy(domain, { kind: "session", token: `csess_${"c".repeat(35)}Tg5Rx8Qa` })).toEqual({
      owned: false,
    });
    const broken = { ...domain, serviceKeys: { authenticate: async () => Promise.reject(new Error("store down")) } };
    await expect(ownedBy(broken, { kind: "key", secret: KEY })).rejects.toThrow("store down");
  });
});
