import { expect } from 'chai';
import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { helmetHeaders } from '../../../shared/http/helmet-headers.ts';
import {
  pageSecurityHeaders,
  pageHelmetOptions,
  securityHeaders,
} from '../../../shared/http/security-headers.ts';

/** An app answering `status` at / behind `middleware`, each header it sent but the transport's. */
async function headersBehind(
  middleware: express.RequestHandler,
  status: number,
): Promise<Record<string, unknown>> {
  const app = express();
  app.disable('x-powered-by');
  app.use(middleware);
  app.get('/', (_req, res) => {
    res.status(status).end();
  });
  const { headers } = await request(app).get('/').expect(status);
  const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...rest } = headers;
  return rest;
}

describe('securityHeaders', () => {
  for (const status of [200, 404]) {
    it(`sends exactly the headers app.use(helmet()) sends (status ${status})`, async () => {
      const sent = await headersBehind(securityHeaders(), status);
      expect(Object.keys(sent).length).to.be.greaterThan(10);
      expect(sent).to.deep.equal(await headersBehind(helmet(), status));
    });
  }

  it('lets a route replace a header it set', async () => {
    const app = express();
    app.use(securityHeaders());
    app.get('/', (_req, res) => {
      res.set('Content-Security-Policy', "default-src 'none'").end();
    });
    const { headers } = await request(app).get('/').expect(200);
    expect(headers['content-security-policy']).to.equal("default-src 'none'");
  });

  it('sends `overPlainHttp` to a request that did not come over https, by req.secure and `trust proxy`', async () => {
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use(securityHeaders(new Map([['x-over', 'https']]), new Map([['x-over', 'http']])));
    app.get('/', (_req, res) => {
      res.end();
    });
    expect((await request(app).get('/').expect(200)).headers['x-over']).to.equal('http');
    const forwarded = await request(app).get('/').set('X-Forwarded-Proto', 'https').expect(200);
    expect(forwarded.headers['x-over']).to.equal('https');
  });

  it('pageSecurityHeaders: helmet’s defaults over https; over plain http without upgrade-insecure-requests alone', async () => {
    const overHttps = helmetHeaders();
    const overHttp = helmetHeaders(pageHelmetOptions({ plainHttp: true }));
    expect(overHttps.get('content-security-policy')).to.match(/;upgrade-insecure-requests$/);
    expect(overHttp.get('content-security-policy')).to.equal(
      overHttps.get('content-security-policy')?.replace(/;upgrade-insecure-requests$/, ''),
    );
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use(pageSecurityHeaders());
    app.get('/', (_req, res) => {
      res.end();
    });
    const plain = await request(app).get('/').expect(200);
    const secure = await request(app).get('/').set('X-Forwarded-Proto', 'https').expect(200);
    for (const [name, value] of overHttp) expect(plain.headers[name], name).to.equal(value);
    for (const [name, value] of overHttps) expect(secure.headers[name], name).to.equal(value);
  });
});
