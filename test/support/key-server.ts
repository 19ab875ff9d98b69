import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real JWKS endpoint on a loopback port, serving one RS256 key (kid `k1`). `mode` decides each
 * answer and `requests` counts them; `stop` closes the port (a refused connection) and `start`
 * opens the same port again, so one verifier sees its key server fail, vanish and come back.
 */
export interface KeyServer {
  mode: 'ok' | '503' | 'not-json';
  requests: number;
  readonly url: string;
  /** The `aud` its tokens carry unless `claims` says otherwise: JWT_JWKS_URL needs JWT_AUDIENCE. */
  readonly audience: string;
  /**
   * An RS256 token for `sub` and `audience`, valid for an hour, naming `kid` (default the served
   * key's), signed by that key when the server has one of that id (addKey), else by `k1`'s.
   */
  sign(sub: string, options?: { kid?: string; claims?: JWTPayload }): Promise<string>;
  /** Serves one more key, of id `kid`, beside those served already (a provider's key rotation). */
  addKey(kid: string): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

const KEY_SERVER_AUDIENCE = 'tray';

export async function startKeyServer(): Promise<KeyServer> {
  const keys = await generateKeyPair('RS256', { extractable: true });
  const signers = new Map([['k1', keys.privateKey]]);
  const served = [{ ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }];
  let jwks = JSON.stringify({ keys: served });
  const counters = { mode: 'ok' as KeyServer['mode'], requests: 0 };
  const server = createServer((_req, res) => {
    counters.requests += 1;
    if (counters.mode === '503') {
      res.writeHead(503).end('down for maintenance');
      return;
    }
    res.setHeader('Content-Type', 'application/json');
    res.end(counters.mode === 'not-json' ? '<html>' : jwks);
  });
  let port = 0;
  const listen = () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen();
  port = (server.address() as AddressInfo).port;
  return {
    get mode() {
      return counters.mode;
    },
    set mode(mode) {
      counters.mode = mode;
    },
    get requests() {
      return counters.requests;
    },
    set requests(count) {
      counters.requests = count;
    },
    url: `http://127.0.0.1:${port}/jwks.json`,
    audience: KEY_SERVER_AUDIENCE,
    sign: (sub, { kid = 'k1', claims = {} } = {}) =>
      new SignJWT({ aud: KEY_SERVER_AUDIENCE, ...claims, sub })
        .setProtectedHeader({ alg: 'RS256', kid })
        .setExpirationTime('1h')
        .sign(signers.get(kid) ?? keys.privateKey),
    async addKey(kid) {
      const added = await generateKeyPair('RS256', { extractable: true });
      signers.set(kid, added.privateKey);
      served.push({ ...(await exportJWK(added.publicKey)), kid, alg: 'RS256', use: 'sig' });
      jwks = JSON.stringify({ keys: served });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // fetch keeps connections alive: end them, so the port refuses the next one.
        server.closeAllConnections();
      }),
    start: listen,
  };
}
