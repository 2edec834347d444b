// Types of ./served-document.mjs (plain JavaScript, shared with the Prism mock's test/mock/document.mjs).

/** The base URL the contract's examples are written against: its `servers` entry's `base_url` default. */
export function documentedBaseUrl(doc: object): string;

/**
 * A copy of `doc` whose examples (every `example` and `examples` value, at any depth) say `baseUrl`
 * wherever they said the documented base URL. Nothing outside the examples changes.
 */
export function rebaseExamples<T extends object>(doc: T, baseUrl: string): T;
