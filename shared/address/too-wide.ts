import type { Cidr } from './parse-cidr.ts';

/**
 * The widest range that one deployment's own proxies, app back ends or senders take: 10.0.0.0/8,
 * the widest private IPv4 block, and fc00::/7, IPv6's unique-local block. Anything wider is a
 * share of the internet, and two halves (0.0.0.0/1 and 128.0.0.0/1) are all of it, as a /0 is:
 * refusing only a /0 would let a list that trusts or allows everyone read as a narrow one.
 */
const WIDEST_PREFIX = { ipv4: 8, ipv6: 7 } as const;

/** The first range of `cidrs` wider than WIDEST_PREFIX, with the start-up error's reason. */
export function firstTooWide(
  cidrs: readonly Cidr[],
  verb: string,
): { cidr: Cidr; reason: string } | undefined {
  const cidr = cidrs.find((range) => range.prefix < WIDEST_PREFIX[range.address.kind()]);
  if (!cidr) return undefined;
  const reason =
    cidr.prefix === 0
      ? `${verb} every address`
      : `is wider than /${WIDEST_PREFIX.ipv4} (IPv6: /${WIDEST_PREFIX.ipv6}) and ${verb} a share of the internet`;
  return { cidr, reason };
}

/** A range as the operator reads it in an error: an IPv4-mapped one as the IPv4 range it is. */
export function showCidr(cidr: Cidr): string {
  return `${cidr.address.toString()}/${cidr.prefix}`;
}
