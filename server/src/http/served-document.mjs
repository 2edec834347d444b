// The contract as a server of it hands it out. Its examples show addresses on the default server, the
// `servers` entry's `base_url` default (spec/main.tsp; http://127.0.0.1:3000): problem `type` links
// (`<base URL>/docs/errors#<code>`, the Problem model in spec/common/problems.tsp) and payment links'
// `url` (`<base URL>/pay/<id>`, spec/resources/payment-links.tsp). Whoever serves the document — this
// server at /docs/openapi.json (./pages.ts), the Prism sandbox mock (test/mock/document.mjs) — rewrites
// them against its own address, so every link in an example leads somewhere on the host that showed it.
// Plain JavaScript, so that `npm run mock` uses it on Node without a TypeScript step.

/** The base URL the contract's examples are written against: its `servers` entry's `base_url` default. */
export function documentedBaseUrl(doc) {
  const documented = doc.servers?.[0]?.variables?.base_url?.default;
  if (typeof documented !== "string") throw new Error("the contract's servers entry has no default base_url");
  return documented;
}

/**
 * A copy of `doc` whose examples (every `example` and `examples` value, at any depth: requests,
 * responses, schemas, webhooks) say `baseUrl` wherever they said the documented base URL. Nothing
 * outside the examples changes.
 */
export function rebaseExamples(doc, baseUrl) {
  const copy = structuredClone(doc);
  const prefix = `${documentedBaseUrl(doc).replace(/\/$/, "")}/`;
  const base = `${baseUrl.replace(/\/$/, "")}/`;
  if (prefix === base) return copy;
  const rewrite = (value) => {
    if (typeof value === "string")
      return value.startsWith(prefix) ? new URL(value.slice(prefix.length), base).href : value;
    if (Array.isArray(value)) return value.map(rewrite);
    if (value && typeof value === "object") {
      for (const key of Object.keys(value)) value[key] = rewrite(value[key]);
    }
    return value;
  };
  const visit = (node) => {
    if (Array.isArray(node)) for (const item of node) visit(item);
    else if (node && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key === "example" || key === "examples") node[key] = rewrite(value);
        else visit(value);
      }
    }
  };
  visit(copy);
  return copy;
}
