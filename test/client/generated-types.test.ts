import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { clientTypesPath, clientTypesSource } from '../../scripts/lib/client-types-source.ts';

describe('client generated types', () => {
  it('match the tray API schemas (run scripts/generate-client-types.ts after a schema change)', async () => {
    expect(await clientTypesSource()).to.equal(readFileSync(clientTypesPath, 'utf8'));
  });
});
