import { z } from "zod";

// The pieces every group of the configuration schema is declared with (server/src/config.ts composes the
// groups). A setting is one small declaration: its key (the property name), its type and default (the zod
// schema), what it means (`doc`) and whether it is a secret. From these the parsed configuration and its
// validation messages are made, and config.test.ts checks .env.example and docs/operating.md against them.

export class ConfigError extends Error {
  override name = "ConfigError";
}

export const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

// Whole numbers in decimal digits only: an empty value (`PORT=`) is an error, not 0 (which for PORT
// would mean "any free port"), and neither "1e3" nor " 80" nor "0x50" passes.
export const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number written in digits")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** One setting: its type and default (the schema), its meaning, and whether its value is a secret. */
export interface Setting<S extends z.ZodType = z.ZodType> {
  readonly schema: S;
  /** What the setting means, for a person: the same sense as its .env.example comment and docs row. */
  readonly doc: string;
  /**
   * A secret (a key, or a file holding one): never logged, answered or echoed in a validation message, and
   * in .env.example only ever a commented-out empty line, so no sample value is ever copied into use.
   */
  readonly secret: boolean;
}

export const setting = <S extends z.ZodType>(schema: S, doc: string): Setting<S> => ({ schema, doc, secret: false });
export const secret = <S extends z.ZodType>(schema: S, doc: string): Setting<S> => ({ schema, doc, secret: true });

/** A group of settings about one concern (the server's listener, the store, webhooks, ...). */
export interface ConfigGroup<S extends Record<string, Setting> = Record<string, Setting>> {
  /** The concern, as docs/operating.md and .env.example speak of it. */
  readonly name: string;
  readonly settings: S;
}

export const group = <S extends Record<string, Setting>>(name: string, settings: S): ConfigGroup<S> => ({
  name,
  settings,
});

/** A group's settings as a zod object shape (key to schema), for config.ts to compose. */
export function shapeOf<S extends Record<string, Setting>>(g: ConfigGroup<S>): { [K in keyof S]: S[K]["schema"] } {
  // Object.fromEntries types its result as a record of any key; its entries are exactly the group's keys,
  // each mapped to its own schema, which is what the mapped type says: hence the cast.
  return Object.fromEntries(Object.entries(g.settings).map(([key, s]) => [key, s.schema])) as {
    [K in keyof S]: S[K]["schema"];
  };
}

/**
 * A rule across settings, run once every setting is valid on its own, over the whole parsed configuration
 * (config.ts RawConfig); `problem` reports it broken, naming the setting at fault.
 */
export type Rule<C> = (c: C, problem: (key: keyof C & string, message: string) => void) => void;

/** A setting the schema has checked, read again where it is used; a problem now is a bug, said as one. */
export function checked<T>(key: string, value: T | string): T {
  if (typeof value === "string") throw new ConfigError(`Invalid configuration:\n  ${key}: ${value}`);
  return value;
}
