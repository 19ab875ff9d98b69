import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Parses one IP address in its plain textual form, or returns undefined. Deliberately stricter than
 * `ipaddr.parse`, which accepts what `inet_aton` accepts (`010.0.0.1` is octal 8.0.0.1, `2130706433`
 * is 127.0.0.1): an allowlist that compares such forms can be tricked, so anything but four decimal
 * parts (no leading zeros) or a plain IPv6 address without a zone is refused (fail closed).
 * An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is the IPv4 address it carries; an IPv4-compatible
 * one (`::a.b.c.d`) is an IPv6 address like any other.
 */
export function parseAddress(text: string): IpAddress | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!text.includes(':') || text.includes('%') || !ipaddr.IPv6.isValid(text)) return undefined;
  const lastColon = text.lastIndexOf(':');
  const embeddedIpv4 = text.slice(lastColon + 1);
  let hexOnly = text;
  if (embeddedIpv4.includes('.')) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(embeddedIpv4)) return undefined;
    // ipaddr.js reads `::a.b.c.d` (IPv4-compatible, another IPv6 address) as `::ffff:a.b.c.d`
    // (IPv4-mapped), which would let `::52.77.130.167` pass as 52.77.130.167; the same address in
    // hex (`::344d:82a7`) stays IPv6. So the dotted quad is rewritten as its two hex groups first.
    const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(embeddedIpv4).octets;
    hexOnly = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const address = ipaddr.IPv6.parse(hexOnly);
  return address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}
