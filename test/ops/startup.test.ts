import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { childEnv, type Exit, linesOf, ROOT, type ServerProcess, spawnServer } from "../support/process.ts";

// What an operator sees when `npm start` cannot start (docs/operating.md 'Operating the server'): one line on stderr
// that names the setting to change, a non-zero exit, no stack trace; and a first start that fails never costs
// the one-time sandbox key: the key is made only once the port is bound, and only once per store, however
// many instances start together.

const SECRET = /key_test_[0-9A-Za-z]{32}/g;
const tmp = mkdtempSync(join(tmpdir(), "payments-startup-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(tmp, `data-${++dirs}`);

const asRoot = process.getuid?.() === 0;

/**
 * Spawn options that run the server as nobody (for tests run as root, who may write anywhere). Nobody
 * must be able to reach the checkout's code (a clone inside `mktemp -d`, mode 0700, is out of its reach).
 */
function nobody() {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  for (let dir = repo; ; dir = dirname(dir)) {
    const othersMayEnter = (statSync(dir).mode & 0o001) !== 0;
    expect(othersMayEnter, `${dir} must be searchable by other users to run the server as nobody (chmod o+x)`).toBe(
      true,
    );
    if (dir === dirname(dir)) break;
  }
  return { uid: 65534, gid: 65534 };
}

/** Asserts the failure shape every start-up error must have, and returns its one line. */
async function failsWithOneLine(server: ServerProcess): Promise<string> {
  const exit: Exit = await server.exited;
  expect(exit.code, server.stderr()).not.toBe(0);
  expect(exit.code).not.toBeNull();
  const lines = linesOf(server.stderr());
  expect(lines, server.stderr()).toHaveLength(1);
  const line = lines[0] ?? "";
  expect(line).not.toMatch(/^\s+at |Error:|TypeError/);
  // Nothing was made: no key printed.
  expect(server.stdout()).not.toMatch(SECRET);
  return line;
}

async function listMerchants(url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/v1/merchants`, { headers: { authorization: `Bearer ${key}` } });
  await res.body?.cancel();
  return res.status;
}

function occupyPort(): Promise<{ blocker: Server; port: number }> {
  return new Promise((done) => {
    const blocker = createServer();
    blocker.listen(0, "127.0.0.1", () => {
      const address = blocker.address();
      done({ blocker, port: typeof address === "object" && address ? address.port : 0 });
    });
  });
}

// Each case starts one or two tsx processes (a second or two each, more on a busy machine).
describe("npm start on a bad setting", { timeout: 60_000 }, () => {
  it("treats an empty PORT as a configuration error, not as 'any free port'", async () => {
    const server = spawnServer({ PORT: "", DATA_DIR: freshDir() });
    const exit = await server.exited;
    expect(exit.code).not.toBe(0);
    expect(server.stderr()).toMatch(/PORT: must be a whole number/);
    expect(server.stdout()).not.toMatch(SECRET);
  });

  it("ends `npm start` with the setting at fault, not npm's own error lines after it", async () => {
    // The root script runs start.mjs itself: a script run in a workspace (`npm run start -w …`) had npm
    // print about six `npm error` lines after the server's one line.
    const child = spawn("npm", ["start"], {
      cwd: ROOT,
      env: childEnv({ PORT: "", DATA_DIR: freshDir() }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
    });
    child.stdout.resume();
    const code = await new Promise<number | null>((done) => child.once("exit", (c) => done(c)));
    expect(code).not.toBe(0);
    const lines = linesOf(err);
    expect(
      lines.filter((line) => line.startsWith("npm ")),
      err,
    ).toEqual([]);
    expect(lines.at(-1), err).toMatch(/^\s*PORT: must be a whole number/);
  });

  it("names DATA_DIR when it is a file", async () => {
    const file = join(tmp, "not-a-directory");
    writeFileSync(file, "x");
    const line = await failsWithOneLine(spawnServer({ PORT: "0", DATA_DIR: file }));
    expect(line).toMatch(/^DATA_DIR: /);
    expect(line).toContain(file);
    expect(line).toMatch(/is a file/);
  });

  it("names DATA_DIR when it cannot be written", async () => {
    const dataDir = freshDir();
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o555);
    // root writes anywhere: run the server as an unprivileged user then (nobody).
    const line = await failsWithOneLine(spawnServer({ PORT: "0", DATA_DIR: dataDir }, asRoot ? nobody() : {}));
    expect(line).toMatch(/^DATA_DIR: /);
    expect(line).toMatch(/cannot be written/);
  });

  it("refuses a DATA_DIR shared with other users on purpose (the sticky bit, as /tmp)", async () => {
    const dataDir = freshDir();
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o1777);
    const line = await failsWithOneLine(spawnServer({ PORT: "0", DATA_DIR: dataDir }));
    expect(line).toBe(
      `DATA_DIR: ${dataDir} is a directory shared with other users (mode 1777, sticky): give the server a directory of its own, such as a new one inside it`,
    );
    expect(statSync(dataDir).mode & 0o7777).toBe(0o1777);
  });

  // Another user's directory needs root to make; the server then runs as nobody.
  it.runIf(asRoot)("refuses an open DATA_DIR it cannot make owner-only, because another user owns it", async () => {
    // Nobody must reach the directory (this suite's temporary folder is made 0700): let others through.
    chmodSync(tmp, 0o711);
    const dataDir = freshDir();
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o777);
    const line = await failsWithOneLine(spawnServer({ PORT: "0", DATA_DIR: dataDir }, nobody()));
    expect(line).toMatch(
      /^DATA_DIR: .* is open to other users \(mode 777\) and this process cannot make it owner-only \(it is not the directory's owner\)/,
    );
    expect(statSync(dataDir).mode & 0o777).toBe(0o777);
  });

  it("names MONGODB_URI when MongoDB cannot be reached, without echoing the URI", async () => {
    const { blocker, port } = await occupyPort();
    // A port that is certainly closed: taken, then released.
    await new Promise((done) => blocker.close(done));
    const uri = `mongodb://operator:s3cret-password@127.0.0.1:${port}/?serverSelectionTimeoutMS=500&directConnection=true`;
    const line = await failsWithOneLine(spawnServer({ PORT: "0", MONGODB_URI: uri }));
    expect(line).toMatch(/^MONGODB_URI: /);
    expect(line).not.toContain("s3cret-password");
  });

  it("gives up on an unreachable replica set by itself, with the likely cause, when the URI sets no timeout", async () => {
    const { blocker, port } = await occupyPort();
    await new Promise((done) => blocker.close(done));
    // The URI of docs/operating.md 'Running on MongoDB', pointed where nothing listens: no serverSelectionTimeoutMS,
    // so the store's own start-up bound (store/mongodb.ts, START_TIMEOUT_MS) ends the wait, not the
    // driver's 30 seconds.
    const uri = `mongodb://operator:s3cret-password@127.0.0.1:${port}/?replicaSet=rs0`;
    const line = await failsWithOneLine(spawnServer({ PORT: "0", MONGODB_URI: uri }));
    expect(line).toBe(
      `MONGODB_URI: cannot use MongoDB: cannot connect to 127.0.0.1:${port} (connection refused, ECONNREFUSED): start mongod there, or correct the host and port in MONGODB_URI`,
    );
  });
});

