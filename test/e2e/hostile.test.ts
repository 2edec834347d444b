import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger, loadConfig, startServer } from "@payments/server";
import { CARD_WRITINGS, CREDENTIAL_WRITINGS, partsOf, TEST_PANS } from "@payments/server/hostile-writings";
import { afterAll, expect, it } from "vitest";
import { CARD_TEXTS, digitsOf, FREE_TEXT_FIELDS, valueFor, withTextAt } from "../support/free-text.ts";
import { RECIPES } from "../support/recipes.ts";
import { loopbackResolver, type TestServer } from "../support/server.ts";
import { clientFor, createPaymentLink, json, pageTokenOf } from "./fixtures.ts";

// A hostile run (docs/api.md "What is masked and what is refused"): every credential shape this API
// issues (sandbox and production service-key secrets, a webhook signing secret, a console session
// token, a payment-page token) sent where it does not belong, in a query string, a path segment and
// headers, with and without a valid key; and card numbers in every free-text field of the contract.
// Afterwards none of them may be found in clear in the data files (WAL included, while the server runs
// and after it stops), in the log, in GET /v1/request_log or in any answer. A real file-backed store,
// as `npm start` uses.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A credential as the masker shows it: its type marker and four characters, then `…`. */
function masked(secret: string): string {
  const marker = /^(key_(?:test|live)_|whsec_|csess_|v1\.[0-9]+\.)/.exec(secret)?.[1] ?? "";
  const visible = `${marker}${secret.slice(marker.length, marker.length + 4)}`;
  // A page token whose nonce starts with a digit shows none of it (kernel/mask.ts): with `v1`'s `1` and
  // the expiry's ten digits it would make a run of twelve, which reads as a card number.
  return marker.startsWith("v1.") && /[0-9]\.[0-9]{10}\.[0-9]/.test(visible) ? `${marker}…` : `${visible}…`;
}

/** The number's digits with any short run of non-alphanumerics between any two (of readable text). */
function cardPattern(digits: string): RegExp {
  return new RegExp(digits.split("").join("[^0-9A-Za-z]{0,12}"));
}

/** A decimal digit of any script as its ASCII digit (Unicode keeps them in runs of ten, zero first). */
function asciiDigit(digit: string): string {
  let start = digit.codePointAt(0) as number;
  const cp = start;
  while (/\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
  return String((cp - start) % 10);
}

/**
 * Text as a person (or a script) could read it back: JSON escapes undone, percent escapes decoded up to
 * three times, NFKC, invisible characters dropped, every decimal digit in ASCII. A card number found in
 * this form was recoverable.
 */
function readable(text: string): string {
  let t = text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\\[tnr]/g, " ");
  for (let layer = 0; layer < 3; layer++) {
    t = t.replace(/(?:%[0-9A-Fa-f]{2})+/g, (escapes) => {
      try {
        return decodeURIComponent(escapes);
      } catch {
        return escapes;
      }
    });
  }
  return t
    .normalize("NFKC")
    .replace(/[\p{Cf}\p{Mn}\p{Me}\p{Default_Ignorable_Code_Point}]/gu, "")
    .replace(/\p{Nd}/gu, asciiDigit);
}

