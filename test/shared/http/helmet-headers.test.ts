import { expect } from 'chai';
import express from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import request from 'supertest';
import { helmetHeaders } from '../../../shared/http/helmet-headers.ts';

/** The headers helmet's middleware puts on a real response, through a real Express app. */
async function sentByHelmet(options?: HelmetOptions): Promise<Map<string, string>> {
  const app = express();
  app.disable('x-powered-by');
  app.use(helmet(options));
  app.get('/', (_req, res) => {
    res.end();
  });
  const res = await request(app).get('/').expect(200);
  const headers = new Map<string, string>();
  const transport = new Set(['connection', 'content-length', 'date', 'keep-alive', 'transfer-encoding']);
  for (const [name, value] of Object.entries(res.headers)) {
    if (!transport.has(name)) headers.set(name, String(value));
  }
  return headers;
}

describe('helmetHeaders', () => {
  it('holds exactly the headers app.use(helmet()) sends', async () => {
    const computed = helmetHeaders();
    expect(computed.size).to.be.greaterThan(10);
    expect(computed).to.deep.equal(await sentByHelmet());
  });

  it('follows the options given, as helmet does', async () => {
    const options: HelmetOptions = { contentSecurityPolicy: false, frameguard: { action: 'deny' } };
    const computed = helmetHeaders(options);
    expect(computed.has('content-security-policy')).to.equal(false);
    expect(computed.get('x-frame-options')).to.equal('DENY');
    expect(computed).to.deep.equal(await sentByHelmet(options));
  });
});
