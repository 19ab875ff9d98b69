import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import {
  clientIsoDateTimePath,
  clientIsoDateTimeSource,
  clientTypesPath,
  clientTypesSource,
} from '../../scripts/lib/client-types-source.ts';

describe('client generated types', () => {
  it('match the tray API schemas (run scripts/generate-client-types.ts after a schema change)', async () => {
    expect(await clientTypesSource()).to.equal(readFileSync(clientTypesPath, 'utf8'));
  });

  it('read date-times as the service does: its reader, copied (run scripts/generate-client-types.ts after changing it)', () => {
    expect(clientIsoDateTimeSource()).to.equal(readFileSync(clientIsoDateTimePath, 'utf8'));
  });
});
