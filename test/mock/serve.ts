// `npm run mock [-- --port 4011] [-- --host 0.0.0.0] [-- --base-url http://mock.example:4010]`: the
// sandbox mock (./mock.ts: the server's own front in front of Prism), on 127.0.0.1:4010 unless told
// otherwise. Problem `type` links and the examples' links name the mock's own address: `--base-url` when
// clients reach it by another name. Run with tsx (the front is the server's TypeScript).
import { parseArgs } from "node:util";
import { mockBaseUrl } from "./document.mjs";
import { startMock } from "./mock.ts";

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
const mock = await startMock({
  host: values.host,
  port: Number(values.port),
  baseUrl,
  logLevel: "info",
  prismOutput: "inherit",
});
console.log(`The sandbox mock answers on ${mock.url} (docs/mock.md).`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    mock.stop().then(() => process.exit(0));
  });
}
