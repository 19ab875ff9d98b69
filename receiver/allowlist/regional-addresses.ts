/**
 * The platform's webhook source addresses per application region (docs/contract.md#source-addresses). The previous set stopped working after 9 June 2025, so only the new set is listed.
 */
export const regionalAddresses = {
  sg: ['52.77.130.167', '54.251.77.74', '54.255.59.189', '18.142.212.217'],
  eu: ['3.127.106.141', '3.65.238.41', '3.65.52.7', '3.77.135.138'],
  us: ['52.70.191.115', '100.24.154.219', '52.44.28.213', '52.72.76.90'],
} as const;

export type RegionId = keyof typeof regionalAddresses;

export const regionIds = Object.keys(regionalAddresses) as RegionId[];
