import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { DomainError } from "../kernel/errors.ts";
import type { ServiceKeyDoc } from "./records.ts";
import { AUTH_CACHE_TTL_MS } from "./service-keys.ts";

// Service keys (spec/resources/service-keys.tsp: createServiceKey, getServiceKey, listServiceKeys,
// rotateServiceKey, revokeServiceKey; the bearer scheme in main.tsp): the secret's shape and where it
// may be used, what is stored of it, expiry and grace periods to the millisecond, and the conditional
// writes that keep concurrent rotations and revocations honest. The cache's own behaviour is in
// service-keys.test.ts.

let ctx: ReturnType<typeof testDomain>;
const START = Date.parse("2026-11-21T10:00:00Z");
const at = (ms: number) => new Date(START + ms).toISOString();

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["performance"] });
  ctx = testDomain();
});
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await ctx.store.close();
});

const keys = () => ctx.domain.serviceKeys;
const test = () => ctx.caller(false);
const live = () => ctx.caller(true);
const advanceMs = (ms: number) => ctx.advance(ms / 1000);

async function refused(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  return err;
}

async function unauthorized(secret: string): Promise<void> {
  expect((await refused(keys().authenticate(secret))).code).toBe("unauthorized");
}

describe("creating a key", () => {
  it("makes a secret of the caller's environment and stores only its digest and its 13-character prefix", async () => {
    const { key, secret } = await keys().create(test(), { name: "checkout", scopes: ["charges", "charges", "vault"] });
    expect(secret).toMatch(/^key_test_[0-9A-Za-z]{32}$/);
    expect(key.id).toMatch(/^kid_[0-9A-Za-z]{24}$/);
    expect(key).toMatchObject({ livemode: false, name: "checkout", scopes: ["charges", "vault"], expires_at: null });
    expect(key.prefix).toBe(secret.slice(0, 13));
    expect(key.prefix).toHaveLength(13);
    expect(key.secret_hash).toBe(createHash("sha256").update(secret).digest("hex"));
    const stored = await ctx.store.get("service_keys", key.id);
    expect(stored).toEqual(key);
    expect(JSON.stringify(stored)).not.toContain(secret.slice(9));

    const prod = await keys().create(live(), { name: "live", scopes: ["*"] });
    expect(prod.secret).toMatch(/^key_live_[0-9A-Za-z]{32}$/);
    expect(prod.key.livemode).toBe(true);
    expect(prod.key.prefix).toBe(prod.secret.slice(0, 13));
  });

  it("keeps an expiry in the future, normalized", async () => {
    const { key } = await keys().create(test(), { name: "a", scopes: ["charges"], expires_at: at(1) });
    expect(key.expires_at).toBe("2026-11-21T10:00:00.001000Z");
  });

  it.each([
    ["now", 0],
    ["in the past", -86_400_000],
  ])("refuses an expiry %s (400 naming expires_at), and stores nothing", async (_when, offset) => {
    const err = await refused(keys().create(test(), { name: "a", scopes: ["charges"], expires_at: at(offset) }));
    expect(err.code).toBe("invalid_request");
    expect(err.param).toBe("expires_at");
    expect(await keys().none()).toBe(true);
  });

  it("none() says whether any key exists at all (the first start creates one)", async () => {
    expect(await keys().none()).toBe(true);
    await keys().issue(true, { name: "cli", scopes: ["*"] });
    expect(await keys().none()).toBe(false);
  });
});

describe("environments: a key is managed only from its own", () => {
  it("get, rotate and revoke answer 404 naming id across environments; list shows only the caller's", async () => {
    const sandbox = await keys().create(test(), { name: "s", scopes: ["charges"] });
    const prod = await keys().create(live(), { name: "p", scopes: ["charges"] });
    for (const [caller, id] of [
      [live(), sandbox.key.id],
      [test(), prod.key.id],
    ] as const) {
      for (const attempt of [keys().get(caller, id), keys().rotate(caller, id, 0), keys().revoke(caller, id)]) {
        const err = await refused(attempt);
        expect(err.code).toBe("not_found");
        expect(err.param).toBe("id");
      }
    }
    expect(await keys().get(test(), sandbox.key.id)).toEqual(sandbox.key);
    expect((await keys().list(test(), { limit: 10 })).data.map((k) => k.id)).toEqual([sandbox.key.id]);
    expect((await keys().list(live(), { limit: 10 })).data.map((k) => k.id)).toEqual([prod.key.id]);
    expect((await keys().authenticate(sandbox.secret)).revoked_at).toBeNull();
    expect((await keys().authenticate(prod.secret)).revoked_at).toBeNull();
  });
});

