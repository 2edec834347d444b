// Types of build.mjs, for the TypeScript that imports it (the browser suites' support).

/** Builds the console and the reference into dist/ and returns its path. */
export function buildPages(options?: { quiet?: boolean }): Promise<string>;

/** Builds unless dist/ is newer than every source; safe from several processes at once. */
export function ensureBuilt(options?: { quiet?: boolean }): Promise<string>;
