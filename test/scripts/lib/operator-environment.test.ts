import { expect } from 'chai';
import { operatorEnvironment } from '../../../scripts/lib/operator-environment.ts';

describe('operatorEnvironment', () => {
  it('passes on what the operator set, over the stack’s own values', () => {
    expect(operatorEnvironment({ LOG_LEVEL: 'debug', REDIS_URL: 'redis://r:6379' }, [])).to.deep.equal({
      LOG_LEVEL: 'debug',
      REDIS_URL: 'redis://r:6379',
    });
  });

  // Empty counts as unset in every service: passed on, `WEBHOOK_SECRETS=` stopped the receiver
  // and `WEBHOOK_ALLOWLIST=` refused every local delivery, instead of the stack's own values.
  it('leaves out a variable set empty or blank, so the stack’s own value applies', () => {
    expect(
      operatorEnvironment(
        // Blank too: a CRLF env file sourced by a shell leaves a carriage return.
        { WEBHOOK_SECRETS: '', WEBHOOK_ALLOWLIST: ' ', JWT_SECRET: '', REDIS_URL: '\r', TRAY_DEMO: 'off' },
        [],
      ),
    ).to.deep.equal({ TRAY_DEMO: 'off' });
  });

  it('leaves out the stale URLs of an earlier run of this stack', () => {
    expect(
      operatorEnvironment({ REDIS_URL: 'redis://:old@127.0.0.1:1', DATABASE_URL: 'postgres://db/tray' }, [
        'REDIS_URL',
      ]),
    ).to.deep.equal({ DATABASE_URL: 'postgres://db/tray' });
  });

  // tcsh puts HOST=<this machine's name> in every environment: the services refuse it, and the
  // stack refused to start unless told to open itself, which then stopped the services.
  it('leaves out HOST when it is this machine’s name, as tcsh sets it; keeps an address or the per-service hosts', () => {
    expect(operatorEnvironment({ HOST: 'Build-7', TRAY_HOST: 'build-7' }, [], 'build-7')).to.deep.equal({
      TRAY_HOST: 'build-7',
    });
    expect(operatorEnvironment({ HOST: '0.0.0.0' }, [], 'build-7')).to.deep.equal({ HOST: '0.0.0.0' });
  });
});
