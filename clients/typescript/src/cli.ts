#!/usr/bin/env node
/**
 * `payments listen`: forwards a server's events to a local receiver (src/listen.ts), like `stripe listen`.
 *
 *   payments listen --forward-to http://localhost:4242/webhooks [--events payment.captured,payment.refunded]
 *                   [--api http://127.0.0.1:3000] [--key key_test_…] [--secret whsec_…] [--after evt_…]
 *
 * The key and address may come from PAYMENTS_KEY and PAYMENTS_URL instead. It prints the signing secret
 * first, then one line per event, and stops on Ctrl-C.
 */
import { parseArgs } from "node:util";
import { ListenError, listen } from "./listen.ts";

const USAGE = `Usage: payments listen [--forward-to <url>] [--events <type,type>] [--api <url>] [--key <key>]
                       [--secret <whsec_…>] [--after <event id>]

Follows the server's events (GET /v1/events/stream) with a service key holding the webhooks scope and
POSTs each one to --forward-to, signed with X-Service-Signature under the secret printed at start.
--api defaults to PAYMENTS_URL or http://127.0.0.1:3000; --key to PAYMENTS_KEY.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== "listen") {
    console.error(command === undefined || command === "help" ? USAGE : `unknown command: ${command}\n\n${USAGE}`);
    return command === "help" ? 0 : 2;
  }
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        "forward-to": { type: "string" },
        events: { type: "string" },
        api: { type: "string" },
        key: { type: "string" },
        secret: { type: "string" },
        after: { type: "string" },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const apiKey = values.key ?? process.env.PAYMENTS_KEY;
  if (!apiKey) {
    console.error(`Give a service key with --key or PAYMENTS_KEY.\n\n${USAGE}`);
    return 2;
  }
  const baseUrl = values.api ?? process.env.PAYMENTS_URL ?? "http://127.0.0.1:3000";
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  process.once("SIGTERM", () => stop.abort());
  const listener = listen({
    baseUrl,
    apiKey,
    forwardTo: values["forward-to"],
    types: values.events?.split(",").filter((t) => t !== ""),
    secret: values.secret,
    lastEventId: values.after,
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
  console.log(`Listening to ${baseUrl}${values["forward-to"] ? `, forwarding to ${values["forward-to"]}` : ""}.`);
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
