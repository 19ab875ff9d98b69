import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { resolveJwtConfig, type JwtConfig } from '../../../shared/config/tray-api-config.ts';
import { adminJwtKeyFingerprint } from '../../../tray-service/admin/admin-jwt-verifier.ts';

const SECRET = 'admin-jwt-key-of-the-fingerprint-tests-0';
const pem = () => String(generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
const admin = (config: JwtConfig): JwtConfig => ({ ...config, audience: 'tray-admin', issuer: 'ops' });

describe('adminJwtKeyFingerprint (what binds a JWT-opened admin session)', () => {
  const base = admin(resolveJwtConfig({ JWT_SECRET: SECRET }));

  it('is the same for the same configuration, on every instance and after a restart', () => {
    expect(adminJwtKeyFingerprint(admin(resolveJwtConfig({ JWT_SECRET: SECRET })))).to.equal(
      adminJwtKeyFingerprint(base),
    );
  });

  it('never holds the secret', () => {
    expect(adminJwtKeyFingerprint(base)).not.to.include(SECRET);
    expect(adminJwtKeyFingerprint(base)).to.match(/^[A-Za-z0-9_-]{43}$/);
  });

  it('changes with the key, its kind, and every claim an admin JWT is checked for', () => {
    const key = pem();
    const variants: JwtConfig[] = [
      admin(resolveJwtConfig({ JWT_SECRET: `${SECRET}-rotated` })),
      admin(resolveJwtConfig({ JWT_SECRET: SECRET, JWT_ALGORITHMS: ['HS512'] })),
      admin(resolveJwtConfig({ JWT_PUBLIC_KEY: key })),
      admin(resolveJwtConfig({ JWT_PUBLIC_KEY: pem() })),
      admin(resolveJwtConfig({ JWT_JWKS_URL: 'https://ops.example/jwks', JWT_AUDIENCE: 'x' })),
      admin(resolveJwtConfig({ JWT_JWKS_URL: 'https://ops.example/other-jwks', JWT_AUDIENCE: 'x' })),
      { ...base, audience: 'tray-admin-2' },
      { ...base, issuer: 'ops-2' },
      { ...base, maxTokenAge: 3600 },
    ];
    const all = [base, ...variants].map(adminJwtKeyFingerprint);
    expect(new Set(all).size).to.equal(all.length);
    expect(adminJwtKeyFingerprint(admin(resolveJwtConfig({ JWT_PUBLIC_KEY: key })))).to.equal(all[3]);
  });
});
