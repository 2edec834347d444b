import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError } from "./config.ts";
import { messageOf } from "./guards.ts";

/**
 * Reads the `.env` file of the directory the operator started from, if there is one, into
 * process.env before the configuration is parsed (server/src/config.ts reads process.env only).
 * Variables already in the environment win over the file: Node's own parser (process.loadEnvFile,
 * the same as `node --env-file`) never overwrites them. Settings then come from, in order: the
 * environment, this file, the schema's defaults.
 *
 * "The directory started from" is npm's INIT_CWD when run through npm (`npm start` at the top of the
 * repository reads ./.env there, beside .env.example, although npm runs the server in server/), and
 * the working directory otherwise (`node server/dist/main.js`).
 *
 * Returns the absolute path of the file read, or null.
 */
export function loadEnvFile(env: NodeJS.ProcessEnv = process.env): string | null {
  const file = resolve(env.INIT_CWD || process.cwd(), ".env");
  if (!existsSync(file)) return null;
  try {
    process.loadEnvFile(file);
  } catch (err) {
    throw new ConfigError(`${file}: cannot be read (${messageOf(err)})`);
  }
  return file;
}
