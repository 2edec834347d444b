import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { consoleCookie, crossSiteRefusal } from "./console.ts";

describe("consoleCookie", () => {
  it("is Secure, with the __Host- prefix, everywhere but on a loopback address over http", () => {
    for (const url of [
      "https://pay.example.com",
      "http://pay.example.com",
      "http://10.0.0.5:3000",
      "https://localhost:3000",
    ]) {
      expect(consoleCookie(url, 3600), url).toEqual({
        name: "__Host-payments_console",
        secure: true,
        maxAgeSeconds: 3600,
      });
    }
    for (const url of ["http://127.0.0.1:3000", "http://localhost:3000", "http://[::1]:3000", "http://app.localhost"]) {
      expect(consoleCookie(url, 60), url).toEqual({ name: "payments_console", secure: false, maxAgeSeconds: 60 });
    }
  });
});

function request(method: string, headers: Record<string, string>, host = "127.0.0.1:3000"): Request {
  const all: Record<string, string> = { host, ...headers };
  return { method, protocol: "http", get: (name: string) => all[name.toLowerCase()] } as unknown as Request;
}

describe("crossSiteRefusal", () => {
  const publicUrl = "https://pay.example.com";

  it("lets same-origin requests through, by Fetch Metadata and Origin", () => {
    expect(crossSiteRefusal(request("GET", { "sec-fetch-site": "same-origin" }), publicUrl)).toBeNull();
    expect(crossSiteRefusal(request("GET", {}), publicUrl)).toBeNull();
    expect(crossSiteRefusal(request("POST", { origin: "https://pay.example.com" }), publicUrl)).toBeNull();
    // The origin the request was sent to counts as this server's too (a proxy's address, a test port).
    expect(crossSiteRefusal(request("DELETE", { origin: "http://127.0.0.1:3000" }), publicUrl)).toBeNull();
  });

  it("refuses another site, another origin of this site, and a change without an Origin", () => {
    expect(crossSiteRefusal(request("GET", { "sec-fetch-site": "cross-site" }), publicUrl)).toMatch(/cross-site/);
    expect(crossSiteRefusal(request("GET", { "sec-fetch-site": "same-site" }), publicUrl)).toMatch(/same-site/);
    expect(crossSiteRefusal(request("GET", { "sec-fetch-site": "none" }), publicUrl)).toMatch(/none/);
    expect(crossSiteRefusal(request("POST", {}), publicUrl)).toMatch(/no Origin/);
    expect(crossSiteRefusal(request("PATCH", { origin: "https://evil.example" }), publicUrl)).toMatch(/evil/);
    expect(crossSiteRefusal(request("POST", { origin: "https://shop.pay.example.com" }), publicUrl)).toMatch(
      /not this/,
    );
    expect(crossSiteRefusal(request("POST", { origin: "null" }), publicUrl)).toMatch(/not this/);
  });
});
