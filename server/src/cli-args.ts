import { parseArgs } from "node:util";
import { OPERATIONS, SCOPES, type Scope } from "@payments/contract/operations";
import { messageOf } from "./guards.ts";

// The admin CLI's command line (server/src/cli.ts): usage, scopes offered, and what is wrong with
// an argument, in words. Kept apart from cli.ts, which runs on import, so it can be unit-tested.

/**
 * The scopes a key can usefully hold: `*` and every scope some operation of the contract asks for
 * (the generated OPERATIONS table). The `Scope` enum also names scopes reserved for operations not
 * built yet; a key with only those could call nothing, so the CLI does not offer them.
 */
const USED_SCOPES = new Set<string>(OPERATIONS.flatMap((op) => op.scopes));
export const USABLE_SCOPES: readonly string[] = SCOPES.filter((scope) => scope === "*" || USED_SCOPES.has(scope));

export const USAGE = `usage: payments-admin <command> [options]

commands:
  create-key --name NAME --scopes SCOPE[,SCOPE...] [--live] [--expires-at RFC3339]
      Creates a service key and prints its secret once. Sandbox key unless --live.
  list-keys [--live]
      Lists the sandbox (or, with --live, production) keys: id, prefix, state, scopes, name.
  ledger verify
      Adds up every posting, ledger entry and balance again and prints each difference from the
      ledger's rules (docs/money.md); exit code 1 when there is one, 0 when there is none.
  help
      Shows this text (also --help, -h).

scopes: ${USABLE_SCOPES.join(", ")}   (* grants every operation)

The CLI uses the server's settings (environment and .env): DATA_DIR or MONGODB_URI say which store.`;

/** A usage error: what is wrong, in words, then the usage; exit code 2. */
export class UsageError extends Error {}

function parseOptions(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    // node:util's messages name the option ("Unknown option '--nmae'"); keep them, drop the error type.
    throw new UsageError(messageOf(err));
  }
}

export function parseCommand(argv: string[]) {
  const parsed = parseOptions(argv);
  const { positionals, values } = parsed;
  if (values.help) return { command: "help" as const, values };
  const [command, ...extra] = positionals;
  if (command === undefined) throw new UsageError("missing command: say what to do, e.g. `list-keys`.");
  if (command !== "create-key" && command !== "list-keys" && command !== "ledger" && command !== "help") {
    throw new UsageError(
      `unknown command \`${command}\`: the commands are create-key, list-keys, ledger verify and help.`,
    );
  }
  if (command === "ledger") {
    if (extra.length !== 1 || extra[0] !== "verify") {
      throw new UsageError(`ledger needs one subcommand, verify: \`ledger verify\` (got \`${extra.join(" ")}\`).`);
    }
    return { command, values };
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

export const scopeList = (text: string | undefined) =>
  (text ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const SCOPE_NAMES: ReadonlySet<string> = new Set(SCOPES);
const isScope = (name: string): name is Scope => SCOPE_NAMES.has(name);

/** The scopes of `--scopes`, once parseCommand has refused any that is not one. */
export const keyScopes = (text: string | undefined): Scope[] => scopeList(text).filter(isScope);

const OPTIONS = {
  name: { type: "string" },
  scopes: { type: "string" },
  live: { type: "boolean", default: false },
  "expires-at": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;
