import { describe, expect, it } from "vitest";
import { addressPolicy, checkEndpointUrl, classifyAddress, type Resolver, refusal } from "./ssrf.ts";

// Where deliveries may go (the contract's WebhookEndpoint). Nothing here opens a connection or asks a
// DNS server: names resolve through resolvers made for each test.

const production = addressPolicy(true, { allowLoopback: true, allowPrivate: true });
const sandbox = addressPolicy(false, { allowLoopback: true, allowPrivate: false });
const sandboxPrivate = addressPolicy(false, { allowLoopback: true, allowPrivate: true });
const sandboxStrict = addressPolicy(false, { allowLoopback: false, allowPrivate: false });

const resolver =
  (table: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["::ffff:10.0.0.1", "private"],
    ["100.64.0.1", "carrier_grade_nat"],
    ["100.127.255.254", "carrier_grade_nat"],
    ["169.254.169.254", "metadata"],
    ["169.254.170.2", "metadata"],
    ["100.100.100.200", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["169.254.10.10", "link_local"],
    ["fe80::1", "link_local"],
    ["fc00::1", "unique_local"],
    ["fd12:3456::1", "unique_local"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["192.0.2.10", "reserved"],
    ["64:ff9b::a00:1", "reserved"],
    ["2002:a00:1::", "reserved"],
    ["::7f00:1", "reserved"],
  ])("%s is %s", (address, category) => {
    expect(classifyAddress(address)).toBe(category);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "[2a00:1450::1]"])(
    "%s is public",
    (address) => {
      expect(classifyAddress(address)).toBeNull();
    },
  );

  it("refuses to classify a name", () => {
    expect(() => classifyAddress("example.com")).toThrow(TypeError);
  });
});

describe("policies", () => {
  it("production refuses every special-purpose range, even with the sandbox settings open", () => {
    for (const address of ["127.0.0.1", "10.0.0.1", "100.64.0.1", "169.254.1.1", "fc00::1", "169.254.169.254"]) {
      expect(refusal(address, production), address).toMatch(/production deliveries go only to public addresses/);
    }
    expect(refusal("8.8.8.8", production)).toBeNull();
  });

  it("the sandbox allows loopback, and private ranges only when its setting says so, never metadata", () => {
    expect(refusal("127.0.0.1", sandbox)).toBeNull();
    expect(refusal("::1", sandbox)).toBeNull();
    expect(refusal("10.0.0.1", sandbox)).toMatch(/private address/);
    expect(refusal("10.0.0.1", sandboxPrivate)).toBeNull();
    expect(refusal("169.254.169.254", sandboxPrivate)).toMatch(/cloud metadata address/);
    expect(refusal("0.0.0.0", sandboxPrivate)).toMatch(/unspecified/);
    expect(refusal("127.0.0.1", sandboxStrict)).toMatch(/loopback/);
  });
});

describe("checkEndpointUrl (registration)", () => {
  const names = resolver({
    "hooks.acme.test": ["93.184.216.34"],
    "internal.acme.test": ["10.0.0.7"],
    "mixed.acme.test": ["93.184.216.34", "192.168.0.3"],
    "v6.acme.test": ["::1"],
    localhost: ["127.0.0.1", "::1"],
  });

  it.each([
    ["http://127.0.0.1/hooks", /must be https in production/],
    ["https://127.0.0.1/hooks", /loopback address/],
    ["http://10.0.0.1/hooks", /must be https/],
    ["https://10.0.0.1/hooks", /10\.0\.0\.1 is a private address/],
    ["https://169.254.169.254/latest/meta-data", /cloud metadata address/],
    ["https://[::1]:8443/hooks", /loopback address/],
    ["https://[::ffff:a00:1]/hooks", /private address/],
    ["https://0x7f.1/hooks", /127\.0\.0\.1 is a loopback address/],
    ["https://2130706433/hooks", /127\.0\.0\.1 is a loopback address/],
    ["https://internal.acme.test/hooks", /internal\.acme\.test resolves to 10\.0\.0\.7 is a private address/],
    ["https://mixed.acme.test/hooks", /resolves to 192\.168\.0\.3/],
    ["https://localhost/hooks", /loopback/],
    ["https://user:pw@hooks.acme.test/hooks", /user name or password/],
    ["ftp://hooks.acme.test/hooks", /http or https/],
  ])("production refuses %s", async (url, why) => {
    expect(await checkEndpointUrl(url, production, names)).toMatch(why);
  });

  it("production accepts an https URL whose host resolves to public addresses only", async () => {
    expect(await checkEndpointUrl("https://hooks.acme.test/hooks", production, names)).toBeNull();
    expect(await checkEndpointUrl("https://93.184.216.34/hooks", production, names)).toBeNull();
  });

  it("accepts a name that does not resolve yet: each delivery checks again", async () => {
    expect(await checkEndpointUrl("https://not-yet.acme.test/hooks", production, names)).toBeNull();
  });

  it("the sandbox accepts http and loopback, so a receiver on localhost works", async () => {
    expect(await checkEndpointUrl("http://127.0.0.1:4242/hooks", sandbox, names)).toBeNull();
    expect(await checkEndpointUrl("http://localhost:4242/hooks", sandbox, names)).toBeNull();
    expect(await checkEndpointUrl("http://[::1]:4242/hooks", sandbox, names)).toBeNull();
    expect(await checkEndpointUrl("http://internal.acme.test/hooks", sandbox, names)).toMatch(/private address/);
    expect(await checkEndpointUrl("http://169.254.169.254/", sandboxPrivate, names)).toMatch(/metadata/);
  });
});
