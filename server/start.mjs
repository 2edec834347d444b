// `npm start`. In production (NODE_ENV=production) it runs the built server, dist/main.js, with plain
// Node: build it first with `npm run build` (docs/operating.md "Production"). Otherwise it runs the TypeScript
// sources through tsx, in this same process, so edits apply on the next start without a build (the
// console's pages are rebuilt first when their sources changed: clients/console/build.mjs).
//
// NODE_ENV is read from the environment, or else from the same `.env` file the server reads
// (src/env-file.ts: the one in npm's INIT_CWD, or the working directory).
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseEnv } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));

function nodeEnv() {
  if (process.env.NODE_ENV) return process.env.NODE_ENV;
  const file = resolve(process.env.INIT_CWD || process.cwd(), ".env");
  if (!existsSync(file)) return undefined;
  try {
    return parseEnv(readFileSync(file, "utf8")).NODE_ENV;
  } catch {
    return undefined; // the server reports an unreadable .env itself
  }
}

if (nodeEnv() === "production") {
  const built = resolve(here, "dist/main.js");
  if (!existsSync(built)) {
    console.error(
      "NODE_ENV=production runs the built server, and server/dist/main.js is missing: run `npm run build` first.",
    );
    process.exit(1);
  }
  await import(pathToFileURL(built).href);
} else {
  // The console's and the reference's pages, built now if they are missing or older than their sources.
  const pages = resolve(here, "../clients/console/build.mjs");
  if (existsSync(pages)) await (await import(pathToFileURL(pages).href)).ensureBuilt();
  const { register } = await import("tsx/esm/api");
  register();
  await import(pathToFileURL(resolve(here, "src/main.ts")).href);
}
