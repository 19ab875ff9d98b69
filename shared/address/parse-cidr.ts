import ipaddr from 'ipaddr.js';
import { parseAddress, type IpAddress } from './parse-address.ts';
import { listEntries } from '../text/list-entries.ts';

/** An address range: a network address and a prefix length. A single address is a /32 or /128. */
export interface Cidr {
  readonly address: IpAddress;
  readonly prefix: number;
}

/**
 * Parses `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `x::/n`. Throws an Error whose message names the
 * entry and says what is wrong, because it is shown to an operator at start-up. Host bits set below
 * the prefix (`10.0.0.1/8`) are refused with the network the operator probably meant.
 */
export function parseCidr(text: string): Cidr {
  const [addressText = '', prefixText, ...rest] = text.split('/');
  const address = parseAddress(addressText);
  if (!address || rest.length > 0) {
    throw new Error(
      `"${text}" is not an IP address or CIDR in canonical form (e.g. 52.77.130.167 or 10.0.0.0/8)`,
    );
  }
  const max = address.kind() === 'ipv4' ? 32 : 128;
  const mappedOffset = address.kind() === 'ipv4' && addressText.includes(':') ? 96 : 0;
  let prefix = max;
  if (prefixText !== undefined) {
    if (!/^(0|[1-9]\d{0,2})$/.test(prefixText)) throw new Error(`"${text}" has an invalid prefix length`);
    prefix = Number(prefixText) - mappedOffset;
    if (prefix < 0 || prefix > max)
      throw new Error(
        mappedOffset > 0
          ? `"${text}" has a prefix length outside 96-128, the range of an IPv4-mapped address (::ffff:0:0/96 and within)`
          : `"${text}" has a prefix length outside 0-${max}`,
      );
  }
  const network = networkAddress(address, prefix);
  if (network.toString() !== address.toString()) {
    throw new Error(`"${text}" has host bits set; did you mean ${network.toString()}/${prefix}?`);
  }
  return { address, prefix };
}

function networkAddress(address: IpAddress, prefix: number): IpAddress {
  return address.kind() === 'ipv4'
    ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`);
}

/** Parses a comma-separated list of addresses and CIDRs (listEntries: none when blank, no empty entry). */
export function parseCidrList(text: string): Cidr[] {
  return listEntries(text).map(parseCidr);
}

/** True when `address` lies inside `cidr` (an IPv4 address never matches an IPv6 range and vice versa). */
export function cidrContains(cidr: Cidr, address: IpAddress): boolean {
  if (cidr.address.kind() !== address.kind()) return false;
  return address.kind() === 'ipv4'
    ? (address as ipaddr.IPv4).match(cidr.address as ipaddr.IPv4, cidr.prefix)
    : (address as ipaddr.IPv6).match(cidr.address as ipaddr.IPv6, cidr.prefix);
}
