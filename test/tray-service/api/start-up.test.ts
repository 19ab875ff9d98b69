import { expect } from 'chai';
import { cleanEnv, runScript } from '../../support/run-script.ts';

describe('tray-service/main.ts without a token key', () => {
  it('stops start-up with one line naming the JWT variables', async () => {
    const result = await runScript('tray-service/main.ts', [], cleanEnv());
    expect(result.code).to.equal(1);
    expect(result.stderr.trim().split('\n')).to.have.lengthOf(1);
    expect(result.stderr).to.include(
      'JWT_SECRET: no token key: set exactly one of JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL',
    );
  });
});

describe('tray-service/main.ts with JWT_JWKS_URL and no JWT_AUDIENCE', () => {
  it('stops start-up with one line naming JWT_AUDIENCE', async () => {
    const result = await runScript(
      'tray-service/main.ts',
      [],
      cleanEnv({ JWT_JWKS_URL: 'https://idp.example/.well-known/jwks.json' }),
    );
    expect(result.code).to.equal(1);
    expect(result.stderr.trim().split('\n')).to.have.lengthOf(1);
    expect(result.stderr).to.include('JWT_AUDIENCE: required with JWT_JWKS_URL');
  });
});
