import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { ClusterTls } from '../../scripts/lib/redis-cluster.ts';

/**
 * A self-signed certificate for 127.0.0.1, its own CA, written to `dir` by openssl (which every
 * Debian machine with ca-certificates has): what a test's TLS servers present and its clients trust.
 */
export function loopbackCertificate(dir: string): ClusterTls {
  const certFile = join(dir, 'loopback-cert.pem');
  const keyFile = join(dir, 'loopback-key.pem');
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
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile, caFile: certFile };
}
