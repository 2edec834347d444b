// Types of ./document.mjs (plain JavaScript, so that `npm run mock` runs on Node without a TypeScript step).

/** The base URL clients reach a mock listening on host:port at (a wildcard host: this machine's loopback). */
export function mockBaseUrl(host: string, port: number | string): string;

/** The contract as the mock at `baseUrl` serves it: example links on its address, `{}` taken where no body is. */
export function mockDocument(baseUrl: string, contract?: object): Record<string, unknown>;

/** Writes mockDocument(baseUrl) to a file of its own; `remove()` deletes it again. */
export function writeMockDocument(baseUrl: string): { path: string; remove(): void };
