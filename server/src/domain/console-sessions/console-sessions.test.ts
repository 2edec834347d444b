import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { createClock } from "../kernel/clock.ts";
import { createServiceKeys } from "../service-keys/service-keys.ts";
import { createConsoleSessions, csrfTokenFor, isWellFormedToken, sessionDigest } from "./console-sessions.ts";

// Console sessions (docs/console.md "Console and API reference"): what the store keeps, and when a session ends.

describe("console sessions", () => {
  it("store only digests: the token, the CSRF token and the key appear nowhere in the record", async () => {
    const t = testDomain();
    const { secret } = await t.domain.serviceKeys.issue(false, { name: "console", scopes: ["*"] });
    const signedIn = await t.domain.consoleSessions.signIn(secret);
    const stored = await t.store.findAll("console_sessions", {}, 10);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.id).toBe(sessionDigest(signedIn.token));
    const text = JSON.stringify(stored);
    for (const clear of [signedIn.token, signedIn.csrfToken, secret]) expect(text).not.toContain(clear);
    expect(signedIn.csrfToken).toBe(csrfTokenFor(signedIn.token));
    expect(signedIn.csrfToken).not.toBe(signedIn.token);
  });

  it("refuse a key the API would refuse, with the API's error", async () => {
    const t = testDomain();
    await expect(t.domain.consoleSessions.signIn(`key_test_${"x".repeat(32)}`)).rejects.toMatchObject({
      code: "unauthorized",
    });
    await expect(t.domain.consoleSessions.signIn("not a key")).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("last the configured time, or until the key expires when that is sooner", async () => {
    const t = testDomain();
    const { secret } = await t.domain.serviceKeys.issue(false, { name: "a", scopes: ["*"] });
    const full = await t.domain.consoleSessions.signIn(secret);
    expect(full.lifetimeSeconds).toBe(3600);
    t.advance(3599);
    expect("key" in (await t.domain.consoleSessions.resolve(full.token))).toBe(true);
    t.advance(1);
    expect(await t.domain.consoleSessions.resolve(full.token)).toEqual({ refused: "the session expired" });
    // An expired session is gone, not only refused.
    expect(await t.store.get("console_sessions", sessionDigest(full.token))).toBeNull();

    const soon = new Date(t.now().getTime() + 600_000).toISOString();
    const expiring = await t.domain.serviceKeys.issue(false, { name: "b", scopes: ["*"], expires_at: soon });
    const short = await t.domain.consoleSessions.signIn(expiring.secret);
    expect(short.lifetimeSeconds).toBe(600);
  });

  it("end when the key is revoked, and when the signed-in secret's grace period ends", async () => {
    const t = testDomain();
    const caller = t.caller();
    const revoked = await t.domain.serviceKeys.issue(false, { name: "r", scopes: ["*"] });
    const a = await t.domain.consoleSessions.signIn(revoked.secret);
    await t.domain.serviceKeys.revoke(caller, revoked.key.id);
    expect(await t.domain.consoleSessions.resolve(a.token)).toEqual({ refused: "the key was revoked" });

    const rotated = await t.domain.serviceKeys.issue(false, { name: "g", scopes: ["*"] });
    const b = await t.domain.consoleSessions.signIn(rotated.secret);
    const next = await t.domain.serviceKeys.rotate(caller, rotated.key.id, 60);
    expect("key" in (await t.domain.consoleSessions.resolve(b.token))).toBe(true);
    // A session opened with the new secret outlives the old one's grace period.
    const c = await t.domain.consoleSessions.signIn(next.secret);
    t.advance(60);
    expect(await t.domain.consoleSessions.resolve(b.token)).toEqual({
      refused: "the secret that signed in was rotated out and its grace period has ended",
    });
    expect("key" in (await t.domain.consoleSessions.resolve(c.token))).toBe(true);
  });

  it("end at sign-out, and are swept once expired", async () => {
    const t = testDomain();
    const { secret } = await t.domain.serviceKeys.issue(false, { name: "s", scopes: ["*"] });
    const a = await t.domain.consoleSessions.signIn(secret);
    await t.domain.consoleSessions.signIn(secret);
    await t.domain.consoleSessions.signOut(a.token);
    expect(await t.domain.consoleSessions.resolve(a.token)).toEqual({
      refused: "no such session (signed out, or never signed in)",
    });
    t.advance(3601);
    expect(await t.domain.jobs.sweepConsoleSessions()).toBe(1);
    expect(await t.store.findAll("console_sessions", {}, 10)).toEqual([]);
  });

  it("in a sandbox on demand: say which sandbox, and end their tokens with its tag, as its keys' secrets do", async () => {
    const t = testDomain();
    const sandbox = { id: "sbx_4Kd8Lm2Nq6Rt1Vx5Zb9Cf3Hj", name: "QA: Ana", keyTag: "Tg5Rx8Qa" };
    // The sandbox's own store holds its keys and its sessions (server/src/sandboxes/host.ts).
    const keys = createServiceKeys(t.store, createClock(t.now), sandbox.keyTag);
    const sessions = createConsoleSessions({ store: t.store, now: t.now, serviceKeys: keys, ttlSeconds: 600, sandbox });
    expect(sessions.sandbox).toEqual({ id: sandbox.id, name: "QA: Ana" });
    const { secret } = await keys.issue(false, { name: "first", scopes: ["*"] });
    const signedIn = await sessions.signIn(secret);
    expect(isWellFormedToken(signedIn.token)).toBe(true);
    expect(signedIn.token.endsWith(sandbox.keyTag)).toBe(true);
    expect(await sessions.holds(signedIn.token)).toBe(true);
    // The account's sessions say no sandbox, and their tokens are random throughout.
    expect(t.domain.consoleSessions.sandbox).toBeNull();
    const other = `csess_${"A".repeat(35)}${sandbox.keyTag}`;
    expect(await sessions.holds(other)).toBe(false);
    await sessions.signOut(signedIn.token);
    expect(await sessions.holds(signedIn.token)).toBe(false);
  });

  it("recognise a token by its shape only: `csess_` and 43 letters and digits", () => {
    expect(isWellFormedToken(`csess_${"a1B".repeat(14)}c`)).toBe(true);
    for (const bad of [
      `csess_${"a".repeat(42)}`,
      `csess_${"a".repeat(44)}`,
      `csess_${"a".repeat(42)}-`,
      "key_test_x",
    ]) {
      expect(isWellFormedToken(bad), bad).toBe(false);
    }
  });
});
