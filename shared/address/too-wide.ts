import type { Cidr } from './parse-cidr.ts';

/**
 * The widest range that one deployment's own proxies, app back ends or senders take: 10.0.0.0/8,
 * the widest private IPv4 block; fc00::/7, IPv6's unique-local block; and a public IPv6 /16, wider
 * than any one network holds (the largest allocations are about /19). Anything wider is a share of
 * the internet (a public IPv6 /8 is a 256th of all its unicast space), and two halves (0.0.0.0/1
 * and 128.0.0.0/1) are all of it, as a /0 is: refusing only a /0 would let a list that trusts or
 * allows everyone read as a narrow one.
 */
const WIDEST_PREFIX = { ipv4: 8, ipv6Private: 7, ipv6: 16 } as const;

/** The shortest prefix `cidr` may have. */
function widestPrefix(cidr: Cidr): number {
  if (cidr.address.kind() === 'ipv4') return WIDEST_PREFIX.ipv4;
  const uniqueLocal = cidr.prefix >= WIDEST_PREFIX.ipv6Private && cidr.address.range() === 'uniqueLocal';
  return uniqueLocal ? WIDEST_PREFIX.ipv6Private : WIDEST_PREFIX.ipv6;
}

/** The first range of `cidrs` wider than WIDEST_PREFIX, with the start-up error's reason. */
export function firstTooWide(
  cidrs: readonly Cidr[],
  verb: string,
): { cidr: Cidr; reason: string } | undefined {
  const cidr = cidrs.find((range) => range.prefix < widestPrefix(range));
  if (!cidr) return undefined;
  const reason =
    cidr.prefix === 0
      ? `${verb} every address`
      : `is wider than /${WIDEST_PREFIX.ipv4} (IPv6: /${WIDEST_PREFIX.ipv6}, or /${WIDEST_PREFIX.ipv6Private} inside fc00::/7) and ${verb} a share of the internet`;
  return { cidr, reason };
}

/** A range as the operator reads it in an error: an IPv4-mapped one as the IPv4 range it is. */
export function showCidr(cidr: Cidr): string {
  return `${cidr.address.toString()}/${cidr.prefix}`;
}
