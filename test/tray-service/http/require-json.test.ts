import { expect } from 'chai';
import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import request from 'supertest';
import { errorMiddleware } from '../../../shared/http/error-middleware.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { jsonBody } from '../../../tray-service/http/require-json.ts';

/** An app taking a JSON body as the tray and admin routes do, echoing what it was given. */
function appWithJsonBody() {
  const app = express();
  app.post('/echo', ...jsonBody(), (req, res) => {
    res.json({ body: req.body === undefined ? 'none' : req.body });
  });
  app.use(errorMiddleware(createLogger({ name: 'test', level: 'silent' })));
  return app;
}

/** POSTs `text` to /echo in one chunk with no content type (Node frames a body of no length so). */
async function postChunked(app: express.Express, text: string): Promise<{ status: number; text: string }> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/echo' });
    req.write(text);
    req.end();
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    let body = '';
    for await (const chunk of res) body += String(chunk);
    return { status: res.statusCode ?? 0, text: body };
  } finally {
    server.close();
  }
}

describe('jsonBody (the JSON body of a tray or admin call)', () => {
  const app = appWithJsonBody();
  const post = (text: string) =>
    request(app).post('/echo').set('Content-Type', 'application/json').send(text);

  // Valid JSON, so not 400000 "not valid JSON": what is wrong is that no call takes such a body.
  for (const text of ['null', '5', '"x"', 'true', ' null ']) {
    it(`answers the JSON ${JSON.stringify(text)} 400 naming the body: it is no object`, async () => {
      const res = await post(text).expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'body: expected a JSON object',
      });
    });
  }

  it('answers JSON that does not parse 400 "not valid JSON"', async () => {
    const res = await post('{"verb":').expect(400);
    expect(res.body).to.deep.equal({
      status: 'error',
      code: 400000,
      message: 'request body is not valid JSON',
    });
  });

  it('passes an object or an array on to the call (whose schema names what is wrong), and no body as none', async () => {
    expect((await post('{"a":1}').expect(200)).body).to.deep.equal({ body: { a: 1 } });
    expect((await post('[1]').expect(200)).body).to.deep.equal({ body: [1] });
    expect((await request(app).post('/echo').expect(200)).body).to.deep.equal({ body: 'none' });
  });

  it('passes a JSON body of no bytes on as no body, however it is framed, and `{}` as `{}`', async () => {
    for (const framing of [{ 'Content-Length': '0' }, { 'Transfer-Encoding': 'chunked' }]) {
      const res = await request(app).post('/echo').set('Content-Type', 'application/json').set(framing);
      expect(res.body, JSON.stringify(framing)).to.deep.equal({ body: 'none' });
    }
    expect((await post('{}').expect(200)).body).to.deep.equal({ body: {} });
  });

  // A client that frames every call in chunks sends an empty chunked body with no content type.
  it('passes a body of no bytes and no content type on as no body, chunked too; one with bytes is 415', async () => {
    const chunked = await request(app).post('/echo').set('Transfer-Encoding', 'chunked');
    expect([chunked.status, chunked.body]).to.deep.equal([200, { body: 'none' }]);
    const typeless = await postChunked(app, '{"a":1}');
    expect(typeless.status).to.equal(415);
    expect(JSON.parse(typeless.text).message).to.equal('request body must be application/json');
  });
});