// Some 150 requests and the recipes' fixtures: well over the default time limit on a busy machine.
it("leaves no credential and no card number in clear in the data files, the log, the request log or any answer", {
  timeout: 180_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "payments-hostile-"));
  dirs.push(dataDir);
  const lines: string[] = [];
  const logger = createLogger(
    "debug",
    new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  const config = loadConfig({
    NODE_ENV: "development",
    PORT: "0",
    DATA_DIR: dataDir,
    LOG_LEVEL: "debug",
    PRODUCTION_ACQUIRER: "simulator",
    RATE_LIMIT_TEST_PER_SECOND: "100000",
    RATE_LIMIT_LIVE_PER_SECOND: "100000",
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: "100000",
    RATE_LIMIT_PAYMENT_LINK_PER_MINUTE: "100000",
    RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE: "100000",
  });
  const running = await startServer({ config, logger, webhooks: { resolve: loopbackResolver } });
  const sandboxKey = running.bootstrapSecret as string;
  const server: TestServer = {
    url: running.url,
    running,
    sandboxKey,
    key: async (scopes, options = {}) =>
      (await running.domain.serviceKeys.issue(options.live ?? false, { name: "hostile", scopes })).secret,
    close: () => running.close(),
  };
  const client = clientFor(server, sandboxKey);
  const auth = { authorization: `Bearer ${sandboxKey}` };

  // The credentials, made the ordinary way (these answers carry them by design and are not scanned).
  const liveKey = await server.key(["*"], { live: true });
  const endpoint = await json(
    await fetch(`${server.url}/v1/webhook_endpoints`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ url: "http://127.0.0.1:9/hooks", enabled_events: ["webhook_endpoint.test"] }),
    }),
  );
  const signIn = await fetch(`${server.url}/console/session`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      origin: new URL(server.url).origin,
      "sec-fetch-site": "same-origin",
    },
    body: JSON.stringify({ key: sandboxKey }),
  });
  const sessionToken = /payments_console=([^;]+)/.exec(signIn.headers.get("set-cookie") ?? "")?.[1] ?? "";
  const pageToken = await pageTokenOf(server, (await createPaymentLink(client)).id);
  const credentials = { sandboxKey, liveKey, webhookSecret: endpoint.secret as string, sessionToken, pageToken };
  expect(credentials.webhookSecret).toMatch(/^whsec_/);
  expect(sessionToken).toMatch(/^csess_/);
  expect(pageToken).toMatch(/^v1\.[0-9]+\./);

  // Every answer of the hostile run, headers and body.
  const answers: string[] = [];
  const send = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${server.url}${path}`, init);
    answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${await res.text()}`);
    return res.status;
  };

  for (const secret of Object.values(credentials)) {
    const encoded = encodeURIComponent(secret).replace(/_/g, "%5F");
    for (const headers of [auth, {}]) {
      // A query string: an unknown parameter (400), one named by the secret (its problem names it), a
      // cursor (400), encoded or not.
      await send(`/v1/merchants?limit=1&api_key=${secret}`, { headers });
      await send(`/v1/merchants?${secret}=1`, { headers });
      await send(`/v1/merchants?starting_after=${secret}`, { headers });
      await send(`/v1/merchants?starting_after=${encoded}`, { headers });
      // A path segment: an id (400), an unknown route (404).
      await send(`/v1/merchants/${secret}`, { headers });
      await send(`/v1/${encoded}/balance`, { headers });
      // Headers: unknown ones, a console cookie, an Idempotency-Key (kept only as a digest).
      await send("/v1/merchants?limit=1", {
        headers: { ...headers, "x-api-key": secret, cookie: `payments_console=${secret}` },
      });
      await send("/v1/merchants", {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "idempotency-key": secret },
        body: JSON.stringify({ name: "Hostile" }),
      });
    }
    // As a bearer credential (only the service keys are keys).
    await send("/v1/merchants?limit=1", { headers: { authorization: `Bearer ${secret}x` } });
    await send(`/console/api/v1/merchants?key=${secret}`, { headers: { cookie: `payments_console=${secret}` } });
  }

  // Every disguise of a secret the masker recognises (kernel/credentials.ts), in a query string and a
  // path segment, with a valid key (so the request log keeps them too).
  const disguised: string[] = [];
  for (const secret of [sandboxKey, credentials.webhookSecret]) {
    for (const { write } of CREDENTIAL_WRITINGS.filter((w) => w.masked)) {
      const written = write(secret).replaceAll(" ", "%20");
      disguised.push(written);
      await send(`/v1/merchants?q=${written}`, { headers: auth });
      await send(`/v1/merchants/${written}`, { headers: auth });
    }
  }

  // Every writing of a card number (issue 35 item 2) in a query string, a path segment, and free text.
  for (const { text } of CARD_WRITINGS) {
    await send(`/v1/merchants?q=${encodeURIComponent(text)}`, { headers: auth });
    await send(`/v1/merchants/${encodeURIComponent(text)}`, { headers: auth });
    const status = await send("/v1/merchants", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "Hostile", metadata: { note: text } }),
    });
    expect(status, `${text}: ${answers.at(-1)}`).toBe(400);
  }

  // Card numbers in every free-text field of the contract: each refused, with the field named.
  for (const [i, { op, field }] of FREE_TEXT_FIELDS.entries()) {
    const card = CARD_TEXTS[i % CARD_TEXTS.length] as string;
    const recipe = await RECIPES[op.operationId]({ server, client, live: false });
    const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(recipe.path[name] ?? ""));
    const status = await send(url, {
      method: op.method.toUpperCase(),
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(withTextAt(op, recipe.body, field, valueFor(op, field, card))),
    });
    expect(status, `${op.operationId} ${field}: ${answers.at(-1)}`).toBe(400);
    expect(answers.at(-1)).toContain('"code":"card_number_in_text"');
  }

  // The request log, as the console reads it (every page).
  const requestLog: string[] = [];
  for (let after: string | undefined; ; ) {
    const page = await json(
      await fetch(`${server.url}/v1/request_log?limit=100${after ? `&starting_after=${after}` : ""}`, {
        headers: auth,
      }),
    );
    requestLog.push(JSON.stringify(page.data));
    if (!page.has_more) break;
    after = page.data.at(-1).id;
  }
  const requestLogText = requestLog.join("\n");

  const files = () =>
    Buffer.concat(
      readdirSync(dataDir)
        .map((f) => join(dataDir, f))
        .filter((f) => statSync(f).isFile())
        .map((f) => readFileSync(f)),
    );
  const cards = [...new Set([...CARD_TEXTS.map(digitsOf), ...TEST_PANS])];
  const check = (where: string, raw: string) => {
    const text = readable(raw);
    for (const [name, secret] of Object.entries(credentials)) {
      expect(text.includes(secret), `the ${name} in clear in ${where}`).toBe(false);
      const { random } = partsOf(secret);
      if (random !== "") expect(text.includes(random), `the ${name}'s random part in ${where}`).toBe(false);
    }
    for (const written of disguised) {
      expect(raw.includes(written.slice(-16)), `${written} in ${where}`).toBe(false);
    }
    for (const digits of cards) expect(cardPattern(digits).test(text), `${digits} in ${where}`).toBe(false);
  };
  expect(readdirSync(dataDir)).toContain("payments.sqlite-wal");
  check("the data files of the running server (the write-ahead log included)", files().toString("utf8"));
  check("the answers", answers.join("\n"));
  check("the request log", requestLogText);
  await running.close();
  check("the data files after shutdown", files().toString("utf8"));
  const logText = lines.join("");
  check("the log", logText);

  // They were there, masked: in the log (every request), in the request log (keyed requests) and in
  // the problems that name an unknown query parameter.
  for (const secret of Object.values(credentials)) {
    expect(answers.join("\n"), `${masked(secret)} in an answer`).toContain(masked(secret));
    expect(logText, `${masked(secret)} in the log`).toContain(masked(secret));
    expect(requestLogText, `${masked(secret)} in the request log`).toContain(masked(secret));
  }
});
