import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openSqliteStore } from "../../store/sqlite.ts";
import { COLLECTIONS, type Docs } from "../areas.ts";
import type { Caller } from "../kernel/caller.ts";
import { createClock } from "../kernel/clock.ts";
import { DomainError } from "../kernel/errors.ts";
import { AUTH_CACHE_TTL_MS, BOOTSTRAP_SETTING, createServiceKeys } from "./service-keys.ts";

// authenticate reuses a key record it found for AUTH_CACHE_TTL_MS. What must not change with it:
// rotation and revocation through this instance count from the next request, expiry and the end of a
// grace period count from the instant they pass; only another instance's changes may lag, by at most
// the TTL.

const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
let clock = new Date("2026-11-21T10:00:00Z");
const now = () => clock;
const advance = (seconds: number) => {
  clock = new Date(clock.getTime() + seconds * 1000);
};
const caller: Caller = {
  keyId: "kid_test",
  livemode: false,
  scopes: ["*"],
  keyPrefix: "key_test_abcd",
  requestId: "req_test",
};

async function rejects(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).code).toBe("unauthorized");
  return (err as DomainError).message;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("service key authentication with a short-lived cache", () => {
  it("a revocation through this instance counts from the next request", async () => {
    const keys = createServiceKeys(store, createClock(now));
    const { key, secret } = await keys.issue(false, { name: "a", scopes: ["merchants"] });
    expect((await keys.authenticate(secret)).id).toBe(key.id);
    await keys.revoke(caller, key.id);
    expect(await rejects(keys.authenticate(secret))).toMatch(/revoked/);
  });

  it("a rotation through this instance counts from the next request, grace period included", async () => {
    const keys = createServiceKeys(store, createClock(now));
    const { key, secret: first } = await keys.issue(false, { name: "b", scopes: ["merchants"] });
    await keys.authenticate(first);
    const { secret: second } = await keys.rotate(caller, key.id, 60);
    expect((await keys.authenticate(first)).id).toBe(key.id); // within its grace period
    expect((await keys.authenticate(second)).id).toBe(key.id);
    const { secret: third } = await keys.rotate(caller, key.id, 0);
    await rejects(keys.authenticate(second));
    await rejects(keys.authenticate(first));
    expect((await keys.authenticate(third)).id).toBe(key.id);
  });

  it("expiry and the end of a grace period are checked on every request, cached or not", async () => {
    const keys = createServiceKeys(store, createClock(now));
    const expiring = await keys.issue(false, {
      name: "c",
      scopes: ["merchants"],
      expires_at: new Date(clock.getTime() + 0.5 * AUTH_CACHE_TTL_MS).toISOString(),
    });
    await keys.authenticate(expiring.secret);
    advance(AUTH_CACHE_TTL_MS / 1000);
    expect(await rejects(keys.authenticate(expiring.secret))).toMatch(/expired/);

    const rotating = await keys.issue(false, { name: "d", scopes: ["merchants"] });
    await keys.rotate(caller, rotating.key.id, 1);
    await keys.authenticate(rotating.secret);
    advance(2);
    expect(await rejects(keys.authenticate(rotating.secret))).toMatch(/grace period/);
  });

  it("another instance's revocation is seen within AUTH_CACHE_TTL_MS", async () => {
    const here = createServiceKeys(store, createClock(now));
    const elsewhere = createServiceKeys(store, createClock(now));
    const { key, secret } = await here.issue(false, { name: "e", scopes: ["merchants"] });
    await here.authenticate(secret);
    await elsewhere.revoke(caller, key.id);
    vi.advanceTimersByTime(AUTH_CACHE_TTL_MS + 1);
    expect(await rejects(here.authenticate(secret))).toMatch(/revoked/);
  });

  it("reads the store once per TTL, not once per request", async () => {
    const keys = createServiceKeys(store, createClock(now));
    const { secret } = await keys.issue(false, { name: "f", scopes: ["merchants"] });
    const findOne = vi.spyOn(store, "findOne");
    try {
      for (let i = 0; i < 5; i++) await keys.authenticate(secret);
      expect(findOne).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(AUTH_CACHE_TTL_MS + 1);
      await keys.authenticate(secret);
      expect(findOne).toHaveBeenCalledTimes(2);
    } finally {
      findOne.mockRestore();
    }
  });

  it("never caches an unknown secret", async () => {
    const keys = createServiceKeys(store, createClock(now));
    const findOne = vi.spyOn(store, "findOne");
    try {
      const unknown = `key_test_${"x".repeat(32)}`;
      await rejects(keys.authenticate(unknown));
      await rejects(keys.authenticate(unknown));
      // Two lookups each time (current secret, then previous secret).
      expect(findOne).toHaveBeenCalledTimes(4);
    } finally {
      findOne.mockRestore();
    }
  });

  it("records last use at most once a minute, however many requests share the cached record", async () => {
    const keys = createServiceKeys(store, createClock(now));
    const { key, secret } = await keys.issue(false, { name: "g", scopes: ["merchants"] });
    const update = vi.spyOn(store, "update");
    try {
      await Promise.all(
        Array.from({ length: 5 }, async () => {
          const k = await keys.authenticate(secret);
          await keys.touch(k);
        }),
      );
      expect(update).toHaveBeenCalledTimes(1);
      expect((await store.get("service_keys", key.id))?.last_used_at).not.toBeNull();
      advance(61);
      await keys.touch(await keys.authenticate(secret));
      expect(update).toHaveBeenCalledTimes(2);
    } finally {
      update.mockRestore();
    }
  });
});

