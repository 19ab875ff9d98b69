import { expect } from 'chai';
import request from 'supertest';
import { parseAddress } from '../../../shared/address/parse-address.ts';
import { createAllowlist } from '../../../receiver/allowlist/create-allowlist.ts';
import { isAllowed } from '../../../receiver/allowlist/is-allowed.ts';
import { parseRegions } from '../../../receiver/allowlist/parse-regions.ts';
import { regionalAddresses, type RegionId } from '../../../receiver/allowlist/regional-addresses.ts';
import { channelDidCreate, signedHeaders } from '../support/signed-request.ts';
import { queuedJobIds, useReceiver } from '../support/use-receiver.ts';

/**
 * The platform's webhook source addresses per application region, written out here from the
 * platform's list (docs/contract.md#source-addresses) rather than read from the code under test.
 */
const platformAddresses: Record<RegionId, readonly string[]> = {
  sg: ['52.77.130.167', '54.251.77.74', '54.255.59.189', '18.142.212.217'],
  eu: ['3.127.106.141', '3.65.238.41', '3.65.52.7', '3.77.135.138'],
  us: ['52.70.191.115', '100.24.154.219', '52.44.28.213', '52.72.76.90'],
};

const regions = Object.keys(platformAddresses) as RegionId[];

/** Every address with the region it belongs to. */
const everyAddress = regions.flatMap((region) =>
  platformAddresses[region].map((address) => ({ region, address })),
);

/** The two neighbours of an IPv4 address: each entry is one host, not a range. */
function neighbours(address: string): string[] {
  const octets = address.split('.').map(Number);
  const last = octets[3] ?? 0;
  return [last - 1, last + 1].map((value) => [...octets.slice(0, 3), value].join('.'));
}

describe('regional source addresses (docs/contract.md#source-addresses)', () => {
  it('are exactly the platform’s twelve, four per region', () => {
    expect(regionalAddresses).to.deep.equal(platformAddresses);
  });

  describe('the allowlist of one region (WEBHOOK_REGIONS)', () => {
    for (const region of regions) {
      const allowlist = createAllowlist(parseRegions(region), []);
      const allowed = (text: string) => {
        const address = parseAddress(text);
        if (!address) throw new Error(`not an address: ${text}`);
        return isAllowed(allowlist, address);
      };
      for (const { region: owner, address } of everyAddress) {
        const accepted = owner === region;
        it(`${region}: ${accepted ? 'accepts' : 'refuses'} ${address} (${owner})`, () => {
          expect(allowed(address)).to.equal(accepted);
          expect(allowed(`::ffff:${address}`)).to.equal(accepted);
        });
      }
      it(`${region}: refuses the neighbours of each of its addresses`, () => {
        for (const address of platformAddresses[region].flatMap(neighbours)) {
          expect(allowed(address), address).to.equal(false);
        }
      });
    }
  });

  it('the default allowlist (all three regions) accepts all twelve', () => {
    const allowlist = createAllowlist(parseRegions('sg,eu,us'), []);
    for (const { address } of everyAddress) {
      expect(isAllowed(allowlist, parseAddress(address)!), address).to.equal(true);
    }
  });
});

let counter = 0;

describe('POST /webhooks from a regional source address (docs/receiver.md)', () => {
  // The test client connects from loopback; a proxy trusted on loopback reports the platform's
  // address, as a load balancer in front of the receiver does.
  for (const region of regions) {
    describe(`with WEBHOOK_REGIONS=${region} behind a trusted proxy`, () => {
      const receiver = useReceiver({ regions: region, trustProxy: 'loopback' });

      for (const { region: owner, address } of everyAddress) {
        const accepted = owner === region;
        it(`${accepted ? 'accepts and queues' : 'refuses with 403 and queues nothing from'} ${address} (${owner})`, async () => {
          const before = await queuedJobIds(receiver());
          const body = channelDidCreate(`regional-${region}-${(counter += 1)}`);
          const res = await request(receiver().app)
            .post('/webhooks')
            .set({ ...signedHeaders(body), 'x-forwarded-for': address })
            .send(body)
            .expect(accepted ? 200 : 403);
          const after = await queuedJobIds(receiver());
          if (accepted) {
            expect(res.body).to.deep.equal({});
            expect(after).to.have.lengthOf(before.length + 1);
          } else {
            expect(res.body).to.deep.equal({
              status: 'error',
              code: 403000,
              message: 'source address is not allowed',
            });
            expect(after).to.deep.equal(before);
          }
        });
      }

      it('refuses the test client’s own loopback address when no proxy reports one', async () => {
        const body = channelDidCreate(`regional-${region}-loopback`);
        await request(receiver().app).post('/webhooks').set(signedHeaders(body)).send(body).expect(403);
      });
    });
  }
});