describe("authenticate", () => {
  it("accepts a live key for its live record", async () => {
    const { key, secret } = await keys().issue(true, { name: "p", scopes: ["*"] });
    expect((await keys().authenticate(secret)).id).toBe(key.id);
  });

  it("refuses a malformed secret without reading the store", async () => {
    const { secret } = await keys().issue(false, { name: "a", scopes: ["*"] });
    const findOne = vi.spyOn(ctx.store, "findOne");
    for (const bad of [`${secret}x`, `x${secret}`, ` ${secret}`, secret.slice(0, -1), secret.replace("key_", "kez_")]) {
      await unauthorized(bad);
    }
    expect(findOne).not.toHaveBeenCalled();
  });

  it("refuses a record whose environment does not match its secret's prefix", async () => {
    const { key, secret } = await keys().issue(false, { name: "a", scopes: ["*"] });
    await ctx.store.update("service_keys", key.id, { set: { livemode: true } });
    await unauthorized(secret);
  });

  it("a key stops working at the instant it expires, cached or not", async () => {
    const { secret } = await keys().issue(false, { name: "a", scopes: ["*"], expires_at: at(500) });
    await keys().authenticate(secret);
    advanceMs(499);
    await keys().authenticate(secret);
    advanceMs(1);
    await unauthorized(secret);
  });

  it("a rotated-out secret stops working at the instant its grace period ends", async () => {
    const { key, secret } = await keys().issue(false, { name: "a", scopes: ["*"] });
    await keys().rotate(test(), key.id, 60);
    advanceMs(59_999);
    expect((await keys().authenticate(secret)).id).toBe(key.id);
    advanceMs(1);
    await unauthorized(secret);
  });

  it("reads the store again once the cached record is exactly AUTH_CACHE_TTL_MS old", async () => {
    const { secret } = await keys().issue(false, { name: "a", scopes: ["*"] });
    const findOne = vi.spyOn(ctx.store, "findOne");
    await keys().authenticate(secret);
    vi.advanceTimersByTime(AUTH_CACHE_TTL_MS - 1);
    await keys().authenticate(secret);
    expect(findOne).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    await keys().authenticate(secret);
    expect(findOne).toHaveBeenCalledTimes(2);
  });

  it("rotating or revoking one key keeps the other keys' cached records", async () => {
    const a = await keys().issue(false, { name: "a", scopes: ["*"] });
    const b = await keys().issue(false, { name: "b", scopes: ["*"] });
    await keys().authenticate(a.secret);
    await keys().authenticate(b.secret);
    const findOne = vi.spyOn(ctx.store, "findOne");
    await keys().rotate(test(), a.key.id, 60);
    await keys().authenticate(b.secret);
    await keys().authenticate(a.secret);
    expect(findOne).toHaveBeenCalledTimes(2); // a's old secret: not the current digest, found as the previous one
    findOne.mockClear();
    await keys().revoke(test(), a.key.id);
    await keys().authenticate(b.secret);
    expect(findOne).not.toHaveBeenCalled();
  });

  it("does not cache a record read while a revocation went through", async () => {
    const { key, secret } = await keys().issue(false, { name: "a", scopes: ["*"] });
    const findOne = ctx.store.findOne.bind(ctx.store);
    vi.spyOn(ctx.store, "findOne").mockImplementationOnce(async (...args: Parameters<typeof ctx.store.findOne>) => {
      const before = await findOne(...args);
      await keys().revoke(test(), key.id); // lands after the read, before the lookup returns
      return before as never;
    });
    expect((await keys().authenticate(secret)).id).toBe(key.id); // raced: the record read before the revocation
    await unauthorized(secret); // the next request sees the revocation, without waiting for the TTL
  });
});

