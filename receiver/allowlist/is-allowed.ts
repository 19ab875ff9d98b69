import { cidrContains, type Cidr } from '../address/parse-cidr.ts';
import type { IpAddress } from '../address/parse-address.ts';

export function isAllowed(allowlist: readonly Cidr[], address: IpAddress): boolean {
  return allowlist.some((cidr) => cidrContains(cidr, address));
}
