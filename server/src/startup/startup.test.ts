import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { createLogger } from "../logger.ts";
import { type Opened, STARTUP_STEPS, startServer } from "../server.ts";
import { StartupError } from "../startup-error.ts";

// The composition root's lifecycle (issue 29, "Composition root"): a start that fails at any step closes,
// in reverse order, everything the steps before it opened (the store, the listeners, the schedules), and
// the start-up error names the setting actually at fault.

const logger = createLogger("silent");
const key = (fill: number) => Buffer.alloc(32, fill).toString("base64");
const config = (env: Record<string, string> = {}) =>
  loadConfig({ DATA_DIR: ":memory:", PORT: "0", METRICS_PORT: "0", LOG_LEVEL: "silent", ...env });

/** Whether something accepts TCP connections at `url`'s host and port. */
function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      done(true);
    });
    socket.once("error", () => done(false));
  });
}

/** Asserts that everything `opened` holds has been closed. */
async function expectAllClosed(opened: Opened): Promise<void> {
  if (opened.store) await expect(opened.store.get("merchants", "mer_none")).rejects.toThrow();
  if (opened.server) expect(opened.server.listening).toBe(false);
  if (opened.metricsUrl) expect(await accepts(opened.metricsUrl)).toBe(false);
  for (const job of opened.jobs ?? []) expect(job.active, job.name).toBe(false);
}

describe("startServer's lifecycle", () => {
  it.each(STARTUP_STEPS)("closes everything opened before a failure after the %s step", async (failing) => {
    const injected = new Error(`injected after ${failing}`);
    let opened: Opened = {};
    const seen: string[] = [];
    const start = startServer({
      config: config(),
      logger,
      afterStep: (step, parts) => {
        seen.push(step);
        opened = { ...parts };
        if (step === failing) throw injected;
      },
    });
    await expect(start).rejects.toBe(injected);
    expect(seen).toEqual(STARTUP_STEPS.slice(0, STARTUP_STEPS.indexOf(failing) + 1));
    // What each step opens was open when it failed, and is closed now.
    expect(opened.store).toBeDefined();
    if (STARTUP_STEPS.indexOf(failing) >= STARTUP_STEPS.indexOf("listen")) expect(opened.server).toBeDefined();
    if (STARTUP_STEPS.indexOf(failing) >= STARTUP_STEPS.indexOf("metrics")) expect(opened.metricsUrl).toBeDefined();
    if (STARTUP_STEPS.indexOf(failing) >= STARTUP_STEPS.indexOf("jobs")) expect(opened.jobs?.length).toBeGreaterThan(0);
    await expectAllClosed(opened);
  });

  it("closes the same on a graceful close after a successful start", async () => {
    let opened: Opened = {};
    const running = await startServer({
      config: config(),
      logger,
      afterStep: (_, parts) => {
        opened = parts;
      },
    });
    expect(running.server.listening).toBe(true);
    expect(running.metricsUrl && (await accepts(running.metricsUrl))).toBe(true);
    await running.close();
    await expectAllClosed(opened);
  });

  it("closes what was opened when the port is taken, and names PORT", async () => {
    const first = await startServer({ config: config(), logger });
    try {
      const { port } = new URL(first.url);
      let opened: Opened = {};
      const start = startServer({
        config: config({ PORT: port }),
        logger,
        afterStep: (_, p) => {
          opened = p;
        },
      });
      await expect(start).rejects.toThrow(/^PORT: .* is already in use/);
      expect(opened.store).toBeDefined();
      await expectAllClosed(opened);
    } finally {
      await first.close();
    }
  });
});

describe("the setting a start-up error names", () => {
  async function failure(env: Record<string, string>, afterStep?: () => void): Promise<unknown> {
    let opened: Opened = {};
    const err = await startServer({
      config: config(env),
      logger,
      afterStep: (step, parts) => {
        opened = parts;
        if (step === "domain") afterStep?.();
      },
    }).then(
      () => new Error("started"),
      (e: unknown) => e,
    );
    await expectAllClosed(opened);
    return err;
  }

  it("names VAULT_MASTER_KEY when the master key does not decode", async () => {
    const err = await failure({ VAULT_MASTER_KEY: "short", VAULT_FINGERPRINT_KEY: key(2) });
    expect(err).toBeInstanceOf(StartupError);
    expect((err as StartupError).setting).toBe("VAULT_MASTER_KEY");
  });

  it("names VAULT_FINGERPRINT_KEY, not VAULT_MASTER_KEY, when the fingerprint key is at fault", async () => {
    const bad = await failure({ VAULT_MASTER_KEY: key(1), VAULT_FINGERPRINT_KEY: "short" });
    expect((bad as StartupError).setting).toBe("VAULT_FINGERPRINT_KEY");
    expect((bad as Error).message).toMatch(/^VAULT_FINGERPRINT_KEY: The vault fingerprint key/);
    const same = await failure({ VAULT_MASTER_KEY: key(1), VAULT_FINGERPRINT_KEY: key(1) });
    expect((same as StartupError).setting).toBe("VAULT_FINGERPRINT_KEY");
    expect((same as Error).message).toMatch(/must be two different keys/);
  });

  it("blames no vault setting for a failure that is not the keys', even with the keys set", async () => {
    const bug = new TypeError("a bug in the wiring");
    const err = await failure({ VAULT_MASTER_KEY: key(1), VAULT_FINGERPRINT_KEY: key(2) }, () => {
      throw bug;
    });
    expect(err).toBe(bug);
  });
});
