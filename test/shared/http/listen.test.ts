import { expect } from 'chai';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { closeServer, listen } from '../../../shared/http/listen.ts';

describe('listen()', () => {
  it('binds loopback when no host is given, so nothing is reachable from other machines by default', async () => {
    const server = await listen(express(), { port: 0 });
    try {
      expect((server.address() as AddressInfo).address).to.equal('127.0.0.1');
    } finally {
      await closeServer(server);
    }
  });
  it('binds the host it is given', async () => {
    const server = await listen(express(), { port: 0, host: '::1' });
    try {
      expect((server.address() as AddressInfo).address).to.equal('::1');
    } finally {
      await closeServer(server);
    }
  });
});
