#!/usr/bin/env node
// `npm run mock [-- --port 4011] [-- --host 0.0.0.0] [-- --base-url http://mock.example:4010]`: the Prism
// sandbox mock of the contract, refusing requests the document does not allow (--errors), on
// 127.0.0.1:4010 unless told otherwise. It serves the contract with problem `type` links resolved
// against the mock's own address (./document.mjs): `--base-url` when clients reach it by another name.
// The installed Prism is patched to answer a schema-invalid request with the operation's 400, as the
// server does, not its 422 (patches/README.md).
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { mockBaseUrl, writeMockDocument } from "./document.mjs";

const { values } = parseArgs({
  options: {
    port: { type: "string", short: "p", default: "4010" },
    host: { type: "string", short: "h", default: "127.0.0.1" },
    "base-url": { type: "string" },
  },
});
if (!/^[0-9]+$/.test(values.port) || Number(values.port) > 65535) {
  console.error(`--port must be a port number, got ${JSON.stringify(values.port)}`);
  process.exit(2);
}
const baseUrl = values["base-url"] ?? mockBaseUrl(values.host, values.port);
if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
  console.error(`--base-url must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  process.exit(2);
}
const document = writeMockDocument(baseUrl);
const here = dirname(fileURLToPath(import.meta.url));
const prism = resolve(here, "../../node_modules/.bin/prism");
const child = spawn(prism, ["mock", "--errors", "-h", values.host, "-p", values.port, document.path], {
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  document.remove();
  process.exit(code ?? (signal ? 1 : 0));
});
