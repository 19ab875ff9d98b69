import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

describe('tray configuration', () => {
  describe('FERRETDB_POSTGRESQL_URL', () => {
    it('is unset by default (the service then runs without the GIN indexes)', () => {
      expect(loadTrayConfig({}).FERRETDB_POSTGRESQL_URL).to.equal(undefined);
    });

    it('accepts a postgres:// or postgresql:// URL', () => {
      for (const value of ['postgres://postgres@127.0.0.1:5432/postgres', 'postgresql://u:p@db/ferret']) {
        expect(loadTrayConfig({ FERRETDB_POSTGRESQL_URL: value }).FERRETDB_POSTGRESQL_URL).to.equal(value);
      }
    });

    it('refuses a URL of another scheme, naming the variable', () => {
      expect(() => loadTrayConfig({ FERRETDB_POSTGRESQL_URL: 'mongodb://127.0.0.1:27017' }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(
          /^Invalid configuration: FERRETDB_POSTGRESQL_URL: expected a URL starting with postgres:\/\/ or postgresql:\/\/$/,
        );
    });
  });
});
