import { expect } from 'chai';
import { hostname } from 'node:os';
import { listenHostOf, listenHostVariable, namesThisMachine } from '../../../shared/config/listen-config.ts';
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
  it('name the variable that chose the address, for an error about it', () => {
    expect(listenHostVariable(receiver({}), 'RECEIVER_HOST', undefined)).to.equal(undefined);
    expect(listenHostVariable(receiver({ HOST: '10.1.2.3' }), 'RECEIVER_HOST', undefined)).to.equal('HOST');
    const both = loadTrayConfig({ HOST: '0.0.0.0', TRAY_HOST: '10.1.2.3' });
    expect(listenHostVariable(both, 'TRAY_HOST', both.TRAY_HOST)).to.equal('TRAY_HOST');
  });
  // tcsh puts HOST=<this machine's name> in every command's environment: the services listened on
  // the interface the name resolves to (often a public one) with nobody having chosen it.
  it('refuse HOST naming this machine, as some shells set it, and take the name in a service’s own', () => {
    for (const name of [hostname(), hostname().toUpperCase()]) {
      expect(() => loadTrayConfig({ HOST: name })).to.throw("HOST: this machine's name");
      expect(() => receiver({ HOST: name })).to.throw("HOST: this machine's name");
    }
    expect(loadTrayConfig({ TRAY_HOST: hostname() }).TRAY_HOST).to.equal(hostname());
    expect(receiver({ RECEIVER_HOST: hostname() }).RECEIVER_HOST).to.equal(hostname());
  });
  it('take HOST=localhost on a machine named localhost (a minimal container): loopback all the same', () => {
    expect(namesThisMachine('localhost', 'localhost')).to.equal(false);
    expect(namesThisMachine('Web-1', 'web-1')).to.equal(true);
    expect(namesThisMachine('web-2', 'web-1')).to.equal(false);
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
    // The resolver reads "0" as 0.0.0.0: HOST=0 listened on every interface.
    for (const short of ['0', '0x0', '0.0', '127.1', '2130706433']) {
      it(`fail naming ${variable}=${short}, a short form of an IPv4 address`, () => {
        expect(() => load(short)).to.throw(
          `${variable}: expected an address written in full: "${short}" is a short form the system reads as an IPv4 address`,
        );
      });
    }
  }
});
