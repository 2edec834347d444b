#!/usr/bin/env -S npx tsx
import { parseArgs } from "node:util";
import { OPERATIONS, SCOPES } from "@payments/contract/operations";
import { ConfigError, loadConfig } from "./config.ts";
import { iso } from "./domain/time.ts";
import { loadEnvFile } from "./env-file.ts";
import { domainFor, openConfiguredStore, StartupError } from "./server.ts";

// Administration from the operator's shell, against the same store the server uses (same
// configuration, same `.env`). Production keys are made here, never by the server (DESIGN §5).
//
//   npm run admin -- create-key --name "checkout backend" --scopes tokenization,charges [--live] [--expires-at 2027-01-01T00:00:00Z]
//   npm run admin -- list-keys [--live]
//   npm run admin -- help

/**
 * The scopes a key can usefully hold: `*` and every scope some operation of the contract asks for
 * (the generated OPERATIONS table). The `Scope` enum also names scopes reserved for operations not
 * built yet; a key with only those could call nothing, so the CLI does not offer them.
 */
const USED_SCOPES = new Set<string>(OPERATIONS.flatMap((op) => op.scopes));
const USABLE_SCOPES: readonly string[] = SCOPES.filter((scope) => scope === "*" || USED_SCOPES.has(scope));

const USAGE = `usage: payments-admin <command> [options]

commands:
  create-key --name NAME --scopes SCOPE[,SCOPE...] [--live] [--expires-at RFC3339]
      Creates a service key and prints its secret once. Sandbox key unless --live.
  list-keys [--live]
      Lists the sandbox (or, with --live, production) keys: id, prefix, state, scopes, name.
  help
      Shows this text (also --help, -h).

scopes: ${USABLE_SCOPES.join(", ")}   (* grants every operation)

The CLI uses the server's settings (environment and .env): DATA_DIR or MONGODB_URI say which store.`;

/** A usage error: what is wrong, in words, then the usage; exit code 2. */
class UsageError extends Error {}

function parseOptions(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    // node:util's messages name the option ("Unknown option '--nmae'"); keep them, drop the error type.
    throw new UsageError((err as Error).message);
  }
}

function parse(argv: string[]) {
  const parsed = parseOptions(argv);
  const { positionals, values } = parsed;
  if (values.help) return { command: "help" as const, values };
  const [command, ...extra] = positionals;
  if (command === undefined) throw new UsageError("missing command: say what to do, e.g. `list-keys`.");
  if (command !== "create-key" && command !== "list-keys" && command !== "help") {
    throw new UsageError(`unknown command \`${command}\`: the commands are create-key, list-keys and help.`);
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument(s) after ${command}: ${extra.join(" ")}`);
  if (command === "create-key") {
    if (!values.name?.trim()) {
      throw new UsageError(
        'create-key needs --name NAME: a label that says what the key is for, e.g. --name "checkout backend".',
      );
    }
    const scopes = scopeList(values.scopes);
    if (scopes.length === 0) {
      throw new UsageError(`create-key needs --scopes: one or more of ${USABLE_SCOPES.join(", ")}, comma-separated.`);
    }
    const unknown = scopes.filter((s) => !USABLE_SCOPES.includes(s));
    if (unknown.length > 0) {
      throw new UsageError(
        `unknown or unusable scope(s): ${unknown.join(", ")}. No operation of this API needs them; use ${USABLE_SCOPES.join(", ")}.`,
      );
    }
    const expiresAt = values["expires-at"];
    if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt))) {
      throw new UsageError(
        `--expires-at must be an RFC 3339 date-time, e.g. 2027-01-01T00:00:00Z (got "${expiresAt}").`,
      );
    }
  }
  return { command, values };
}

const scopeList = (text: string | undefined) =>
  (text ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const OPTIONS = {
  name: { type: "string" },
  scopes: { type: "string" },
  live: { type: "boolean", default: false },
  "expires-at": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  const { command, values } = parsed;
  if (command === "help") {
    console.log(USAGE);
    return 0;
  }
  loadEnvFile(); // the same .env as `npm start` reads, so the CLI works on the server's store
  const config = loadConfig();
  const store = await openConfiguredStore(config);
  try {
    const domain = domainFor(config, store);
    if (command === "create-key") {
      const { key, secret } = await domain.serviceKeys.issue(values.live, {
        name: values.name ?? "",
        scopes: scopeList(values.scopes),
        expires_at: values["expires-at"],
      });
      console.log(
        `created ${key.livemode ? "production" : "sandbox"} key ${key.id} (${key.prefix}…) with scopes ${key.scopes.join(", ")}`,
      );
      console.log("secret (shown only now; only its SHA-256 digest is stored):");
      console.log(secret);
      return 0;
    }
    const page = await store.list("service_keys", { livemode: values.live }, { limit: 100 });
    for (const k of page.data) {
      const state = k.revoked_at ? "revoked" : k.expires_at && k.expires_at < iso(new Date()) ? "expired" : "active";
      console.log(`${k.id}  ${k.prefix}…  ${state.padEnd(7)}  ${k.scopes.join(",").padEnd(24)}  ${k.name}`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // A bad setting (ConfigError) or an unusable store (StartupError): one line naming the setting.
    console.error(err instanceof ConfigError || err instanceof StartupError ? err.message : err);
    process.exit(1);
  },
);