describe("service key events", () => {
  it("records created, rotated and revoked, never with a secret or digest", async () => {
    const { testDomain } = await import("../../../test-support/domain.ts");
    const { domain, caller, store } = testDomain();
    const { key, secret } = await domain.serviceKeys.create(caller(), { name: "backend", scopes: ["charges"] });
    const rotated = await domain.serviceKeys.rotate(caller(), key.id, 3600);
    await domain.serviceKeys.revoke(caller(), key.id);
    await domain.serviceKeys.revoke(caller(), key.id); // revoking twice is a no-op: no second event
    const events = (await store.findAll("events", {})).filter((e) => e.type.startsWith("service_key."));
    expect(events.map((e) => e.type)).toEqual(["service_key.revoked", "service_key.rotated", "service_key.created"]);
    expect(events[2]?.payload).toEqual({ key_id: key.id, name: "backend", prefix: key.prefix, scopes: ["charges"] });
    expect(events[1]?.payload).toMatchObject({
      prefix: rotated.key.prefix,
      previous_expires_at: rotated.key.previous_expires_at,
    });
    const text = JSON.stringify(events);
    for (const hidden of [secret, rotated.secret, key.secret_hash, rotated.key.secret_hash])
      expect(text).not.toContain(hidden);
  });
});

describe("the first start's sandbox key", () => {
  it("is made once per store, even by two instances that both saw an empty store", async () => {
    const shared = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    // The second instance read "no key yet" before the first committed: its `none()` look-up is
    // answered from before, so only the claim of the settings record can stop it.
    const stale = new Proxy(shared, {
      get(target, prop, receiver) {
        if (prop === "findAll") return async () => [];
        return Reflect.get(target, prop, receiver);
      },
    });
    const first = createServiceKeys(shared, createClock(now));
    const second = createServiceKeys(stale, createClock(now));
    const made = await first.bootstrap();
    expect(made?.secret).toMatch(/^key_test_[0-9A-Za-z]{32}$/);
    expect(made?.key.scopes).toEqual(["*"]);
    expect(await second.bootstrap()).toBeNull();
    expect(await shared.findAll("service_keys", {})).toHaveLength(1);
    expect(await shared.get("settings", BOOTSTRAP_SETTING)).toMatchObject({ value: made?.key.id });
    // A later start on the same store makes none either.
    expect(await first.bootstrap()).toBeNull();
    await shared.close();
  });

  it("is not made on a store that already has a key (one made by the CLI, or before this record existed)", async () => {
    const other = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    const keys = createServiceKeys(other, createClock(now));
    await keys.issue(true, { name: "live key from the CLI", scopes: ["charges"] });
    expect(await keys.bootstrap()).toBeNull();
    expect(await other.get("settings", BOOTSTRAP_SETTING)).toBeNull();
    await other.close();
  });
});
