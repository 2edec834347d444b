import { describe, expect, it } from "vitest";
import { consoleCookie } from "./console.ts";

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
