import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { signBody } from '../../../receiver/signature/sign-body.ts';

/** The platform's signature vectors, byte for byte (docs/contract.md#signature). */
const vectors = JSON.parse(
  readFileSync(new URL('../../fixtures/signatures.json', import.meta.url), 'utf8'),
) as {
  cases: { name: string; secret: string; body: string; signature: string }[];
};

describe('signBody', () => {
  for (const vector of vectors.cases) {
    it(`reproduces the platform's signature of vector ${vector.name}`, () => {
      expect(signBody(vector.body, vector.secret)).to.equal(vector.signature);
      expect(signBody(Buffer.from(vector.body, 'utf8'), vector.secret)).to.equal(vector.signature);
    });
  }
});
