import { expect } from 'chai';
import { hostname } from 'node:os';
import { stackAddresses } from '../../../scripts/lib/stack-addresses.ts';

describe('stackAddresses', () => {
  it('finds the stack on loopback by default, at the ports and path set', () => {
    expect(stackAddresses({ TRAY_PORT: '9081', WEBHOOK_PATH: '/hooks' })).to.deep.include({
      webhooks: 'http://127.0.0.1:8080/hooks',
      tray: 'http://127.0.0.1:9081',
    });
  });

  // npm start leaves such a HOST out (tcsh's), so its services listen on loopback: a tool run in
  // the same shell must look there, not at the machine's name.
  it('takes no HOST that is this machine’s name, as tcsh sets it; a per-service host still counts', () => {
    const at = stackAddresses({ HOST: hostname(), TRAY_HOST: '10.0.0.5' });
    expect(at.receiver).to.equal('http://127.0.0.1:8080');
    expect(at.tray).to.equal('http://10.0.0.5:8081');
  });
});
