import type { BaseDoc, IndexSpec } from "../../store/port.ts";

// How an area declares the collections it owns: `collection<Doc>(indexes)` gives the store its index spec
// and carries the document type, so the list of areas (../areas.ts) derives the whole store's type from
// one line per area instead of a second hand-kept list of types.

/** A collection's indexes, typed by the document it holds (`doc` is never set: it carries the type). */
export interface Collection<T extends BaseDoc> {
  indexes: IndexSpec[];
  /** Nothing lists it: no listing index (store/port.ts, CollectionSpec). */
  unlisted?: boolean;
  /** Its indexed fields that hold a timestamp or null (store/port.ts, CollectionSpec). */
  timestamps?: string[];
  readonly doc?: T;
}

export function collection<T extends BaseDoc>(
  indexes: IndexSpec[],
  options: { unlisted?: true; timestamps?: (keyof T & string)[] } = {},
): Collection<T> {
  return {
    indexes,
    ...(options.unlisted ? { unlisted: true } : {}),
    ...(options.timestamps ? { timestamps: options.timestamps } : {}),
  };
}

/** The document type of each collection in a registry of `collection()`s. */
export type DocsOf<C> = { [K in keyof C]: C[K] extends Collection<infer T> ? T : never };
