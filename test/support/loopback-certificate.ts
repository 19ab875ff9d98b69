import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterTls } from '../../scripts/lib/redis-cluster.ts';

/**
 * A self-signed certificate for the host name `localhost` only (no IP address), its own CA, written
 * to `dir` by openssl: what a test's TLS servers present and its clients trust. Naming no address,
 * it fails a client that checks it against the address a name resolved to instead of the name.
 * The request's own config file keeps the system's openssl.cnf (whose extensions differ between
 * distributions and versions) out of it.
 */
export function loopbackCertificate(dir: string): ClusterTls {
  const certFile = join(dir, 'loopback-cert.pem');
  const keyFile = join(dir, 'loopback-key.pem');
  const config = join(dir, 'loopback-cert.cnf');
  writeFileSync(
    config,
    [
      '[req]',
      'distinguished_name = dn',
      'x509_extensions = v3',
      'prompt = no',
      '[dn]',
      'CN = localhost',
      '[v3]',
      'subjectAltName = DNS:localhost',
      'basicConstraints = critical,CA:TRUE',
      '',
    ].join('\n'),
  );
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-config',
      config,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { certFile, keyFile, caFile: certFile };
}
