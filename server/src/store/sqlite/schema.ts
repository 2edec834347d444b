// The SQLite store's layout: one table per collection holding the document (encoded: what has a
// column of its own left out) plus, as real columns, the fields every query orders or partitions by
// (id, livemode, created_at) and every field an index names (the hot fields); and the schema's
// creation and upgrade at open. Timestamps in columns (created_at, and the hot fields a collection
// declares timestamps) are integers of microseconds (time.ts).

import type Database from "better-sqlite3";
import { type StoredDoc, storedDoc } from "../common.ts";
import type { BaseDoc, CollectionSpec, IndexCondition } from "../port.ts";
import { DEFLATE_FROM, docJson, pack, unpack } from "./compact.ts";
import { isStoredForm, timeColumn, timestampOf } from "./time.ts";

/** What a statement binds and a column holds (a BLOB: a deflated document, compact.ts). */
export type Param = string | number | bigint | Uint8Array | null;

/** The columns every table has for the fields every document has (port.ts, BaseDoc). */
export const SYSTEM_COLUMNS = new Set(["id", "livemode", "created_at"]);

/** The columns every table starts with (a hot field's come after them, untyped). */
const SYSTEM_COLUMNS_SQL =
  "id TEXT PRIMARY KEY, livemode INTEGER NOT NULL, created_at INTEGER NOT NULL, doc TEXT NOT NULL";

/** One collection's table: which fields have a column of their own (every field an index names, besides the system ones). */
export interface Table {
  name: string;
  /** Hot field → its column's quoted name. */
  hot: Map<string, string>;
  /** The hot fields whose column holds a timestamp as an integer (CollectionSpec.timestamps, time.ts). */
  timestamps: Set<string>;
  /** The columns a document is read from, in decode's order: the system fields', `doc`, each hot field's. */
  select: string;
  /** From how many characters of JSON a document is stored deflated (compact.ts, DEFLATE_FROM). */
  deflateFrom: number;
}

/**
 * The document as stored in the `doc` column: without what has a column of its own, so no byte is
 * kept twice (issue 36: a captured charge's dozen rows kept ~2,000 bytes twice). Left out are the
 * system fields, and each hot field whose value is a string or a finite number, which its column holds
 * exactly; a hot field holding anything else (a boolean, null, an object) stays in the document too,
 * since its column's value (1/0, NULL, JSON text) does not say which it was. A timestamp (created_at,
 * a hot field of `t.timestamps`) is left out only in the stored format, which its column's integer
 * gives back (time.ts); written otherwise (fewer decimals), its text stays. decode puts them back.
 * The JSON is then packed (compact.ts): deflated against the collection's dictionary when long enough.
 */
export function encode(t: Table, doc: BaseDoc): string | Buffer {
  const rest: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(doc)) {
    if (field === "id" || field === "livemode") continue;
    if (field === "created_at" || t.timestamps.has(field)) {
      if (!isStoredForm(value)) rest[field] = value;
      continue;
    }
    if (t.hot.has(field) && (typeof value === "string" || (typeof value === "number" && Number.isFinite(value))))
      continue;
    rest[field] = value;
  }
  return pack(t.name, JSON.stringify(rest), t.deflateFrom);
}

/**
 * The document from its row (the columns of Table.select, in order). The system fields come first, as
 * inserted; a hot field the document lacks is its column's value (a timestamp's as its text). A
 * document an earlier version wrote still holds every field, and one whose timestamp was not in the
 * stored format holds its text: the duplicates carry the values as written (JSON.parse keeps the last).
 */
export function decode(t: Table, row: Param[]): StoredDoc {
  const json = unpack(t.name, row[3]);
  const createdAt = row[2];
  if (typeof createdAt !== "number") throw new TypeError(`a row of ${t.name} has a created_at that is not an integer`);
  const doc = storedDoc(
    JSON.parse(
      `{"id":${JSON.stringify(row[0])},"livemode":${row[1] ? "true" : "false"},"created_at":"${timestampOf(createdAt)}"${
        json.length > 2 ? `,${json.slice(1)}` : "}"
      }`,
    ),
  );
  let i = 4;
  for (const field of t.hot.keys()) {
    const value = row[i++];
    if (value === null || value === undefined || Object.hasOwn(doc, field)) continue;
    doc[field] = typeof value === "number" && t.timestamps.has(field) ? timestampOf(value) : value;
  }
  return doc;
}

