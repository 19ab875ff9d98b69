import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Parses one IP address in its plain textual form, or returns undefined. Deliberately stricter than
 * `ipaddr.parse`, which accepts what `inet_aton` accepts (`010.0.0.1` is octal 8.0.0.1, `2130706433`
 * is 127.0.0.1): an allowlist that compares such forms can be tricked, so anything but four decimal
 * parts (no leading zeros) or a plain IPv6 address without a zone is refused (fail closed).
 * An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is the IPv4 address it carries.
 */
export function parseAddress(text: string): IpAddress | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!text.includes(':') || text.includes('%') || !ipaddr.IPv6.isValid(text)) return undefined;
  const embeddedIpv4 = text.slice(text.lastIndexOf(':') + 1);
  if (embeddedIpv4.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(embeddedIpv4)) return undefined;
  const address = ipaddr.IPv6.parse(text);
  return address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}
