import { expect } from 'chai';
import { targetPath, webhookPathMatcher } from '../../../receiver/http/webhook-path-matcher.ts';

describe('webhookPathMatcher (WEBHOOK_PATH as Express matches a route)', () => {
  for (const configured of ['/webhooks', '/webhooks/']) {
    describe(`with ${configured}`, () => {
      const matches = webhookPathMatcher(configured);
      for (const target of [
        '/webhooks',
        '/webhooks/',
        '/WEBHOOKS',
        '/webhooks?a=1',
        '/Webhooks/?x',
        '/webhooks#f',
        // The absolute form HTTP/1.1 servers must take (RFC 9112, 3.2.2), as Express reads it.
        'http://recv.example/webhooks',
        'HTTPS://recv.example:8443/Webhooks/?a=1',
      ]) {
        it(`takes ${target}`, () => expect(matches(target)).to.equal(true));
      }
      for (const target of [
        '/webhooks//',
        '/webhooks/x',
        '/webhook',
        '/webhooksx',
        '/%77ebhooks',
        '//webhooks',
        '/',
        'http://recv.example/webhooks/x',
        'http://recv.example',
        undefined,
      ]) {
        it(`refuses ${String(target)}`, () => expect(matches(target)).to.equal(false));
      }
    });
  }

  it('takes / and its one trailing slash for /, as Express does', () => {
    const matches = webhookPathMatcher('/');
    expect(matches('/')).to.equal(true);
    expect(matches('/?a=1')).to.equal(true);
    expect(matches('//')).to.equal(true);
    expect(matches('///')).to.equal(false);
    expect(matches('/webhooks')).to.equal(false);
  });

  it('reads a dot in the path as a dot', () => {
    const matches = webhookPathMatcher('/hooks.v1');
    expect(matches('/hooks.v1')).to.equal(true);
    expect(matches('/hooksXv1')).to.equal(false);
  });

  // What a failed delivery's log line names: never the authority, which may carry credentials.
  it('gives a target’s path alone, the absolute form’s authority and credentials left out', () => {
    expect(targetPath('http://user:secret@recv.example/webhooks?a=1')).to.equal('/webhooks');
    expect(targetPath('/webhooks/?a=1')).to.equal('/webhooks/');
    expect(targetPath(undefined)).to.equal('');
  });
});