describe("DATA_DIR is owner-only", { timeout: 60_000 }, () => {
  it("narrows an existing directory that others may read to its owner, says so, and starts", async () => {
    const dataDir = freshDir();
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const server = spawnServer({ PORT: "0", DATA_DIR: dataDir });
    try {
      await server.listening;
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      const warning = linesOf(server.stdout())
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.msg === "DATA_DIR was open to other users: made it owner-only");
      expect(warning).toMatchObject({ data_dir: dataDir, was: "755", now: "700" });
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
    // The files in it are owner-only too.
    for (const file of ["payments.sqlite", "vault-keys.json"]) {
      expect(statSync(join(dataDir, file)).mode & 0o077, file).toBe(0);
    }
  });

  it("makes a new directory owner-only", async () => {
    const dataDir = join(freshDir(), "nested", "data");
    const server = spawnServer({ PORT: "0", DATA_DIR: dataDir });
    try {
      await server.listening;
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(server.stdout()).not.toMatch(/made it owner-only/);
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
  });
});

// Start, shutdown, a busy port and the first start's key, as one server process (WORKERS=1) and as a
// cluster primary with two workers (WORKERS=2, docs/operating.md "Production"; one per core is the
// production default), where the workers race for the port and for the key.
describe.each([1, 2])("npm start with WORKERS=%i", { timeout: 90_000 }, (workers) => {
  const start = (env: Record<string, string>) => spawnServer({ ...env, WORKERS: String(workers) });

  it("answers a busy port with one line naming PORT, the next start shows the sandbox key, and SIGTERM stops it with 0", async () => {
    const dataDir = freshDir();
    const { blocker, port } = await occupyPort();
    try {
      const line = await failsWithOneLine(start({ PORT: String(port), DATA_DIR: dataDir }));
      expect(line).toMatch(/^PORT: /);
      expect(line).toContain(String(port));
    } finally {
      await new Promise((done) => blocker.close(done));
    }

    const next = start({ PORT: "0", DATA_DIR: dataDir });
    try {
      const url = await next.listening;
      // The key is written after the log line, possibly in a later chunk of the pipe.
      await expect.poll(() => next.stdout(), { timeout: 10_000 }).toMatch(SECRET);
      const secret = next.stdout().match(SECRET)?.[0] ?? "";
      expect(await listMerchants(url, secret)).toBe(200);
    } finally {
      const exit = await next.stop();
      expect(exit.code, next.stdout() + next.stderr()).toBe(0);
    }

    // A third start on the same data makes no key and prints none (read once it has exited).
    const third = start({ PORT: "0", DATA_DIR: dataDir });
    await third.listening;
    expect((await third.stop()).code).toBe(0);
    expect(third.stdout()).toMatch(/payments API listening/);
    expect(third.stdout()).not.toMatch(SECRET);
  });

  it("makes exactly one sandbox key when two instances start together on an empty store", async () => {
    const dataDir = freshDir();
    const servers = [start({ PORT: "0", DATA_DIR: dataDir }), start({ PORT: "0", DATA_DIR: dataDir })];
    const urls = await Promise.all(servers.map((s) => s.listening));
    try {
      await expect.poll(() => servers.map((s) => s.stdout()).join("\n"), { timeout: 10_000 }).toMatch(SECRET);
      const secret =
        servers
          .map((s) => s.stdout())
          .join("\n")
          .match(SECRET)?.[0] ?? "";
      // Both instances share the store, so the one key works on either.
      for (const url of urls) expect(await listMerchants(url, secret)).toBe(200);
    } finally {
      const exits = await Promise.all(servers.map((s) => s.stop()));
      expect(exits.map((e) => e.code)).toEqual([0, 0]);
    }
    // Read once both have exited: exactly one key between them.
    const secrets = servers.flatMap((s) => [...new Set(s.stdout().match(SECRET) ?? [])]);
    expect(secrets).toHaveLength(1);
  });
});
