import { BlockList } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { inNetwork, isIpAddress, networksOf, parseNetwork } from "./ip.ts";
import { domainAndParents, emailParts, normalizeValue } from "./lists.ts";

// Addresses and ranges of the ip_address lists (spec: FraudListKind.ip_address), and the other kinds'
// normalization. Membership is cross-checked against Node's own net.BlockList.

describe("parseNetwork", () => {
  it("canonicalizes addresses and ranges to their network", () => {
    expect(parseNetwork("203.0.113.7")).toEqual({ cidr: "203.0.113.7/32", version: 4 });
    expect(parseNetwork("203.0.113.7/24")?.cidr).toBe("203.0.113.0/24");
    expect(parseNetwork(" 10.1.2.3/8 ")?.cidr).toBe("10.0.0.0/8");
    expect(parseNetwork("0.0.0.0/0")?.cidr).toBe("0.0.0.0/0");
    expect(parseNetwork("2001:DB8:0:0:0:0:0:1")?.cidr).toBe("2001:db8::1/128");
    expect(parseNetwork("2001:db8:bad:1::5/48")?.cidr).toBe("2001:db8:bad::/48");
    expect(parseNetwork("2001:db8::/33")?.cidr).toBe("2001:db8::/33");
  });

  it("takes IPv4-mapped IPv6 as IPv4", () => {
    expect(parseNetwork("::ffff:203.0.113.7")?.cidr).toBe("203.0.113.7/32");
    expect(parseNetwork("::ffff:203.0.113.7/120")?.cidr).toBe("203.0.113.0/24");
    expect(parseNetwork("::ffff:203.0.113.7/64")).toBeNull();
  });

  it("refuses what is not an address or range", () => {
    for (const bad of [
      "",
      "203.0.113",
      "203.0.113.256",
      "127.1",
      "0x7f.0.0.1",
      "203.0.113.0/33",
      "203.0.113.0/-1",
      "203.0.113.0/24/1",
      "203.0.113.0/",
      "2001:db8::/129",
      "2001:db8:::1",
      "example.com",
      "fe80::1%eth0/64",
    ]) {
      expect(parseNetwork(bad), bad).toBeNull();
    }
    expect(isIpAddress("203.0.113.7")).toBe(true);
    expect(isIpAddress("203.0.113.0/24")).toBe(false);
  });
});

describe("networksOf", () => {
  it("gives one network per prefix length, most specific first", () => {
    const v4 = networksOf("203.0.113.7");
    expect(v4).toHaveLength(33);
    expect(v4.slice(0, 2)).toEqual(["203.0.113.7/32", "203.0.113.6/31"]);
    expect(v4).toContain("203.0.113.0/24");
    expect(v4.at(-1)).toBe("0.0.0.0/0");
    expect(networksOf("2001:db8:bad::1")).toHaveLength(129);
    expect(networksOf("2001:db8:bad::1")).toContain("2001:db8:bad::/48");
    expect(networksOf("nope")).toEqual([]);
  });

  it("agrees with Node's net.BlockList on random IPv4 addresses and ranges", () => {
    const octet = fc.integer({ min: 0, max: 255 });
    const ipv4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join("."));
    fc.assert(
      fc.property(ipv4, ipv4, fc.integer({ min: 0, max: 32 }), (address, base, prefix) => {
        const list = new BlockList();
        list.addSubnet(base, prefix, "ipv4");
        expect(inNetwork(address, `${base}/${prefix}`)).toBe(list.check(address, "ipv4"));
      }),
    );
  });

  it("agrees with Node's net.BlockList on random IPv6 addresses and ranges", () => {
    const group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
    // Mostly shared leading groups, so that random ranges often contain the address.
    const ipv6 = fc.tuple(fc.array(group, { minLength: 8, maxLength: 8 }), fc.integer({ min: 0, max: 8 }));
    fc.assert(
      fc.property(ipv6, ipv6, fc.integer({ min: 0, max: 128 }), ([a], [b, shared], prefix) => {
        const address = a.join(":");
        const base = [...a.slice(0, shared), ...b.slice(shared)].join(":");
        const list = new BlockList();
        list.addSubnet(base, prefix, "ipv6");
        expect(inNetwork(address, `${base}/${prefix}`)).toBe(list.check(address, "ipv6"));
      }),
    );
  });
});

describe("normalizeValue", () => {
  it("accepts each kind's values in their stored form", () => {
    expect(normalizeValue("card_bin", "410000")).toBe("410000");
    expect(normalizeValue("card_bin", "40000566")).toBe("40000566");
    expect(normalizeValue("card_fingerprint", `fp_${"a1".repeat(16)}`)).toBe(`fp_${"a1".repeat(16)}`);
    expect(normalizeValue("ip_address", "198.51.100.9/24")).toBe("198.51.100.0/24");
    expect(normalizeValue("email", " Ada@Example.COM ")).toBe("ada@example.com");
    expect(normalizeValue("email_domain", "@Mailinator.com")).toBe("mailinator.com");
    expect(normalizeValue("country", "gb")).toBe("GB");
  });

  it("refuses a value of another kind with a 400 naming `value`", () => {
    const bad: [Parameters<typeof normalizeValue>[0], string][] = [
      ["card_bin", "41000"],
      ["card_bin", "4100000000000019"],
      ["card_fingerprint", "fp_XYZ"],
      ["ip_address", "198.51.100.300"],
      ["email", "not-an-email"],
      ["email", "a@b"],
      ["email_domain", "localhost"],
      ["email_domain", "-bad-.com"],
      ["country", "GBR"],
    ];
    for (const [kind, value] of bad) {
      expect(() => normalizeValue(kind, value), `${kind} ${value}`).toThrow(
        expect.objectContaining({ code: "invalid_request", param: "value" }),
      );
    }
  });

  it("splits emails and walks up the domain", () => {
    expect(emailParts("Ada@Mail.Example.com")).toEqual({ email: "ada@mail.example.com", domain: "mail.example.com" });
    expect(emailParts("@example.com")).toBeNull();
    expect(domainAndParents("mail.eu.example.com")).toEqual(["mail.eu.example.com", "eu.example.com", "example.com"]);
  });
});
