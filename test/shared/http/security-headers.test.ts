import { expect } from 'chai';
import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { securityHeaders } from '../../../shared/http/security-headers.ts';

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
});
