#!/usr/bin/env node
/**
 * `payments`: the client package's command line.
 *
 *   payments listen   forwards a server's events to a local receiver (src/listen.ts), like `stripe listen`
 *   payments conform  checks a webhook receiver against the delivery rules (src/conform.ts)
 *
 * The key and address may come from PAYMENTS_KEY and PAYMENTS_URL instead of --key and --api.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import {
  CONFORM_SCHEMES,
  ConformError,
  type ConformScheme,
  conform,
  DEFAULT_DELIVERY_TIMEOUT_MS,
  formatConformCase,
} from "./conform.ts";
import { ListenError, listen } from "./listen.ts";

const LISTEN_USAGE = `Usage: payments listen [--forward-to <url>] [--events <type,type>] [--api <url>] [--key <key>]
                       [--secret <whsec_…>] [--after <event id>]

Follows the server's events (GET /v1/events/stream) with a service key holding the webhooks scope and
POSTs each one to --forward-to, signed with X-Service-Signature under the secret printed at start.
--api defaults to PAYMENTS_URL or http://127.0.0.1:3000; --key to PAYMENTS_KEY.`;

const CONFORM_USAGE = `Usage: payments conform --url <receiver url> --secret <whsec_…>
                        [--scheme x_service_signature|standard_webhooks|both] [--timeout <seconds>] [--json]

Sends the receiver a graded series of signed webhook deliveries and reports case by case: valid
deliveries, duplicates, an out-of-order pair, an unknown event type and the largest event must be
acknowledged (2xx) within the time-out (default ${DEFAULT_DELIVERY_TIMEOUT_MS / 1000} s); a tampered body, another secret's signature, no
signature and a timestamp outside the 300 s tolerance must get 401. --scheme picks the signature
scheme (default x_service_signature; both runs the series once per scheme). The deliveries are fakes:
point it at a test instance of your receiver. Exit code 0 when every case passed, 1 when one failed.`;

const USAGE = `Usage: payments <command> [options]

Commands:
  listen   forward a server's events to a local webhook receiver
  conform  check a webhook receiver against the delivery rules

payments help <command> shows a command's options.`;

type Values = Record<string, string | boolean | undefined>;

/** Parses a command's options, or prints why not with its usage and returns null. */
function options(args: string[], spec: ParseArgsConfig["options"], usage: string): Values | null {
  try {
    return parseArgs({ args, options: spec, strict: true }).values as Values;
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${usage}`);
    return null;
  }
}

const str = (v: string | boolean | undefined): string | undefined => (typeof v === "string" ? v : undefined);

async function listenCommand(args: string[]): Promise<number> {
  const values = options(
    args,
    {
      "forward-to": { type: "string" },
      events: { type: "string" },
      api: { type: "string" },
      key: { type: "string" },
      secret: { type: "string" },
      after: { type: "string" },
    },
    LISTEN_USAGE,
  );
  if (!values) return 2;
  const apiKey = str(values.key) ?? process.env.PAYMENTS_KEY;
  if (!apiKey) {
    console.error(`Give a service key with --key or PAYMENTS_KEY.\n\n${LISTEN_USAGE}`);
    return 2;
  }
  const baseUrl = str(values.api) ?? process.env.PAYMENTS_URL ?? "http://127.0.0.1:3000";
  const forwardTo = str(values["forward-to"]);
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  process.once("SIGTERM", () => stop.abort());
  const listener = listen({
    baseUrl,
    apiKey,
    forwardTo,
    types: str(values.events)
      ?.split(",")
      .filter((t) => t !== ""),
    secret: str(values.secret),
    lastEventId: str(values.after),
    signal: stop.signal,
    onEvent: (e) => {
      const outcome =
        e.forwarded === null
          ? ""
          : "status" in e.forwarded
            ? ` -> ${e.forwarded.status}`
            : ` -> failed: ${e.forwarded.error}`;
      console.log(`${new Date().toISOString()}  ${e.type.padEnd(26)} ${e.id}${outcome}`);
    },
    onDisconnect: (reason) => console.error(`disconnected (${reason}); reconnecting from the last event…`),
  });
  console.log(`Listening to ${baseUrl}${forwardTo ? `, forwarding to ${forwardTo}` : ""}.`);
  console.log(`Webhook signing secret: ${listener.secret}  (Ctrl-C stops)`);
  try {
    const last = await listener.done;
    if (last) console.log(`Stopped after ${last} (resume with --after ${last}).`);
    return 0;
  } catch (err) {
    if (err instanceof ListenError) {
      console.error(`The server refused the stream (${err.status}): ${err.message}`);
      return 1;
    }
    throw err;
  }
}

async function conformCommand(args: string[]): Promise<number> {
  const values = options(
    args,
    {
      url: { type: "string" },
      secret: { type: "string" },
      scheme: { type: "string" },
      timeout: { type: "string" },
      json: { type: "boolean" },
    },
    CONFORM_USAGE,
  );
  if (!values) return 2;
  const url = str(values.url);
  const secret = str(values.secret);
  if (!url || !secret) {
    console.error(`Give the receiver's --url and the --secret it verifies with.\n\n${CONFORM_USAGE}`);
    return 2;
  }
  const scheme = str(values.scheme) ?? "x_service_signature";
  const schemes: ConformScheme[] | undefined =
    scheme === "both" ? [...CONFORM_SCHEMES] : CONFORM_SCHEMES.filter((s) => s === scheme);
  if (schemes.length === 0) {
    console.error(`--scheme is x_service_signature, standard_webhooks or both, not "${scheme}".\n\n${CONFORM_USAGE}`);
    return 2;
  }
  const timeout = str(values.timeout);
  const timeoutSeconds = timeout === undefined ? DEFAULT_DELIVERY_TIMEOUT_MS / 1000 : Number(timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    console.error(`--timeout is a number of seconds above 0, not "${timeout}".\n\n${CONFORM_USAGE}`);
    return 2;
  }
  const json = values.json === true;
  let current: ConformScheme | undefined;
  try {
    const report = await conform({
      url,
      secret,
      schemes,
      timeoutMs: timeoutSeconds * 1000,
      onCase: (result) => {
        if (json) return;
        if (result.scheme !== current) {
          current = result.scheme;
          console.log(`${url}, signed with ${current}:`);
        }
        console.log(`  ${formatConformCase(result)}`);
      },
    });
    const failed = report.cases.filter((c) => !c.passed).length;
    if (json) console.log(JSON.stringify(report, null, 2));
    else {
      console.log(
        failed === 0
          ? `All ${report.cases.length} cases passed.`
          : `${failed} of ${report.cases.length} cases failed: ${report.cases
              .filter((c) => !c.passed)
              .map((c) => (schemes.length > 1 ? `${c.scheme}/${c.id}` : c.id))
              .join(", ")}.`,
      );
    }
    return failed === 0 ? 0 : 1;
  } catch (err) {
    if (err instanceof ConformError || err instanceof TypeError) {
      console.error(`${err.message}\n\n${CONFORM_USAGE}`);
      return 2;
    }
    throw err;
  }
}

const COMMANDS: Record<string, { run: (args: string[]) => Promise<number>; usage: string }> = {
  listen: { run: listenCommand, usage: LISTEN_USAGE },
  conform: { run: conformCommand, usage: CONFORM_USAGE },
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help") {
    const usage = COMMANDS[rest[0] ?? ""]?.usage ?? USAGE;
    console.error(usage);
    return command === undefined ? 2 : 0;
  }
  const found = COMMANDS[command];
  if (!found) {
    console.error(`unknown command: ${command}\n\n${USAGE}`);
    return 2;
  }
  return found.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
