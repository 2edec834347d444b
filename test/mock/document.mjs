// The document the Prism sandbox mock serves, for `npm run mock` (./serve.ts, ./mock.ts) and the test suites
// (../support/prism.ts) alike: the contract (the 3.1 document), rendered for the mock in two ways.
//
// - Its examples' links (problem `type`s, payment link pages) point at the mock's own address: the
//   contract writes them against the `servers` entry's default base URL (http://127.0.0.1:3000), and
//   Prism serves examples as they are. The rewrite is the server's own (`rebaseExamples`, which also
//   serves its /docs/openapi.json), so the mock and the server move the same links.
// - An operation that takes no body takes `{}` as none on the server (spec/main.tsp "Request bodies";
//   server/src/http/guards.ts noBody), but Prism refuses any body an operation does not list (415). The
//   mock's copy lists an optional body that can only be `{}`, so the mock agrees; anything else is still
//   refused.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rebaseExamples } from "@payments/server/served-document";

const CONTRACT = createRequire(import.meta.url).resolve("@payments/contract/openapi.3.1.json");
const METHODS = ["post", "put", "patch", "delete"];

/** The base URL clients reach a mock listening on host:port at (a wildcard host: this machine's loopback). */
export function mockBaseUrl(host, port) {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

/** The contract as the mock at `baseUrl` serves it (see above). */
export function mockDocument(baseUrl, contract = JSON.parse(readFileSync(CONTRACT, "utf8"))) {
  const doc = rebaseExamples(contract, baseUrl);
  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op || op.requestBody !== undefined) continue;
      op.requestBody = {
        required: false,
        description: "None; `{}` counts as none.",
        content: { "application/json": { schema: { type: "object", maxProperties: 0 } } },
      };
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
