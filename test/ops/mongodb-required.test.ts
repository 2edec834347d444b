import { execFile } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { checkStoreChoice } from "../support/mongodb.ts";
import { childEnv, ROOT, SERVER_DIR } from "../support/process.ts";

// A run asked to use MongoDB (MONGODB_URI set) uses it or fails saying why: it never skips to SQLite and
// passes (docs/operating.md 'Running on MongoDB'). Shown here against a loopback port where nothing listens; the
// GitHub workflow runs the same suites against a real replica set.

const run = promisify(execFile);

/** Runs a command to its end; resolves with its exit code and everything it wrote. */
async function outcome(command: string, args: string[], cwd: string, env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env: childEnv(env), maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: `${stdout}\n${stderr}` };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ""}\n${failed.stderr ?? ""}` };
  }
}

/** A loopback port that is certainly closed: taken, then released. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  await new Promise((done) => server.close(done));
  return typeof address === "object" && address ? address.port : 0;
}

/** A MONGODB_URI where nothing listens; serverSelectionTimeoutMS keeps the wait short. */
async function unreachable(): Promise<{ uri: string; address: string }> {
  const address = `127.0.0.1:${await closedPort()}`;
  return { uri: `mongodb://${address}/?replicaSet=rs0&serverSelectionTimeoutMS=500`, address };
}

describe("a run asked to use MongoDB", { timeout: 120_000 }, () => {
  it("stops before any test when MONGODB_URI cannot be used, with the server's reason", async () => {
    const { uri, address } = await unreachable();
    await expect(checkStoreChoice({ MONGODB_URI: uri })).rejects.toThrow(
      `MONGODB_URI is set, so the suites run on MongoDB, and it cannot be used: cannot connect to ${address} (connection refused, ECONNREFUSED)`,
    );
  });

  it("fails when REQUIRE_MONGODB is set without MONGODB_URI, and says so when it runs on SQLite", async () => {
    await expect(checkStoreChoice({ REQUIRE_MONGODB: "1" })).rejects.toThrow(/REQUIRE_MONGODB is set/);
    await expect(checkStoreChoice({})).resolves.toMatch(/run on SQLite: MONGODB_URI is not set/);
  });

  it("reaches every test task through turbo (strict environment mode passes on only what turbo.json lists), and is checked before the suites that use it", async () => {
    const { uri } = await unreachable();
    const turbo = resolve(ROOT, "node_modules/.bin/turbo");
    const env = { MONGODB_URI: uri, REQUIRE_MONGODB: "1", TURBO_TELEMETRY_DISABLED: "1" };
    const { code, output } = await outcome(turbo, ["run", "test", "--dry=json"], ROOT, env);
    // turbo's own summary is JSON; nothing else is printed with --dry=json.
    expect(code, output).toBe(0);
    const plan = JSON.parse(output.slice(output.indexOf("{"), output.lastIndexOf("}") + 1)) as {
      tasks: {
        taskId: string;
        task: string;
        dependencies: string[];
        environmentVariables: { passthrough: string[] | null };
      }[];
    };
    const tests = plan.tasks.filter((task) => task.task === "test" || task.task === "check:mongodb");
    expect(tests.map((task) => task.taskId)).toContain("@payments/server#test");
    expect(tests.map((task) => task.taskId)).toContain("@payments/tests#test");
    for (const task of tests) {
      const names = (task.environmentVariables.passthrough ?? []).map((entry) => entry.split("=")[0]);
      expect(names, task.taskId).toEqual(expect.arrayContaining(["MONGODB_URI", "REQUIRE_MONGODB"]));
    }
    // The suites that run on MongoDB wait for the check (support/mongodb.ts), which fails within seconds.
    for (const id of ["@payments/server#test", "@payments/tests#test"]) {
      expect(tests.find((task) => task.taskId === id)?.dependencies, id).toContain("@payments/tests#check:mongodb");
    }
  });

  it("fails the store conformance suite (instead of skipping it) when MONGODB_URI cannot be used", async () => {
    const { uri, address } = await unreachable();
    const vitest = resolve(ROOT, "node_modules/vitest/vitest.mjs");
    const args = [vitest, "run", "src/store/store.conformance.test.ts", "-t", "store conformance: mongodb"];
    const { code, output } = await outcome(process.execPath, args, SERVER_DIR, { MONGODB_URI: uri });
    expect(code, output).not.toBe(0);
    expect(output).toContain(`cannot connect to ${address} (connection refused, ECONNREFUSED)`);
  });

  it("stops the e2e suites before their first test when MONGODB_URI cannot be used", async () => {
    const { uri, address } = await unreachable();
    const vitest = resolve(ROOT, "node_modules/vitest/vitest.mjs");
    const args = [vitest, "run", "e2e/health.test.ts"];
    const { code, output } = await outcome(process.execPath, args, resolve(ROOT, "test"), { MONGODB_URI: uri });
    expect(code, output).not.toBe(0);
    expect(output).toContain(
      `MONGODB_URI is set, so the suites run on MongoDB, and it cannot be used: cannot connect to ${address}`,
    );
  });
});
