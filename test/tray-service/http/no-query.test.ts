import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { errorMiddleware } from '../../../shared/http/error-middleware.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { noQuery } from '../../../tray-service/http/no-query.ts';
import { parseQueryString } from '../../../tray-service/http/parse-query-string.ts';

/** An app with one call that takes no query, as GET /notifications/v3 and GET /v3/mutes. */
function appWithNoQuery() {
  const app = express();
  app.set('query parser', parseQueryString);
  app.get('/counts', noQuery, (_req, res) => {
    res.json({ ran: true });
  });
  app.use(errorMiddleware(createLogger({ name: 'test', level: 'silent' })));
  return app;
}

describe('noQuery (a call that takes no query parameter)', () => {
  const app = appWithNoQuery();

  it('lets a call without a query through', async () => {
    const res = await request(app).get('/counts').expect(200);
    expect(res.body).to.deep.equal({ ran: true });
  });

  it('refuses every parameter with 400 naming them, before the route runs', async () => {
    const res = await request(app).get('/counts?userId=someone-else&x=1').expect(400);
    expect(res.body).to.deep.equal({
      status: 'error',
      code: 400001,
      message: 'query: unknown parameter userId, x',
    });
  });
});
