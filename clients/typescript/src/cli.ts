#!/usr/bin/env node
/**
 * `payments`: the client package's command line.
 *
 *   payments listen   forwards a server's events to a local receiver (src/listen.ts), like `stripe listen`
 *   payments conform  checks a webhook receiver against the delivery rules (src/conform.ts)
 *   payments trigger  makes an event happen in the sandbox (src/trigger.ts), like `stripe trigger`
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
import { PaymentsApiError } from "./index.ts";
import { ListenError, listen } from "./listen.ts";
import { parseOverride, TRIGGER_TYPES, TRIGGERS, TriggerError, type TriggerOverride, trigger } from "./trigger.ts";

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

const TRIGGER_USAGE = `Usage: payments trigger <event type> [--set [object:]field=value ...] [--api <url>] [--key <key>] [--json]
       payments trigger --list

Creates in the key's sandbox, through the API, the objects that produce the event, and prints them
and the events they made. --set overrides a field of a request body the trigger sends: of its main
object without "object:" (--set amount=5000), of another with it (--set merchant:name="Shop"); the
value is read as JSON when it is JSON (5000, true, "0042") and as text otherwise. --list shows every
event type, what its trigger does and the objects it sends. A sandbox key only (key_test_…);
--api defaults to PAYMENTS_URL or http://127.0.0.1:3000; --key to PAYMENTS_KEY.`;

const USAGE = `Usage: payments <command> [options]

Commands:
  listen   forward a server's events to a local webhook receiver
  conform  check a webhook receiver against the delivery rules
  trigger  make an event happen in the sandbox

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

async function triggerCommand(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      options: {
        set: { type: "string", multiple: true },
        api: { type: "string" },
        key: { type: "string" },
        json: { type: "boolean" },
        list: { type: "boolean" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${TRIGGER_USAGE}`);
    return 2;
  }
  const values = parsed.values as Values & { set?: string[] };
  if (values.list === true) {
    for (const type of TRIGGER_TYPES) {
      const t = TRIGGERS[type];
      console.log(`${type.padEnd(26)} ${t.description} (sends: ${t.objects.join(", ")})`);
    }
    return 0;
  }
  const [type, ...extra] = parsed.positionals;
  if (type === undefined || extra.length > 0) {
    console.error(`Name one event type (payments trigger --list shows them).\n\n${TRIGGER_USAGE}`);
    return 2;
  }
  const apiKey = str(values.key) ?? process.env.PAYMENTS_KEY;
  if (!apiKey) {
    console.error(`Give a sandbox key with --key or PAYMENTS_KEY.\n\n${TRIGGER_USAGE}`);
    return 2;
  }
  const baseUrl = str(values.api) ?? process.env.PAYMENTS_URL ?? "http://127.0.0.1:3000";
  const json = values.json === true;
  try {
    const overrides: TriggerOverride[] = (values.set ?? []).map(parseOverride);
    if (!json) console.log(`Triggering ${type} at ${baseUrl}:`);
    const result = await trigger({
      baseUrl,
      apiKey,
      type,
      overrides,
      onCreated: (c) => {
        if (!json) console.log(`  ${c.object.padEnd(16)} ${c.id.padEnd(30)} ${c.summary}`);
      },
    });
    if (json) console.log(JSON.stringify(result, null, 2));
    else if (result.events === null) console.log("(This key may not list events: the webhooks scope shows them.)");
    else {
      console.log("Events:");
      for (const e of result.events) console.log(`  ${e.type.padEnd(26)} ${e.id}`);
    }
    return 0;
  } catch (err) {
    if (err instanceof TriggerError) {
      console.error(err.message);
      return 2;
    }
    // A refused request: the problem is written for people (it names the field an override broke).
    if (err instanceof PaymentsApiError) {
      const param = err.problem?.param ? ` (field ${err.problem.param})` : "";
      console.error(`The server refused a request of the trigger: ${err.message}${param}`);
      return 1;
    }
    if (err instanceof TypeError) {
      console.error(
        `Could not reach ${baseUrl}: ${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ""}`,
      );
      return 1;
    }
    throw err;
  }
}

const COMMANDS: Record<string, { run: (args: string[]) => Promise<number>; usage: string }> = {
  listen: { run: listenCommand, usage: LISTEN_USAGE },
  conform: { run: conformCommand, usage: CONFORM_USAGE },
  trigger: { run: triggerCommand, usage: TRIGGER_USAGE },
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
