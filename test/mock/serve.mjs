#!/usr/bin/env node
// `npm run mock [-- --port 4011] [-- --host 0.0.0.0]`: the Prism sandbox mock of the contract, refusing
// requests the document does not allow (--errors), on 127.0.0.1:4010 unless told otherwise.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    port: { type: "string", short: "p", default: "4010" },
    host: { type: "string", short: "h", default: "127.0.0.1" },
  },
});
if (!/^[0-9]+$/.test(values.port) || Number(values.port) > 65535) {
  console.error(`--port must be a port number, got ${JSON.stringify(values.port)}`);
  process.exit(2);
}
const require = createRequire(import.meta.url);
const document = require.resolve("@payments/contract/openapi.3.1.json");
const here = dirname(fileURLToPath(import.meta.url));
const prism = resolve(here, "../../node_modules/.bin/prism");
const child = spawn(prism, ["mock", "--errors", "-h", values.host, "-p", values.port, document], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
