import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadReceiverConfig } from '../../../receiver/receiver-config.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

/** Variables without a default (the receiver cannot run without its webhook secrets). */
const required = { WEBHOOK_SECRETS: 'some-secret' };

describe('configuration', () => {
  describe('with nothing set', () => {
    it('uses the documented defaults', () => {
      const receiver = loadReceiverConfig({ ...required });
      const tray = loadTrayConfig({});
      expect(receiver.RECEIVER_PORT).to.equal(8080);
      expect(tray.TRAY_PORT).to.equal(8081);
      expect(receiver.REDIS_URL).to.equal('redis://127.0.0.1:6379');
      expect(tray.MONGODB_URI).to.equal(undefined);
      // Unset: the database MONGODB_URI names, else `tray` (resolveTrayStorage).
      expect(tray.MONGODB_DB).to.equal(undefined);
      expect(tray.LOG_LEVEL).to.equal('info');
    });
  });

  describe('with RECEIVER_PORT=abc', () => {
    it('fails with one line naming RECEIVER_PORT', () => {
      expect(() => loadReceiverConfig({ ...required, RECEIVER_PORT: 'abc' }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(/^Invalid configuration: RECEIVER_PORT: expected a TCP port number \(1-65535\)$/);
    });
  });

  describe('with several bad values', () => {
    it('names each of them', () => {
      const error = (() => {
        try {
          loadTrayConfig({ TRAY_PORT: '70000', REDIS_URL: 'http://x', LOG_LEVEL: 'loud', MONGODB_DB: 'a b' });
        } catch (e) {
          return e as ConfigError;
        }
        throw new Error('expected a ConfigError');
      })();
      expect(error.variables).to.have.members(['TRAY_PORT', 'REDIS_URL', 'LOG_LEVEL', 'MONGODB_DB']);
      expect(error.message).not.to.include('\n');
    });
  });

  describe('with an empty value', () => {
    it('treats it as unset', () => {
      expect(loadReceiverConfig({ ...required, RECEIVER_PORT: '' }).RECEIVER_PORT).to.equal(8080);
    });
  });
});
