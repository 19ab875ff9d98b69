import { parseCidr, type Cidr } from '../../shared/address/parse-cidr.ts';
import { regionalAddresses, type RegionId } from './regional-addresses.ts';

/** The ranges a webhook may come from: the chosen regions' addresses plus the operator's extras. */
export function createAllowlist(regions: readonly RegionId[], extra: readonly Cidr[]): Cidr[] {
  return [...regions.flatMap((region) => regionalAddresses[region].map(parseCidr)), ...extra];
}
