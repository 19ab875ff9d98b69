import { cidrContains, type Cidr } from '../../shared/address/parse-cidr.ts';
import type { IpAddress } from '../../shared/address/parse-address.ts';

export function isAllowed(allowlist: readonly Cidr[], address: IpAddress): boolean {
  return allowlist.some((cidr) => cidrContains(cidr, address));
}
