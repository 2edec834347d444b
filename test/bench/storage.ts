// Where the bytes of a charge go on SQLite (issue 36): a server on a fresh DATA_DIR takes CHARGES
// captured card charges (one merchant, one token, as the storage-growth suite sends them), then every
// table's and index's growth is read from SQLite's dbstat table: bytes of pages (what the disk holds)
// and bytes of payload (what the rows hold; the rest is page slack and headers), per charge.
// `npm run bench:storage` (CHARGES=2000 by default); not a timing: it runs on a busy machine too.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unwrap } from "@payments/client";
import Database from "better-sqlite3";
import { clientFor, createMerchant, createToken } from "../e2e/fixtures.ts";
import { startTestServer } from "../support/server.ts";

const CHARGES = Number(process.env.CHARGES ?? 2000);
const CONCURRENCY = 20;

interface Share {
  pages: number;
  payload: number;
  rows: number;
}

function measure(db: Database.Database): Map<string, Share> {
  const stat = db.prepare("SELECT name, pgsize, payload FROM dbstat WHERE aggregate = TRUE").all() as {
    name: string;
    pgsize: number;
    payload: number;
  }[];
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
  );
  const out = new Map<string, Share>();
  for (const row of stat) {
    const rows = tables.has(row.name)
      ? (db.prepare(`SELECT COUNT(*) AS n FROM "${row.name}"`).get() as { n: number }).n
      : 0;
    out.set(row.name, { pages: row.pgsize, payload: row.payload, rows });
  }
  return out;
}

/** Polls until `ready` (the request log is written after each answer, off the request path). */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; !ready(); i++) {
    if (i > 600) throw new Error("the request log was not written within a minute");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const dir = mkdtempSync(join(tmpdir(), "payments-storage-"));
const server = await startTestServer({ DATA_DIR: dir });
try {
  const client = clientFor(server, server.sandboxKey);
  const merchant = await createMerchant(client, "Storage Goods");
  const token = await createToken(client);
  const db = new Database(join(dir, "payments.sqlite"), { readonly: true, fileMustExist: true });
  const logged = () => (db.prepare("SELECT COUNT(*) AS n FROM request_log").get() as { n: number }).n;
  await until(() => logged() > 0);
  const rowsBefore = logged();
  const before = measure(db);
  let next = 0;
  const worker = async () => {
    while (next < CHARGES) {
      next++;
      unwrap(
        await client.POST("/v1/charges", {
          body: {
            merchant_id: merchant.id,
            amount: 1000,
            currency: "USD",
            payment_method: { type: "card", token: token.id },
          },
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await until(() => logged() >= rowsBefore + CHARGES);
  const after = measure(db);
  const lines: [string, number, number, number][] = [];
  for (const [name, a] of after) {
    const b = before.get(name) ?? { pages: 0, payload: 0, rows: 0 };
    const grew: [string, number, number, number] = [
      name,
      (a.pages - b.pages) / CHARGES,
      (a.payload - b.payload) / CHARGES,
      (a.rows - b.rows) / CHARGES,
    ];
    if (grew[1] !== 0 || grew[2] !== 0) lines.push(grew);
  }
  lines.sort((x, y) => y[1] - x[1]);
  const total = lines.reduce((sum, l) => sum + l[1], 0);
  const payload = lines.reduce((sum, l) => sum + l[2], 0);
  console.log(`${CHARGES} charges: ${total.toFixed(0)} bytes of pages per charge, ${payload.toFixed(0)} of payload`);
  console.log(
    ["table or index".padEnd(62), "pages B".padStart(8), "payload B".padStart(10), "rows".padStart(6)].join(""),
  );
  for (const [name, pages, load, rows] of lines) {
    console.log(
      [
        name.padEnd(62),
        pages.toFixed(0).padStart(8),
        load.toFixed(0).padStart(10),
        rows ? rows.toFixed(2).padStart(6) : "",
      ].join(""),
    );
  }
  if (process.env.STORAGE_SAMPLES) {
    for (const [name, , , rows] of lines) {
      if (!rows) continue;
      const sample = db.prepare(`SELECT * FROM "${name}" ORDER BY rowid DESC LIMIT 1`).get();
      console.log(`\n${name}: ${JSON.stringify(sample)}`);
    }
  }
  db.close();
} finally {
  await server.close();
  if (process.env.STORAGE_KEEP) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
