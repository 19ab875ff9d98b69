import { expect } from 'chai';
import express from 'express';
import { Writable } from 'node:stream';
import request from 'supertest';
import { AppError } from '../../../shared/errors/app-error.ts';
import { errorMiddleware, notFound, toAppError } from '../../../shared/http/error-middleware.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';

/** An app with Express's own body parsers and a path parameter, answering errors as the services do. */
function appWithParsers() {
  const app = express();
  app.post('/json', express.json(), (req, res) => {
    res.json(req.body);
  });
  app.post('/form', express.urlencoded({ extended: false, parameterLimit: 2 }), (req, res) => {
    res.json(req.body);
  });
  app.get('/things/:id', (req, res) => {
    res.json({ id: req.params.id });
  });
  app.use(notFound);
  app.use(errorMiddleware(createLogger({ name: 'test', level: 'silent' })));
  return app;
}

describe('the error middleware', () => {
  const app = appWithParsers();

  describe('answers what Express raises for a bad request as a 4xx in the error shape, naming no internals', () => {
    it('a body whose Content-Encoding does not decode: 400', async () => {
      const res = await request(app)
        .post('/json')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .send('definitely not gzip')
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400000,
        message: 'request body could not be decoded',
      });
    });

    for (const path of ['/things/%E0%A4%A', '/things/%zz']) {
      it(`a path parameter whose percent-encoding does not decode (${path}): 400`, async () => {
        const res = await request(app).get(path).expect(400);
        expect(res.body).to.deep.equal({ status: 'error', code: 400000, message: 'malformed URL encoding' });
      });
    }

    it('a form with more parameters than the parser takes: 413, the status it was raised with', async () => {
      const res = await request(app).post('/form').type('form').send('a=1&b=2&c=3').expect(413);
      expect(res.body).to.deep.equal({ status: 'error', code: 413000, message: 'request body is too large' });
    });
  });

  // Express tags every GET answer it sends, errors too: a cache or a client keeping ETags took an
  // error's tag for a version of the resource, and the API's document had to list an ETag on
  // every error of every GET.
  it('answers an error without an ETag, its length counted in bytes', async () => {
    const named = express();
    named.get('/thing', () => {
      throw new AppError('NOT_FOUND', 'no thing named “Zoë”');
    });
    named.use(errorMiddleware(createLogger({ name: 'test', level: 'silent' })));
    const res = await request(named).get('/thing').expect(404);
    expect(res.headers.etag).to.equal(undefined);
    expect(res.body).to.deep.equal({ status: 'error', code: 404000, message: 'no thing named “Zoë”' });
    expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(Number(res.headers['content-length']))
      .to.equal(Buffer.byteLength(res.text))
      .and.to.be.above(res.text.length);
  });

  it('still answers an error with a server status, or none, as a bare 500', () => {
    for (const error of [Object.assign(new Error('db down'), { status: 503 }), new Error('boom'), 'x']) {
      const mapped = toAppError(error);
      expect(mapped).to.include({ kind: 'INTERNAL', status: 500, message: 'internal error' });
    }
  });
});

// A database or key-server outage makes every request a 503, and the anonymous ones (a stream
// refused when the instance is full) cost a caller nothing: one line per request filled the disk
// while the service was already in trouble. A 500 is a defect of the service's own, said each time.
describe('the error middleware under a flood of 503s', () => {
  const everyMs = 300;
  function appLogging() {
    const lines: Array<{ msg: string; unsaidBefore?: number; requestId?: string }> = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(
          JSON.parse(chunk.toString()) as { msg: string; unsaidBefore?: number; requestId?: string },
        );
        done();
      },
    });
    const app = express();
    app.get('/unavailable', () => {
      throw new AppError('UNAVAILABLE', 'storage unavailable');
    });
    app.get('/keys', () => {
      throw new AppError('UNAVAILABLE', 'token keys are unavailable');
    });
    app.get('/boom', () => {
      throw new Error('a defect');
    });
    app.use(errorMiddleware(createLogger({ name: 'test', level: 'info', destination }), { everyMs }));
    const said = (msg: string) => lines.filter((line) => line.msg === msg);
    return { app, said };
  }

  it('says each 503 reason at most once per interval, then how many went unsaid, and every 500', async () => {
    const { app, said } = appLogging();
    for (let n = 0; n < 30; n += 1) await request(app).get('/unavailable').expect(503);
    await request(app).get('/keys').expect(503);
    for (let n = 0; n < 3; n += 1) await request(app).get('/boom').expect(500);
    expect(said('storage unavailable')).to.have.lengthOf(1);
    expect(said('token keys are unavailable')).to.have.lengthOf(1);
    expect(said('internal error')).to.have.lengthOf(3);
    await new Promise((resolve) => setTimeout(resolve, everyMs + 50));
    await request(app).get('/unavailable').expect(503);
    expect(said('storage unavailable').map((line) => line.unsaidBefore)).to.deep.equal([0, 29]);
  });

  // A user quotes what their failed call answered; an operator finds the one log line it names.
  describe('a 5xx carries an X-Request-Id, the same as its log line', () => {
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

    it('a new one for each failure, unless a proxy gave one that is a plain token, which is kept', async () => {
      const { app, said } = appLogging();
      const first = await request(app).get('/boom').expect(500);
      const second = await request(app).get('/boom').expect(500);
      expect(first.headers['x-request-id']).to.match(UUID);
      expect(second.headers['x-request-id']).to.match(UUID).and.not.equal(first.headers['x-request-id']);
      const given = await request(app).get('/boom').set('X-Request-Id', 'edge-7f3a.42:1').expect(500);
      expect(given.headers['x-request-id']).to.equal('edge-7f3a.42:1');
      expect(said('internal error').map((line) => line.requestId)).to.deep.equal([
        first.headers['x-request-id'],
        second.headers['x-request-id'],
        'edge-7f3a.42:1',
      ]);
    });

    it('never one a caller could use to forge log lines or fill them: those get a new one', async () => {
      const { app, said } = appLogging();
      for (const hostile of ['a b', 'x'.repeat(129), '"quoted"', 'a\tb'])
        expect(
          (await request(app).get('/boom').set('X-Request-Id', hostile).expect(500)).headers['x-request-id'],
        ).to.match(UUID);
      expect(said('internal error').every((line) => UUID.test(String(line.requestId)))).to.equal(true);
    });

    it('not on a 4xx, which is not logged', async () => {
      const res = await request(appWithParsers()).get('/nowhere').expect(404);
      expect(res.headers['x-request-id']).to.equal(undefined);
    });
  });
});

// A route that began its answer and then passed an error on: the answer was left open, the client
// waiting on it for good and the shutdown's drain with it.
describe('the error middleware after an answer began', () => {
  it('ends the connection, so the client sees the answer cut short', async () => {
    const app = express();
    app.get('/stream', (_req, res, next) => {
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.write('{"n":1}\n');
      next(new Error('the storage went away mid-answer'));
    });
    app.use(errorMiddleware(createLogger({ name: 'test', level: 'silent' })));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const outcome = await Promise.race([
        fetch(`http://127.0.0.1:${port}/stream`)
          .then((res) => res.text())
          .then(
            () => 'ended',
            (error: unknown) => `cut: ${(error as Error).message}`,
          ),
        new Promise((resolve) => setTimeout(() => resolve('still open'), 3_000)),
      ]);
      expect(outcome).to.match(/^cut: /);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