describe("rotate", () => {
  it("with a grace period keeps the old digest until then; without one forgets it at once", async () => {
    const { key } = await keys().issue(false, { name: "a", scopes: ["*"] });
    const graced = await keys().rotate(test(), key.id, 60);
    expect(graced.secret).toMatch(/^key_test_[0-9A-Za-z]{32}$/);
    expect(graced.key).toMatchObject({
      secret_hash: createHash("sha256").update(graced.secret).digest("hex"),
      prefix: graced.secret.slice(0, 13),
      previous_secret_hash: key.secret_hash,
      previous_expires_at: "2026-11-21T10:01:00.000000Z",
    });
    const at0 = await keys().rotate(test(), key.id, 0);
    expect(at0.key).toMatchObject({ previous_secret_hash: null, previous_expires_at: null });
    expect(await ctx.store.get("service_keys", key.id)).toEqual(at0.key);
    await unauthorized(graced.secret);
  });

  it("a live key rotates to a live secret", async () => {
    const { key } = await keys().issue(true, { name: "p", scopes: ["*"] });
    const { secret } = await keys().rotate(live(), key.id, 0);
    expect(secret).toMatch(/^key_live_/);
    expect((await keys().authenticate(secret)).id).toBe(key.id);
  });

  it("refuses a revoked key, and an expired one from the instant it expires (409)", async () => {
    const revoked = await keys().issue(false, { name: "r", scopes: ["*"] });
    await keys().revoke(test(), revoked.key.id);
    expect((await refused(keys().rotate(test(), revoked.key.id, 0))).code).toBe("invalid_state_transition");

    const expiring = await keys().issue(false, { name: "e", scopes: ["*"], expires_at: at(1000) });
    advanceMs(999);
    await keys().rotate(test(), expiring.key.id, 0);
    advanceMs(1);
    expect((await refused(keys().rotate(test(), expiring.key.id, 0))).code).toBe("invalid_state_transition");
  });

  it("of two concurrent rotations one wins; the other is a 409 conflict and its secret never works", async () => {
    const { key, secret } = await keys().issue(false, { name: "a", scopes: ["*"] });
    const results = await Promise.allSettled([keys().rotate(test(), key.id, 60), keys().rotate(test(), key.id, 60)]);
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    const loser = results.find((r) => r.status === "rejected")?.reason as DomainError;
    expect(loser).toBeInstanceOf(DomainError);
    expect(loser.code).toBe("conflict");
    const stored = (await ctx.store.get("service_keys", key.id)) as ServiceKeyDoc;
    const winner = (won[0] as PromiseFulfilledResult<{ secret: string }>).value.secret;
    expect(stored.secret_hash).toBe(createHash("sha256").update(winner).digest("hex"));
    expect(stored.previous_secret_hash).toBe(key.secret_hash);
    expect((await keys().authenticate(secret)).id).toBe(key.id);
  });

  it("a rotation that races a revocation fails and leaves the key revoked", async () => {
    const { key, secret } = await keys().issue(false, { name: "a", scopes: ["*"] });
    const get = ctx.store.get.bind(ctx.store);
    vi.spyOn(ctx.store, "get").mockImplementationOnce(async (...args: Parameters<typeof ctx.store.get>) => {
      const before = await get(...args);
      await keys().revoke(test(), key.id);
      return before as never;
    });
    expect((await refused(keys().rotate(test(), key.id, 60))).code).toBe("conflict");
    const stored = (await ctx.store.get("service_keys", key.id)) as ServiceKeyDoc;
    expect(stored.revoked_at).not.toBeNull();
    expect(stored.secret_hash).toBe(key.secret_hash);
    expect(stored.previous_secret_hash).toBeNull();
    await unauthorized(secret);
  });
});

describe("revoke", () => {
  it("ends the secret and any grace period at once", async () => {
    const { key, secret } = await keys().issue(false, { name: "a", scopes: ["*"] });
    const { secret: next } = await keys().rotate(test(), key.id, 3600);
    const revoked = await keys().revoke(test(), key.id);
    expect(revoked).toMatchObject({
      revoked_at: "2026-11-21T10:00:00.000000Z",
      previous_secret_hash: null,
      previous_expires_at: null,
    });
    await unauthorized(secret);
    await unauthorized(next);
  });

  it("keeps the first revocation's time, also when two revocations race", async () => {
    const { key } = await keys().issue(false, { name: "a", scopes: ["*"] });
    const get = ctx.store.get.bind(ctx.store);
    vi.spyOn(ctx.store, "get").mockImplementationOnce(async (...args: Parameters<typeof ctx.store.get>) => {
      const before = await get(...args);
      await keys().revoke(test(), key.id); // the other revocation lands first
      advanceMs(10_000);
      return before as never;
    });
    const result = await keys().revoke(test(), key.id);
    expect(result.revoked_at).toBe("2026-11-21T10:00:00.000000Z");
    expect((await ctx.store.get("service_keys", key.id))?.revoked_at).toBe("2026-11-21T10:00:00.000000Z");
    advanceMs(10_000);
    expect((await keys().revoke(test(), key.id)).revoked_at).toBe("2026-11-21T10:00:00.000000Z");
  });
});

describe("touch", () => {
  it("writes last_used_at again once a full minute has passed, not before", async () => {
    const { secret } = await keys().issue(false, { name: "a", scopes: ["*"] });
    const update = vi.spyOn(ctx.store, "update");
    const key = await keys().authenticate(secret);
    await keys().touch(key);
    expect(key.last_used_at).toBe("2026-11-21T10:00:00.000000Z");
    advanceMs(59_999);
    await keys().touch(key);
    expect(update).toHaveBeenCalledTimes(1);
    advanceMs(1);
    await keys().touch(key);
    expect(update).toHaveBeenCalledTimes(2);
    expect(key.last_used_at).toBe("2026-11-21T10:01:00.000000Z");
  });
});
