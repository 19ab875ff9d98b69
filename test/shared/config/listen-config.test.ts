import { expect } from 'chai';
import { listenHostOf } from '../../../shared/config/listen-config.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { loadReceiverConfig } from '../../../receiver/receiver-config.ts';

const receiver = (env: Record<string, string>) =>
  loadReceiverConfig({ WEBHOOK_SECRETS: 'main=s3cr3t-for-listen-tests', ...env });

describe('listen addresses (HOST, RECEIVER_HOST, TRAY_HOST)', () => {
  it('are loopback when nothing is set', () => {
    const r = receiver({});
    const t = loadTrayConfig({});
    expect(listenHostOf(r, r.RECEIVER_HOST)).to.equal('127.0.0.1');
    expect(listenHostOf(t, t.TRAY_HOST)).to.equal('127.0.0.1');
  });
  it('follow HOST, and a service’s own variable wins over it', () => {
    const r = receiver({ HOST: '0.0.0.0' });
    const t = loadTrayConfig({ HOST: '0.0.0.0', TRAY_HOST: '10.1.2.3' });
    expect(listenHostOf(r, r.RECEIVER_HOST)).to.equal('0.0.0.0');
    expect(listenHostOf(t, t.TRAY_HOST)).to.equal('10.1.2.3');
  });
  it('accept IPv6 literals and host names', () => {
    expect(loadTrayConfig({ HOST: '::' }).HOST).to.equal('::');
    expect(loadTrayConfig({ TRAY_HOST: 'localhost' }).TRAY_HOST).to.equal('localhost');
  });
  for (const [variable, load] of [
    ['HOST', (v: string) => loadTrayConfig({ HOST: v })],
    ['RECEIVER_HOST', (v: string) => receiver({ RECEIVER_HOST: v })],
    ['TRAY_HOST', (v: string) => loadTrayConfig({ TRAY_HOST: v })],
  ] as const) {
    it(`fail naming ${variable} when it is not an address`, () => {
      expect(() => load('http://0.0.0.0')).to.throw(`${variable}: expected an address to listen on`);
    });
  }
});
