import { expect } from 'chai';
import { cleanEnv, runScript } from '../../support/run-script.ts';

describe('tray-service/main.ts without a storage', () => {
  it('stops start-up with one line naming DATABASE_URL and MONGODB_URI', async () => {
    const result = await runScript('tray-service/main.ts', [], cleanEnv({ JWT_SECRET: 'x'.repeat(32) }));
    expect(result.code).to.equal(1);
    expect(result.stderr.trim().split('\n')).to.have.lengthOf(1);
    expect(result.stderr).to.include(
      'DATABASE_URL, MONGODB_URI: no tray storage: set DATABASE_URL (PostgreSQL) or MONGODB_URI (MongoDB)',
    );
  });
});
