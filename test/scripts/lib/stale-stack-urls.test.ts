import { expect } from 'chai';
import type { DevSecrets } from '../../../scripts/lib/dev-secrets.ts';
import { staleStackUrls } from '../../../scripts/lib/stale-stack-urls.ts';

const secrets: DevSecrets = {
  JWT_SECRET: 'j',
  WEBHOOK_SECRET: 'w',
  ADMIN_TOKEN: 'a',
  REDIS_PASSWORD: 'r/pw+1',
  POSTGRES_PASSWORD: 'p-pw',
};

describe('staleStackUrls', () => {
  // After `. .data/stack.env`, a later npm start took the stopped stack's URLs for servers of the
  // operator's own and started neither Redis nor PostgreSQL.
  it("names the URLs carrying this stack's own passwords, as .data/stack.env writes them", () => {
    const env = {
      REDIS_URL: `redis://:${encodeURIComponent(secrets.REDIS_PASSWORD)}@127.0.0.1:41234`,
      DATABASE_URL: `postgres://postgres:${secrets.POSTGRES_PASSWORD}@127.0.0.1:41235/tray`,
    };
    expect(staleStackUrls(env, secrets)).to.deep.equal(['REDIS_URL', 'DATABASE_URL']);
  });

  it("leaves the operator's own servers, and what is not a URL, as they are", () => {
    const env = {
      REDIS_URL: 'redis://:other@redis.internal:6379',
      DATABASE_URL: 'not a url',
      MONGODB_URI: `mongodb://u:${secrets.POSTGRES_PASSWORD}@m:27017`,
    };
    expect(staleStackUrls(env, secrets)).to.deep.equal([]);
    expect(staleStackUrls({ REDIS_URL: 'redis://127.0.0.1:6379' }, secrets)).to.deep.equal([]);
  });
});
