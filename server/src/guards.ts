// Type guards shared by every layer, so that reading untyped data (JSON, driver rows, documents seen
// as plain records) narrows through a check the compiler follows instead of a cast it takes on trust.

/** A JSON object (not null, not an array): its members read by name, each unknown until checked. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
