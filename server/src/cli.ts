#!/usr/bin/env -S npx tsx
import { keyScopes, parseCommand, USAGE } from "./cli-args.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { iso } from "./domain/kernel/time.ts";
import { loadEnvFile } from "./env-file.ts";
import { privateDataDir } from "./startup/data-dir.ts";
import { domainFor } from "./startup/domain.ts";
import { openConfiguredStore } from "./startup/store.ts";
import { StartupError } from "./startup-error.ts";

// Administration from the operator's shell, against the same store the server uses (same
// configuration, same `.env`). Production keys are made here, never by the server (docs/api.md "Authentication, scopes and environments").
//
//   npm run admin -- create-key --name "checkout backend" --scopes tokenization,charges [--live] [--expires-at 2027-01-01T00:00:00Z]
//   npm run admin -- list-keys [--live]
//   npm run admin -- ledger verify
//   npm run admin -- help

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseCommand>;
  try {
    parsed = parseCommand(argv);
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
  privateDataDir(config);
  const store = await openConfiguredStore(config);
  try {
    const domain = domainFor(config, store);
    await domain.ledger.upgrade(); // as the server does at open: the CLI may open a database first
    if (command === "ledger") {
      const report = await domain.ledger.verify();
      for (const difference of report.differences) console.log(`difference: ${difference}`);
      console.log(
        `ledger verify: ${report.postings} postings, ${report.entries} entries, ${report.balances} balances: ${report.differences.length} difference(s)`,
      );
      return report.differences.length === 0 ? 0 : 1;
    }
    if (command === "create-key") {
      const { key, secret } = await domain.serviceKeys.issue(values.live, {
        name: values.name ?? "",
        scopes: keyScopes(values.scopes),
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
