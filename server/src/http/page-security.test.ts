import type { Request, Response } from "express";
import { describe, expect, it } from "vitest";
import { CSP_BASE, crossSiteRefusal, escapeHtml, pageHeaders } from "./page-security.ts";

/** The console's rule: a request that can change something must say where it comes from. */
const console = { requireOrigin: true };
/** The public pay operation's: a request with no Origin comes from no browser, and needs the page token. */
const payOperation = { requireOrigin: false };

function request(method: string, headers: Record<string, string>, host = "127.0.0.1:3000"): Request {
  const all: Record<string, string> = { host, ...headers };
  return { method, protocol: "http", get: (name: string) => all[name.toLowerCase()] } as unknown as Request;
}

describe("crossSiteRefusal", () => {
  const publicUrl = "https://pay.example.com";

  it("lets same-origin requests through, by Fetch Metadata and Origin", () => {
    expect(crossSiteRefusal(request("GET", { "sec-fetch-site": "same-origin" }), publicUrl, console)).toBeNull();
    expect(crossSiteRefusal(request("GET", {}), publicUrl, console)).toBeNull();
    expect(crossSiteRefusal(request("POST", { origin: "https://pay.example.com" }), publicUrl, console)).toBeNull();
    // The origin the request was sent to counts as this server's too (a proxy's address, a test port).
    expect(crossSiteRefusal(request("DELETE", { origin: "http://127.0.0.1:3000" }), publicUrl, console)).toBeNull();
  });

  it("refuses another site, another origin of this site, and a change without an Origin", () => {
    expect(crossSiteRefusal(request("GET", { "sec-fetch-site": "cross-site" }), publicUrl, console)).toMatch(
      /cross-site/,
    );
    expect(crossSiteRefusal(request("GET", { "sec-fetch-site": "same-site" }), publicUrl, console)).toMatch(
      /same-site/,
    );
    expect(crossSiteRefusal(request("GET", { "sec-fetch-site": "none" }), publicUrl, console)).toMatch(/none/);
    expect(crossSiteRefusal(request("POST", {}), publicUrl, console)).toMatch(/no Origin/);
    expect(crossSiteRefusal(request("PATCH", { origin: "https://evil.example" }), publicUrl, console)).toMatch(/evil/);
    expect(crossSiteRefusal(request("POST", { origin: "https://shop.pay.example.com" }), publicUrl, console)).toMatch(
      /not this/,
    );
    expect(crossSiteRefusal(request("POST", { origin: "null" }), publicUrl, console)).toMatch(/not this/);
  });
});

describe("crossSiteRefusal for the public pay operation (no Origin required)", () => {
  const publicUrl = "https://pay.example.com";

  it("takes a payment with no Origin (curl, a server), or from this server's own origins", () => {
    expect(crossSiteRefusal(request("POST", {}), publicUrl, payOperation)).toBeNull();
    expect(
      crossSiteRefusal(request("POST", { origin: "https://pay.example.com" }), publicUrl, payOperation),
    ).toBeNull();
    expect(crossSiteRefusal(request("POST", { origin: "http://127.0.0.1:3000" }), publicUrl, payOperation)).toBeNull();
  });

  it("refuses what a browser says came from elsewhere, exactly as the console does", () => {
    for (const headers of <Record<string, string>[]>[
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: "https://evil.example" },
      { origin: "null" },
    ]) {
      const pay = crossSiteRefusal(request("POST", headers), publicUrl, payOperation);
      expect(pay, JSON.stringify(headers)).not.toBeNull();
      expect(crossSiteRefusal(request("POST", headers), publicUrl, console)).toBe(pay);
    }
  });
});

describe("pageHeaders", () => {
  it("sends the page's own CSP and the same framing, referrer, isolation and feature rules on every page", () => {
    const sent = new Map<string, string>();
    const res = { setHeader: (name: string, value: string) => sent.set(name, value) } as unknown as Response;
    pageHeaders(res, [...CSP_BASE, "script-src 'self'"].join("; "));
    expect(Object.fromEntries(sent)).toEqual({
      "Content-Security-Policy": "default-src 'none'; base-uri 'none'; frame-ancestors 'none'; script-src 'self'",
      "X-Frame-Options": "DENY",
      "Referrer-Policy": "no-referrer",
      "Cross-Origin-Opener-Policy": "same-origin",
      "Cross-Origin-Resource-Policy": "same-origin",
      "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
    });
  });
});

describe("escapeHtml", () => {
  it("escapes the five characters that could end HTML text or an attribute, and nothing else", () => {
    expect(escapeHtml(`<a href="x" title='y'>Tom & Jerry</a>`)).toBe(
      "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;",
    );
    expect(escapeHtml("Café 100% — ok")).toBe("Café 100% — ok");
  });
});
