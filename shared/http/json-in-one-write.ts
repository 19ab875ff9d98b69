import { createHash } from 'node:crypto';
import type { Express, Response } from 'express';

/** Express's default ETag (`etag` setting `weak`): size in hex and a SHA-1 of the body's bytes. */
function weakEtag(text: string): string {
  const hash = createHash('sha1').update(text, 'utf8').digest('base64').slice(0, 27);
  return `W/"${Buffer.byteLength(text, 'utf8').toString(16)}-${hash}"`;
}

/**
 * Makes `res.json` of `app` hand its answer to the socket in one write: the same status, headers,
 * ETag, 304 and HEAD answers as Express's, body as a string. Express turns any body it tags (or of
 * 1,000 characters or more) into a Buffer, and Node then writes the head and that Buffer as two
 * chunks (a writev) instead of one string: on a loopback connection each write is a system call
 * that wakes the peer, and the two-chunk write took about twice the CPU time of one (profiled
 * under `bench:api`; docs/tray-api.md#latency).
 * Anything this does not cover (a Content-Type or Transfer-Encoding already set, JSON settings,
 * a different `etag` setting) goes to Express's own `res.json` unchanged.
 */
export function jsonInOneWrite(app: Express): void {
  const expressJson = app.response.json;
  app.response.json = function json(this: Response, body: unknown): Response {
    const { app: owner } = this;
    if (
      this.get('Content-Type') !== undefined ||
      this.get('Transfer-Encoding') !== undefined ||
      this.get('ETag') !== undefined ||
      this.statusCode === 205 ||
      owner.get('etag') !== 'weak' ||
      owner.get('json replacer') !== undefined ||
      owner.get('json spaces') !== undefined ||
      owner.get('json escape') === true
    ) {
      return expressJson.call(this, body);
    }
    const text = JSON.stringify(body) as string | undefined;
    if (text === undefined) return expressJson.call(this, body);
    this.set({
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(text, 'utf8')),
      ETag: weakEtag(text),
    });
    if (this.req.fresh) this.status(304);
    if (this.statusCode === 204 || this.statusCode === 304) {
      this.removeHeader('Content-Type');
      this.removeHeader('Content-Length');
      this.end();
    } else if (this.req.method === 'HEAD') {
      this.end();
    } else {
      this.end(text, 'utf8');
    }
    return this;
  };
}
