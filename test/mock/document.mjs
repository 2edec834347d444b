// The document the Prism sandbox mock serves, for `npm run mock` (./serve.mjs) and the test suites
// (../support/prism.ts) alike: the contract (the 3.1 document), with the problem `type` links of its
// examples resolved against the mock's own address.
//
// The contract's examples show problem types as the server writes them, `<base URL>/docs/errors#<code>`
// (the Problem model's `type` in spec/common/problems.tsp), with the `servers` entry's default base URL
// (http://127.0.0.1:3000). Prism serves examples as they are, so a mock on another port would answer with
// links to a server that is not there; this copy points them at the address that served the answer.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CONTRACT = createRequire(import.meta.url).resolve("@payments/contract/openapi.3.1.json");

/** The base URL clients reach a mock listening on host:port at (a wildcard host: this machine's loopback). */
export function mockBaseUrl(host, port) {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

/** The contract with every problem example's `type` resolved against `baseUrl` instead of the default one. */
export function mockDocument(baseUrl, contract = JSON.parse(readFileSync(CONTRACT, "utf8"))) {
  const doc = structuredClone(contract);
  const documented = doc.servers?.[0]?.variables?.base_url?.default;
  if (typeof documented !== "string") throw new Error("the contract's servers entry has no default base_url");
  const prefix = `${documented.replace(/\/$/, "")}/`;
  const base = `${baseUrl.replace(/\/$/, "")}/`;
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op?.responses ?? {})) {
        const media = response?.content?.["application/problem+json"];
        for (const example of Object.values(media?.examples ?? {})) {
          const type = example?.value?.type;
          if (typeof type === "string" && type.startsWith(prefix)) {
            example.value.type = new URL(type.slice(prefix.length), base).href;
          }
        }
      }
    }
  }
  return doc;
}

/** Writes mockDocument(baseUrl) to a file of its own; `remove()` deletes it again. */
export function writeMockDocument(baseUrl) {
  const dir = mkdtempSync(join(tmpdir(), "payments-mock-"));
  const path = join(dir, "openapi.3.1.json");
  writeFileSync(path, JSON.stringify(mockDocument(baseUrl)));
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
