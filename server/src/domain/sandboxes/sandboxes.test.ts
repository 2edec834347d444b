import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../store/sqlite.ts";
import { COLLECTIONS, type Docs } from "../areas.ts";
import type { Caller } from "../kernel/caller.ts";
import { createClock } from "../kernel/clock.ts";
import { DomainError } from "../kernel/errors.ts";
import { createServiceKeys, isWellFormedSecret } from "../service-keys/service-keys.ts";
import { parseVaultKeys } from "../vault/keys.ts";
import { createSandboxes, KEY_TAG_LENGTH, type SandboxHost, type SandboxIdentity } from "./sandboxes.ts";

// The sandboxes area (spec/resources/sandboxes.tsp) against a host that records what it is asked to do:
// the stores themselves are server/src/sandboxes/host.ts's, tested end to end in test/e2e/sandboxes.test.ts.

const keys = () =>
  parseVaultKeys({ masterKey: randomBytes(32).toString("base64"), fingerprintKey: randomBytes(32).toString("base64") });

const caller = (livemode = false): Caller => ({
  keyId: "kid_test",
  livemode,
  scopes: ["*"],
  keyPrefix: "key_test_abcd",
  requestId: "req_test",
});

function setup(limit = 5, where: { inside?: string; noHost?: boolean } = {}) {
  const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  const clock = createClock(() => new Date("2026-11-21T10:00:00Z"));
  const provisioned: SandboxIdentity[] = [];
  const erased: string[] = [];
  const host: SandboxHost = {
    limit,
    async provision(identity, name) {
      provisioned.push(identity);
      // The key a sandbox's own service keys would make: its secret ends with the sandbox's tag.
      return createServiceKeys(store, clock, identity.keyTag).issue(false, { name, scopes: ["*"] });
    },
    async erase(id) {
      erased.push(id);
    },
  };
  const accountKeys = keys();
  const sandboxes = createSandboxes(
    { store, clock, vaultKeys: accountKeys },
    {
      ...(where.noHost ? {} : { sandboxHost: host }),
      ...(where.inside ? { sandbox: { id: where.inside } } : {}),
    },
  );
  return { store, sandboxes, provisioned, erased, accountKeys };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "none",
    (err: unknown) => (err instanceof DomainError ? err.code : String(err)),
  );

describe("sandboxes", () => {
  it("creates a sandbox with its own vault keys, sealed in the account's record, and a key ending with its tag", async () => {
    const { sandboxes, store, provisioned, accountKeys } = setup();
    const made = await sandboxes.create(caller(), { name: "CI job" });
    expect(made.sandbox.id).toMatch(/^sbx_[0-9A-Za-z]{24}$/);
    expect(made.key.secret.endsWith(made.sandbox.key_tag)).toBe(true);
    expect(made.sandbox.key_tag).toHaveLength(KEY_TAG_LENGTH);
    expect(isWellFormedSecret(made.key.secret)).toBe(true);
    const identity = await sandboxes.byTag(made.sandbox.key_tag);
    expect(identity?.id).toBe(made.sandbox.id);
    // The keys the host opened the store with are the ones the record unseals, and not the account's.
    expect(identity?.vaultKeys.kek.equals(provisioned[0]?.vaultKeys.kek ?? Buffer.alloc(0))).toBe(true);
    expect(identity?.vaultKeys.kek.equals(accountKeys.kek)).toBe(false);
    const stored = JSON.stringify(await store.get("sandboxes", made.sandbox.id));
    expect(stored).not.toContain(identity?.vaultKeys.kek.toString("base64"));
    // By id (the pages' routing), the same identity.
    const byId = await sandboxes.byId(made.sandbox.id);
    expect(byId?.keyTag).toBe(made.sandbox.key_tag);
    expect(byId?.vaultKeys.kek.equals(identity?.vaultKeys.kek ?? Buffer.alloc(0))).toBe(true);
  });

  it("refuses one more than the limit with sandbox_limit_reached, before provisioning anything", async () => {
    const { sandboxes, provisioned } = setup(1);
    await sandboxes.create(caller(), { name: "one" });
    expect(await codeOf(sandboxes.create(caller(true), { name: "two" }))).toBe("sandbox_limit_reached");
    expect(provisioned).toHaveLength(1);
  });

  it("erases what it provisioned when the place was taken meanwhile", async () => {
    const { sandboxes, provisioned, erased, store } = setup(1);
    const results = await Promise.all([
      codeOf(sandboxes.create(caller(), { name: "racer 1" })),
      codeOf(sandboxes.create(caller(), { name: "racer 2" })),
    ]);
    expect(results.sort()).toEqual(["none", "sandbox_limit_reached"]);
    expect(provisioned).toHaveLength(2);
    expect(erased).toHaveLength(1);
    expect(await store.findAll("sandboxes", {})).toHaveLength(1);
  });

  it("is managed by the environment that made it: the other one gets not_found", async () => {
    const { sandboxes } = setup();
    const { sandbox } = await sandboxes.create(caller(true), { name: "production's" });
    expect((await sandboxes.get(caller(true), sandbox.id)).id).toBe(sandbox.id);
    expect(await codeOf(sandboxes.get(caller(false), sandbox.id))).toBe("not_found");
    expect(await codeOf(sandboxes.remove(caller(false), sandbox.id))).toBe("not_found");
    expect((await sandboxes.list(caller(false), { limit: 10 })).data).toEqual([]);
  });

  it("deletes the record (and its sealed vault keys) and has the host erase the store", async () => {
    const { sandboxes, erased, store } = setup();
    const { sandbox } = await sandboxes.create(caller(), { name: "short-lived" });
    await sandboxes.remove(caller(), sandbox.id);
    expect(erased).toEqual([sandbox.id]);
    expect(await store.get("sandboxes", sandbox.id)).toBeNull();
    expect(await sandboxes.byTag(sandbox.key_tag)).toBeNull();
    expect(await sandboxes.byId(sandbox.id)).toBeNull();
    expect(await codeOf(sandboxes.get(caller(), sandbox.id))).toBe("not_found");
  });

  it("is forbidden to a sandbox's own keys, and where nothing hosts sandboxes", async () => {
    const inside = setup(5, { inside: "sbx_000000000000000000000000" });
    expect(await codeOf(inside.sandboxes.create(caller(), { name: "nested" }))).toBe("forbidden");
    expect(await codeOf(inside.sandboxes.list(caller(), { limit: 10 }))).toBe("forbidden");
    const none = setup(5, { noHost: true });
    expect(await codeOf(none.sandboxes.create(caller(), { name: "nowhere" }))).toBe("forbidden");
  });
});
