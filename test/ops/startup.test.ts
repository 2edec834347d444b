import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type Exit, linesOf, type ServerProcess, spawnServer } from "../support/process.ts";

// What an operator sees when `npm start` cannot start (docs/operating.md 'Operating the server'): one line on stderr
// that names the setting to change, a non-zero exit, no stack trace; and a first start that fails never costs
// the one-time sandbox key: the key is made only once the port is bound, and only once per store, however
// many instances start together.

const SECRET = /key_test_[0-9A-Za-z]{32}/g;
const tmp = mkdtempSync(join(tmpdir(), "payments-startup-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(tmp, `data-${++dirs}`);

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
  it("answers a busy port with one line naming PORT, and the next start still shows the sandbox key", async () => {
    const dataDir = freshDir();
    const { blocker, port } = await occupyPort();
    try {
      const busy = spawnServer({ PORT: String(port), DATA_DIR: dataDir });
      const line = await failsWithOneLine(busy);
      expect(line).toMatch(/^PORT: /);
      expect(line).toContain(String(port));
    } finally {
      await new Promise((done) => blocker.close(done));
    }

    const next = spawnServer({ PORT: "0", DATA_DIR: dataDir });
    try {
      const url = await next.listening;
      // The key is written after the log line, possibly in a later chunk of the pipe.
      await expect.poll(() => next.stdout(), { timeout: 10_000 }).toMatch(SECRET);
      const secret = next.stdout().match(SECRET)?.[0] ?? "";
      expect(await listMerchants(url, secret)).toBe(200);
    } finally {
      expect((await next.stop()).code).toBe(0);
    }

    // A third start on the same data makes no key and prints none (read once it has exited).
    const third = spawnServer({ PORT: "0", DATA_DIR: dataDir });
    await third.listening;
    expect((await third.stop()).code).toBe(0);
    expect(third.stdout()).toMatch(/payments API listening/);
    expect(third.stdout()).not.toMatch(SECRET);
  });

  it("treats an empty PORT as a configuration error, not as 'any free port'", async () => {
    const server = spawnServer({ PORT: "", DATA_DIR: freshDir() });
    const exit = await server.exited;
    expect(exit.code).not.toBe(0);
    expect(server.stderr()).toMatch(/PORT: must be a whole number/);
    expect(server.stdout()).not.toMatch(SECRET);
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
    // root writes anywhere: run the server as an unprivileged user then (nobody), who must be able to
    // reach the checkout's code (a clone inside `mktemp -d`, mode 0700, is out of its reach).
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
      for (let dir = repo; ; dir = dirname(dir)) {
        const othersMayEnter = (statSync(dir).mode & 0o001) !== 0;
        expect(othersMayEnter, `${dir} must be searchable by other users to run the server as nobody (chmod o+x)`).toBe(
          true,
        );
        if (dir === dirname(dir)) break;
      }
    }
    const line = await failsWithOneLine(
      spawnServer({ PORT: "0", DATA_DIR: dataDir }, asRoot ? { uid: 65534, gid: 65534 } : {}),
    );
    expect(line).toMatch(/^DATA_DIR: /);
    expect(line).toMatch(/cannot be written/);
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

describe("first start", { timeout: 60_000 }, () => {
  it("makes exactly one sandbox key when two instances start together on an empty store", async () => {
    const dataDir = freshDir();
    const servers = [spawnServer({ PORT: "0", DATA_DIR: dataDir }), spawnServer({ PORT: "0", DATA_DIR: dataDir })];
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
      await Promise.all(servers.map((s) => s.stop()));
    }
    // Read once both have exited: exactly one key between them.
    const secrets = servers.flatMap((s) => [...new Set(s.stdout().match(SECRET) ?? [])]);
    expect(secrets).toHaveLength(1);
  });
});
