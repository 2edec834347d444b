import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { openStore } from "../server.ts";
import { txGuard } from "./common.ts";

// The transaction-misuse guard (common.ts, txGuard): on where mistakes are caught (development and
// tests), off in production where its AsyncLocalStorage would cost every promise a hook.

describe("txGuard", () => {
  it("refuses the outer store inside a running transaction, and allows it after", async () => {
    const guard = txGuard(true);
    const scope = { active: true };
    await guard.run(scope, async () => {
      await Promise.resolve();
      expect(() => guard.assertOutside()).toThrow(/inside its own transaction/);
    });
    scope.active = false;
    expect(() => guard.assertOutside()).not.toThrow();
  });

  it("checks nothing when disabled", async () => {
    const guard = txGuard(false);
    await guard.run({ active: true }, async () => {
      expect(() => guard.assertOutside()).not.toThrow();
    });
  });
});

const keys = { VAULT_MASTER_KEY: "a".repeat(64), VAULT_FINGERPRINT_KEY: "b".repeat(64) };

describe("the server's store", () => {
  it("guards transactions outside production", async () => {
    const store = await openStore(loadConfig({ NODE_ENV: "test", DATA_DIR: ":memory:" }));
    try {
      await store.transaction(async () => {
        await expect(store.get("merchants", "mch_x")).rejects.toThrow(/inside its own transaction/);
      });
    } finally {
      await store.close();
    }
  });

  it("runs without the guard in production: an outer call inside a transaction waits for it to end", async () => {
    const store = await openStore(loadConfig({ NODE_ENV: "production", DATA_DIR: ":memory:", ...keys }));
    try {
      let outer: Promise<unknown> | undefined;
      let settled = false;
      await store.transaction(async (tx) => {
        await tx.insert("settings", {
          id: "guard_check",
          livemode: false,
          created_at: "2026-11-01T00:00:00.000000Z",
          value: "x",
        });
        // Not refused: queued behind the transaction (a deadlock had fn awaited it, which is what the
        // guard exists to point out in development and tests).
        outer = store.get("settings", "guard_check").finally(() => {
          settled = true;
        });
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(settled).toBe(false);
      });
      await expect(outer).resolves.toMatchObject({ id: "guard_check" });
    } finally {
      await store.close();
    }
  });
});