/** A hot field's column: prefixed, so no field name can clash with id, livemode, created_at or doc. */
export function columnName(field: string): string {
  return `"f_${field}"`;
}

/**
 * What a hot field's column holds: exactly what json_extract gives for the field in the document, so
 * a condition on the column matches what the same condition on the document matches. Missing and null
 * are NULL, booleans 1 and 0, numbers and strings themselves, objects and arrays their JSON text.
 */
export function columnValue(value: unknown): Param {
  if (value === undefined || value === null) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number" || typeof value === "string") return value;
  return JSON.stringify(value);
}

/**
 * The column value of a document's field in table `t`: a timestamp's integer (time.ts; null stays
 * NULL), any other field's columnValue. The integer is bound as a bigint: a hot field's column has no
 * type, and would keep a number beyond 32 bits as a REAL (the same 8 bytes, but not what it is).
 */
export function columnOf(t: Table, field: string, value: unknown): Param {
  if (field === "created_at" || t.timestamps.has(field))
    return value === undefined || value === null ? null : BigInt(timeColumn(field, value));
  return columnValue(value);
}

/** Each collection's hot fields (field → column) and its Table. */
export function layoutOf(
  specs: Record<string, CollectionSpec>,
  deflateFrom = DEFLATE_FROM,
): {
  hotFields: Map<string, Map<string, string>>;
  tables: Map<string, Table>;
} {
  const hotFields = new Map<string, Map<string, string>>();
  for (const [name, spec] of Object.entries(specs)) {
    const hot = new Map<string, string>();
    for (const index of spec.indexes) {
      for (const field of [...index.fields, ...Object.keys(index.where ?? {})])
        if (!SYSTEM_COLUMNS.has(field)) hot.set(field, columnName(field));
    }
    hotFields.set(name, hot);
  }
  const tables = new Map<string, Table>();
  for (const [name, hot] of hotFields)
    tables.set(name, {
      name,
      hot,
      // A declared timestamp no index names has no column: it stays text in the document.
      timestamps: new Set((specs[name]?.timestamps ?? []).filter((field) => hot.has(field))),
      select: ["id", "livemode", "created_at", "doc", ...hot.values()].join(", "),
      deflateFrom,
    });
  return { hotFields, tables };
}

/**
 * The field a sparse index leaves null out by (IndexSpec.sparse): its last, before the listing order
 * (`created_at`, `id`) it may end in, which every document has.
 */
export function sparseField(fields: string[]): string {
  let end = fields.length;
  if (fields[end - 1] === "id") end--;
  if (fields[end - 1] === "created_at") end--;
  const field = fields[end - 1];
  if (field === undefined) throw new TypeError(`a sparse index on (${fields.join(", ")}) names no field to leave out`);
  return field;
}

/** A partial index's term for one `where` entry (IndexSpec.where): booleans as 1/0, a bound as itself. */
function conditionSql(column: string, value: IndexCondition): string {
  if (value === null) return `${column} IS NULL`;
  if (typeof value === "boolean") return `${column} = ${value ? 1 : 0}`;
  if (!Number.isFinite(value.$gte)) throw new TypeError(`an index bound on ${column} must be a finite number`);
  return `${column} >= ${value.$gte}`;
}

/**
 * Creates each collection's table, its hot fields' columns and its indexes, and brings a database an
 * earlier version made up to date, in one transaction (several processes may open one file at once):
 * - a hot field without its column (a new index, or a database from before hot columns) gets one,
 *   filled from the documents;
 * - an index of this adapter's naming that the spec no longer asks for, or asks for differently, is
 *   dropped: every index costs every write. A column no index names any more is dropped too, once the
 *   values the documents left out of themselves (encode) are back in them; An index over the document (json_extract) is what versions
 *   before hot columns made, and such a version may have written documents since their columns were
 *   filled, so the columns are filled again then.
 * - timestamps held as text (created_at, a hot field newly declared a timestamp) become integers
 *   (upgradeTimestamps).
 * Returns, per unique index, the clash SQLite reports ("table.column, …") → the fields it covers.
 */
