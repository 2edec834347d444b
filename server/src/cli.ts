#!/usr/bin/env -S npx tsx
import { parseArgs } from "node:util";
import { SCOPES } from "@payments/contract/operations";
import { ConfigError, loadConfig } from "./config.ts";
import { iso } from "./domain/time.ts";
import { loadEnvFile } from "./env-file.ts";
import { domainFor, openStore } from "./server.ts";

// Administration from the operator's shell, against the same store the server uses (same
// configuration). Production keys are made here, never by the server (DESIGN §5).
//
//   npm run admin -- create-key --name "checkout backend" --scopes tokenization,charges [--live] [--expires-at 2027-01-01T00:00:00Z]
//   npm run admin -- list-keys [--live]

const USAGE = `usage:
  payments-admin create-key --name NAME --scopes SCOPE[,SCOPE...] [--live] [--expires-at RFC3339]
  payments-admin list-keys [--live]
scopes: ${SCOPES.join(", ")}`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: "string" },
      scopes: { type: "string" },
      live: { type: "boolean", default: false },
      "expires-at": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  if (command !== "create-key" && command !== "list-keys") {
    console.error(`unknown command: ${command}\n${USAGE}`);
    return 2;
  }
  const scopes = (values.scopes ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (command === "create-key") {
    const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    const expiresAt = values["expires-at"];
    if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt))) {
      console.error(`--expires-at must be an RFC 3339 date-time\n${USAGE}`);
      return 2;
    }
    if (!values.name || scopes.length === 0 || unknown.length > 0) {
      console.error(unknown.length ? `unknown scope(s): ${unknown.join(", ")}\n${USAGE}` : USAGE);
      return 2;
    }
  }
  loadEnvFile(); // the same .env as `npm start` reads, so the CLI works on the server's store
  const config = loadConfig();
  const store = await openStore(config);
  try {
    const domain = domainFor(config, store);
    if (command === "create-key") {
      const { key, secret } = await domain.serviceKeys.issue(values.live, {
        name: values.name ?? "",
        scopes,
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
    console.error(err instanceof ConfigError || err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
