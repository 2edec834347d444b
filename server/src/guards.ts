import type { AddressInfo } from "node:net";

// Type guards shared by every layer, so that reading untyped data (JSON, driver rows, documents seen
// as plain records) narrows through a check the compiler follows instead of a cast it takes on trust.

/** A JSON object (not null, not an array): its members read by name, each unknown until checked. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What a thrown value says: an Error's message, or the value itself as text. */
export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A system error's code (ENOENT, EACCES, ECONNREFUSED…), when the thrown value has one. */
export const errorCode = (err: unknown): string | undefined =>
  isRecord(err) && typeof err.code === "string" ? err.code : undefined;

/** The TCP port a listening server (node:http, node:net) is bound to. */
export function boundPort(server: { address(): string | AddressInfo | null }): number {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the server is not listening on a TCP port");
  return address.port;
}

/**
 * The entries of a literal table (a `Record<Kind, ...>` constant, a stored schedule keyed by payment
 * method), typed by its keys. Object.entries types every key as a string, since a value of a wider type
 * may hold more keys than its type names; the tables this is used on hold only their own: hence the cast.
 */
export const entriesOf = <K extends string, V>(table: Readonly<Partial<Record<K, V>>>): [K, V][] =>
  // cast: see above (the keys are the table's own).
  Object.entries(table) as [K, V][];
