import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnServer } from "../support/process.ts";

// `npm start` reads the `.env` of the directory it was started from (npm's INIT_CWD), and the
// environment wins over the file (docs/operating.md "Configuration").

const dir = mkdtempSync(join(tmpdir(), "payments-env-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe(".env at start-up", { timeout: 60_000 }, () => {
  it("applies the file's settings, except those the environment sets", async () => {
    const fromFile = join(dir, "data-from-file");
    const fromEnv = join(dir, "data-from-env");
    // PORT=0 only comes from the file: without it the server would take the default 3000.
    writeFileSync(join(dir, ".env"), `# a comment\nPORT=0\nDATA_DIR=${fromFile}\nLOG_LEVEL=info\n`);
    const server = spawnServer({ INIT_CWD: dir, DATA_DIR: fromEnv });
    try {
      const url = await server.listening;
      expect(new URL(url).port).not.toBe("3000");
      const line = server
        .stdout()
        .split("\n")
        .find((l) => l.includes("payments API listening"));
      const logged = JSON.parse(line ?? "{}") as { storage?: string; env_file?: string };
      expect(logged.storage).toBe(`SQLite in ${fromEnv}`);
      expect(logged.env_file).toBe(join(dir, ".env"));
    } finally {
      await server.stop();
    }
  });

  it("refuses a bad value from the file like one from the environment, naming the setting", async () => {
    const bad = mkdtempSync(join(dir, "bad-"));
    writeFileSync(join(bad, ".env"), "PORT=eighty\n");
    const server = spawnServer({ INIT_CWD: bad, DATA_DIR: join(bad, "data") });
    const exit = await server.exited;
    expect(exit.code).toBe(1);
    expect(server.stderr()).toMatch(/PORT: must be a whole number/);
  });
});
