import { BlockList, isIP } from "node:net";

// Where webhook deliveries may go (the contract's WebhookEndpoint): a defence against server-side
// request forgery, since an endpoint URL makes this server send requests wherever its registrant says.
// Production endpoints must be https and every address their host resolves to must be public; the
// sandbox also allows http and (by setting) loopback, so a developer can receive on localhost, and
// (by setting) private networks. Cloud metadata addresses are refused everywhere.
//
// The check runs at registration (early, clear feedback) and again at connection time inside the HTTP
// sender, on the addresses the connection will actually use (its DNS lookup), so a name that resolves
// to a public address at registration and to a private one later (DNS rebinding) is still refused.

/** The kinds of address a delivery may be refused for. */
export type AddressCategory =
  | "metadata"
  | "loopback"
  | "unspecified"
  | "private"
  | "carrier_grade_nat"
  | "link_local"
  | "unique_local"
  | "multicast"
  | "reserved";

const RANGES: [AddressCategory, string, number, "ipv4" | "ipv6"][] = [
  // Cloud instance metadata services: AWS/GCP/Azure/OpenStack, AWS ECS tasks, Alibaba, AWS over IPv6.
  ["metadata", "169.254.169.254", 32, "ipv4"],
  ["metadata", "169.254.170.2", 32, "ipv4"],
  ["metadata", "100.100.100.200", 32, "ipv4"],
  ["metadata", "fd00:ec2::254", 128, "ipv6"],
  ["loopback", "127.0.0.0", 8, "ipv4"],
  ["loopback", "::1", 128, "ipv6"],
  // 0.0.0.0 reaches the local host on Linux.
  ["unspecified", "0.0.0.0", 8, "ipv4"],
  ["unspecified", "::", 128, "ipv6"],
  ["private", "10.0.0.0", 8, "ipv4"],
  ["private", "172.16.0.0", 12, "ipv4"],
  ["private", "192.168.0.0", 16, "ipv4"],
  ["carrier_grade_nat", "100.64.0.0", 10, "ipv4"],
  ["link_local", "169.254.0.0", 16, "ipv4"],
  ["link_local", "fe80::", 10, "ipv6"],
  ["unique_local", "fc00::", 7, "ipv6"],
  ["multicast", "224.0.0.0", 4, "ipv4"],
  ["multicast", "ff00::", 8, "ipv6"],
  // IETF protocol assignments, documentation, benchmarking, class E and broadcast.
  ["reserved", "192.0.0.0", 24, "ipv4"],
  ["reserved", "192.0.2.0", 24, "ipv4"],
  ["reserved", "198.18.0.0", 15, "ipv4"],
  ["reserved", "198.51.100.0", 24, "ipv4"],
  ["reserved", "203.0.113.0", 24, "ipv4"],
  ["reserved", "240.0.0.0", 4, "ipv4"],
  // IPv6 forms that carry or translate an IPv4 address (which could be a private one): IPv4-compatible,
  // NAT64, 6to4, Teredo; plus discard-only and documentation. (IPv4-mapped ::ffff:a.b.c.d is checked
  // as the IPv4 address it maps: BlockList does that.)
  ["reserved", "::", 96, "ipv6"],
  ["reserved", "64:ff9b::", 96, "ipv6"],
  ["reserved", "64:ff9b:1::", 48, "ipv6"],
  ["reserved", "2002::", 16, "ipv6"],
  ["reserved", "2001::", 32, "ipv6"],
  ["reserved", "100::", 64, "ipv6"],
  ["reserved", "2001:db8::", 32, "ipv6"],
];

const LISTS = new Map<AddressCategory, BlockList>();
for (const [category, network, prefix, type] of RANGES) {
  let list = LISTS.get(category);
  if (!list) {
    list = new BlockList();
    LISTS.set(category, list);
  }
  list.addSubnet(network, prefix, type);
}

const DESCRIPTIONS: Record<AddressCategory, string> = {
  metadata: "a cloud metadata address",
  loopback: "a loopback address",
  unspecified: "an unspecified address",
  private: "a private address",
  carrier_grade_nat: "a carrier-grade NAT address",
  link_local: "a link-local address",
  unique_local: "a unique-local address",
  multicast: "a multicast address",
  reserved: "a reserved address",
};

/** The category of a special-purpose address, or null for an ordinary public one. Throws for a non-IP. */
export function classifyAddress(address: string): AddressCategory | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 0) throw new TypeError(`not an IP address: ${address}`);
  const type = family === 4 ? "ipv4" : "ipv6";
  // Checked in RANGES order, so the most specific name wins (metadata before link-local).
  for (const [category, list] of LISTS) if (list.check(bare, type)) return category;
  return null;
}

/** What one environment's deliveries may reach. */
export interface AddressPolicy {
  /** Production (livemode) or sandbox, for messages; separate connection pools are kept per policy. */
  name: "production" | "sandbox";
  requireHttps: boolean;
  /** Categories allowed besides public addresses (never `metadata`). */
  allow: ReadonlySet<AddressCategory>;
}

export function addressPolicy(
  livemode: boolean,
  sandbox: { allowLoopback: boolean; allowPrivate: boolean },
): AddressPolicy {
  if (livemode) return { name: "production", requireHttps: true, allow: new Set() };
  const allow = new Set<AddressCategory>();
  if (sandbox.allowLoopback) allow.add("loopback");
  if (sandbox.allowPrivate)
    for (const c of ["private", "carrier_grade_nat", "link_local", "unique_local"] as const) allow.add(c);
  return { name: "sandbox", requireHttps: false, allow };
}

/** Why `address` is refused under `policy`, or null when deliveries may go there. */
export function refusal(address: string, policy: AddressPolicy): string | null {
  const category = classifyAddress(address);
  if (category === null || policy.allow.has(category)) return null;
  const where =
    policy.name === "production"
      ? "production deliveries go only to public addresses"
      : "the sandbox delivers only to public addresses and the ranges its settings allow";
  return `${address} is ${DESCRIPTIONS[category]}; ${where}`;
}

/** A host name's addresses, as the system resolver (or a test's) gives them. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** The host of a URL as a bare IP address, or null when it is a name. */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}

/**
 * Checks an endpoint URL at registration. Returns the problem in words, or null when the URL is
 * acceptable. A name that does not resolve (yet) is accepted: every delivery resolves and checks again.
 */
export async function checkEndpointUrl(raw: string, policy: AddressPolicy, resolve: Resolver): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a valid URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http or https URL";
  if (policy.requireHttps && url.protocol !== "https:") return "must be https in production";
  if (url.username !== "" || url.password !== "") {
    return "must not contain a user name or password (deliveries are authenticated by their signature)";
  }
  const literal = ipLiteral(url.hostname);
  if (literal !== null) return refusal(literal, policy);
  let addresses: { address: string }[];
  try {
    addresses = await resolve(url.hostname);
  } catch {
    return null;
  }
  for (const { address } of addresses) {
    const why = refusal(address, policy);
    if (why !== null) return `${url.hostname} resolves to ${why}`;
  }
  return null;
}
