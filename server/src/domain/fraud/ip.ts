import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { invalid } from "../kernel/errors.ts";

// IP addresses and CIDR ranges for the `ip_address` value lists (spec: FraudListKind.ip_address).
// Node's net.isIP validates the address text strictly (no "127.1" or hex forms); the maintained
// ipaddr.js library parses it into bytes. Ranges are stored as their network address
// (`203.0.113.7/24` → `203.0.113.0/24`), so that matching an address is an exact lookup of the
// address's own network at each prefix length (networksOf below): one indexed query finds every
// list item that contains it, whatever the size of the lists.

export interface Network {
  /** The network address and prefix length, canonical (`203.0.113.0/24`, `2001:db8::/32`). */
  cidr: string;
  version: 4 | 6;
}

/**
 * An address as bytes; IPv4-mapped IPv6 (`::ffff:203.0.113.7`) counts as IPv4. Null when not an
 * address, or when it carries a zone (`fe80::1%eth0`), which means nothing off the host that sent it.
 */
function bytesOf(text: string): number[] | null {
  const trimmed = text.trim();
  if (isIP(trimmed) === 0 || trimmed.includes("%")) return null;
  const parsed = ipaddr.parse(trimmed);
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toByteArray();
  return parsed.toByteArray();
}

function masked(bytes: number[], prefix: number): number[] {
  return bytes.map((byte, i) => {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    return keep === 0 ? 0 : byte & (0xff << (8 - keep)) & 0xff;
  });
}

function cidrOf(bytes: number[], prefix: number): string {
  return `${ipaddr.fromByteArray(masked(bytes, prefix)).toString()}/${prefix}`;
}

/** Whether `text` is an IPv4 or IPv6 address (no range). */
export function isIpAddress(text: string): boolean {
  return bytesOf(text) !== null;
}

/**
 * Parses an address or a CIDR range into its canonical network; null when it is neither. An address
 * is a /32 (IPv4) or /128 (IPv6) network. An IPv4-mapped IPv6 range must cover only mapped addresses
 * (prefix ≥ 96) and becomes the IPv4 range.
 */
export function parseNetwork(text: string): Network | null {
  const [address, prefixText, extra] = text.trim().split("/");
  if (address === undefined || extra !== undefined) return null;
  const bytes = bytesOf(address);
  if (!bytes) return null;
  const mappedV6 = isIP(address.trim()) === 6 && bytes.length === 4;
  const bits = bytes.length * 8;
  let prefix = bits;
  if (prefixText !== undefined) {
    if (!/^[0-9]{1,3}$/.test(prefixText)) return null;
    prefix = Number(prefixText);
    if (mappedV6) {
      if (prefix < 96 || prefix > 128) return null;
      prefix -= 96;
    } else if (prefix > bits) return null;
  }
  return { cidr: cidrOf(bytes, prefix), version: bytes.length === 4 ? 4 : 6 };
}

/**
 * Every network that contains the address, one per prefix length (33 for IPv4, 129 for IPv6), in
 * canonical form: a list item matches the address exactly when its value is one of these.
 */
export function networksOf(address: string): string[] {
  const bytes = bytesOf(address);
  if (!bytes) return [];
  const out: string[] = [];
  for (let prefix = bytes.length * 8; prefix >= 0; prefix--) out.push(cidrOf(bytes, prefix));
  return out;
}

/** Whether the address is inside the range (both as accepted by parseNetwork). */
export function inNetwork(address: string, cidr: string): boolean {
  return networksOf(address).includes(parseNetwork(cidr)?.cidr ?? "");
}

/** The customer's IP address must be an address (spec: Customer.ip): 400 naming the field otherwise. */
export function assertIp(ip: string | undefined, param: string): void {
  if (ip !== undefined && !isIpAddress(ip)) throw invalid(param, "must be an IPv4 or IPv6 address");
}
