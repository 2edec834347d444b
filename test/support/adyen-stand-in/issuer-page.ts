import type { IncomingMessage, ServerResponse } from "node:http";

// The card issuer's 3-D Secure challenge page, as the Adyen stand-in serves it (./stand-in.ts): where a
// RedirectShopper action's `url` sends the payer. It is the issuer's page, not Adyen's API, so it is not
// behind Prism. As in Adyen's test environment ("Test 3D Secure 2 authentication"), the challenge's
// password `password` authenticates the payer and anything else fails; `outcome=complete|fail` is
// accepted too, the buttons our own sandbox issuer page has, so the e2e suites press the same button
// against either acquirer. Its form post sends the payer back to the payment's `returnUrl` with a
// `redirectResult` appended (a 302, then GET), as Adyen does; the connector then sends that result to
// /payments/details.

export interface IssuerPageDeps {
  /** The returnUrl the /payments request gave for this pspReference, if the payment waits for a challenge. */
  returnUrlOf(pspReference: string): string | undefined;
  /** Records the payer's answer; returns the redirectResult they carry back. */
  answer(pspReference: string, outcome: "authorised" | "refused"): string;
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>3-D Secure 2 challenge (test issuer)</title></head>
<body><main><h1>Confirm the payment</h1>
<form method="post"><label>Password <input name="password" type="password" autocomplete="off"></label>
<button type="submit" name="outcome" value="complete">Complete</button>
<button type="submit" name="outcome" value="fail">Fail</button></form></main></body></html>`;

/** Serves GET and POST /3ds/challenge?psp=…; `raw` is the request's body, already read. */
export function serveIssuerPage(
  request: IncomingMessage,
  response: ServerResponse,
  raw: string,
  deps: IssuerPageDeps,
): void {
  const psp = new URL(request.url ?? "/", "http://stand-in").searchParams.get("psp") ?? "";
  const returnUrl = deps.returnUrlOf(psp);
  if (returnUrl === undefined) {
    response.writeHead(404, { "content-type": "text/plain" }).end("No challenge waits for this payment.");
    return;
  }
  if (request.method !== "POST") {
    response.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    return;
  }
  const form = new URLSearchParams(raw);
  const passed = form.get("password") === "password" || form.get("outcome") === "complete";
  const redirectResult = deps.answer(psp, passed ? "authorised" : "refused");
  const back = new URL(returnUrl);
  back.searchParams.set("redirectResult", redirectResult);
  response.writeHead(302, { location: back.toString() }).end();
}