export function createSchema(
  db: Database.Database,
  specs: Record<string, CollectionSpec>,
  tables: Map<string, Table>,
): Map<string, string> {
  registerTimeFunctions(db);
  const uniqueFields = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    const hot = tables.get(name)?.hot ?? new Map<string, string>();
    const hotColumns = [...hot.values()].map((column) => `, ${column}`).join("");
    db.exec(`CREATE TABLE IF NOT EXISTS "${name}" (${SYSTEM_COLUMNS_SQL}${hotColumns})`);
    // cast: better-sqlite3 types a pragma's rows as unknown; table_info's are documented (cid, name, type, …)
    const present = new Set((db.pragma(`table_info("${name}")`) as { name: string }[]).map((c) => `"${c.name}"`));
    const added = [...hot].filter(([, column]) => !present.has(column));
    for (const [, column] of added) db.exec(`ALTER TABLE "${name}" ADD COLUMN ${column}`);

    // Every field an index names is a system field or a hot one (layoutOf makes it so).
    const column = (field: string): string => {
      const found = SYSTEM_COLUMNS.has(field) ? field : hot.get(field);
      if (found === undefined) throw new TypeError(`${name}.${field} is indexed but has no column`);
      return found;
    };
    // The listing index, unless nothing lists the collection (port.ts, CollectionSpec): a store made
    // before has one, which the loop below drops as no longer wanted.
    const wanted = new Map<string, string>(
      spec.unlisted ? [] : [[`${name}__list`, `CREATE INDEX "${name}__list" ON "${name}" (livemode, created_at, id)`]],
    );
    for (const index of spec.indexes) {
      // The name encodes the fields; the SQL compared below catches any other change of definition.
      const indexName = `${name}__${index.unique ? "u" : "i"}__${index.fields.join("__")}`;
      const columns = index.fields.map(column);
      // A sparse index is partial: SQLite uses it for a query that constrains the column to a value. So
      // is one with `where`: SQLite uses it for a query that binds the same value (IndexSpec.where).
      const terms = [
        ...(index.sparse ? [`${column(sparseField(index.fields))} IS NOT NULL`] : []),
        ...Object.entries(index.where ?? {}).map(([field, value]) => conditionSql(column(field), value)),
      ];
      const partial = terms.length > 0 ? ` WHERE ${terms.join(" AND ")}` : "";
      wanted.set(
        indexName,
        `CREATE ${index.unique ? "UNIQUE " : ""}INDEX "${indexName}" ON "${name}" (${columns.join(", ")})${partial}`,
      );
      if (index.unique)
        uniqueFields.set(columns.map((c) => `${name}.${c.replace(/"/g, "")}`).join(", "), index.fields.join(","));
    }
    const existing = db
      .prepare<[string], { name: string; sql: string }>(
        `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`,
      )
      .all(name);
    let olderLayout = false;
    for (const index of existing) {
      if (!index.name.startsWith(`${name}__`) || wanted.get(index.name) === index.sql) continue;
      if (index.sql.includes("json_extract(doc")) olderLayout = true;
      db.exec(`DROP INDEX "${index.name}"`);
    }
    // A column no index names any more holds values its documents left out (encode): they go back into
    // the documents, and the column goes.
    const hotSet = new Set(hot.values());
    for (const stale of [...present].filter((c) => c.startsWith('"f_') && !hotSet.has(c))) {
      const field = stale.slice(3, -1);
      const path = `'$.${field}'`;
      // A declared timestamp's integer goes back as its text (time.ts).
      const value = spec.timestamps?.includes(field)
        ? `CASE WHEN typeof(${stale}) = 'integer' THEN storeTimestamp(${stale}) ELSE ${stale} END`
        : stale;
      // The document comes back as JSON text (a row the next write packs again).
      db.exec(
        `UPDATE "${name}" SET doc = json_set(${docJson(name)}, ${path}, ${value}) WHERE ${stale} IS NOT NULL AND json_type(${docJson(name)}, ${path}) IS NULL`,
      );
      db.exec(`ALTER TABLE "${name}" DROP COLUMN ${stale}`);
    }
    const refill = olderLayout ? [...hot] : added;
    if (refill.length > 0) {
      const sets = refill.map(([field, column]) => `${column} = json_extract(${docJson(name)}, '$.${field}')`);
      db.exec(`UPDATE "${name}" SET ${sets.join(", ")}`);
    }
    upgradeTimestamps(db, name, tables.get(name)?.timestamps ?? new Set(), hot);
    for (const sql of wanted.values()) db.exec(sql.replace(/INDEX "/, 'INDEX IF NOT EXISTS "'));
  }
  return uniqueFields;
}

/**
 * The SQL functions the upgrades call: storeMicros(label, text), a timestamp's integer (time.ts; it
 * refuses anything else, naming the table and field in `label`, which stops the upgrade and leaves the
 * file as it was), storeStoredForm(text), whether that integer gives the text back, and
 * storeTimestamp(integer), the text again.
 */
function registerTimeFunctions(db: Database.Database): void {
  db.function("storeTimestamp", { deterministic: true }, (value: unknown) =>
    typeof value === "number" ? timestampOf(value) : null,
  );
  db.function("storeMicros", { deterministic: true }, (label: unknown, value: unknown) =>
    BigInt(timeColumn(String(label), value)),
  );
  db.function("storeStoredForm", { deterministic: true }, (value: unknown) => (isStoredForm(value) ? 1 : 0));
}

/**
 * Timestamps an earlier version kept as text, as integers (time.ts), in one pass over the table at the
 * first open (issue 36). A hot field's column is untyped, so its values are rewritten in place. The
 * created_at column was declared TEXT, whose affinity would turn an integer back into text, so the table
 * is rebuilt: a copy with the column declared INTEGER and the same rowids (the rows keep their order)
 * replaces it; its indexes go with the old table, and createSchema makes them again. A timestamp not in
 * the stored format goes into its document as written (as encode keeps it), so it reads back the same.
 */
function upgradeTimestamps(
  db: Database.Database,
  name: string,
  timestamps: Set<string>,
  hot: Map<string, string>,
): void {
  for (const field of timestamps) {
    const column = hot.get(field);
    if (column === undefined) continue;
    db.exec(
      `UPDATE "${name}" SET doc = CASE WHEN storeStoredForm(${column}) THEN doc ELSE json_set(${docJson(name)}, '$.${field}', ${column}) END, ${column} = storeMicros('${name}.${field}', ${column}) WHERE typeof(${column}) = 'text'`,
    );
  }
  // cast: better-sqlite3 types a pragma's rows as unknown; table_info's are documented (cid, name, type, …)
  const columns = db.pragma(`table_info("${name}")`) as { name: string; type: string }[];
  if (columns.find((c) => c.name === "created_at")?.type.toUpperCase() !== "TEXT") return;
  const rest = columns
    .filter((c) => !["id", "livemode", "created_at", "doc"].includes(c.name))
    .map((c) => `, "${c.name}"`)
    .join("");
  const upgrading = `${name}__upgrading`;
  db.exec(`CREATE TABLE "${upgrading}" (${SYSTEM_COLUMNS_SQL}${rest})`);
  db.exec(
    `INSERT INTO "${upgrading}" (rowid, id, livemode, created_at, doc${rest}) SELECT rowid, id, livemode, storeMicros('${name}.created_at', created_at), CASE WHEN storeStoredForm(created_at) THEN doc ELSE json_set(${docJson(name)}, '$.created_at', created_at) END${rest} FROM "${name}"`,
  );
  db.exec(`DROP TABLE "${name}"`);
  db.exec(`ALTER TABLE "${upgrading}" RENAME TO "${name}"`);
}
