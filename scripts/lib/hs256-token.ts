import { SignJWT } from 'jose';

/** A bearer token for `userId` signed with the shared secret (JWT_SECRET), as the tray API accepts. */
export function hs256Token(secret: string, userId: string, expiresIn = '1h'): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(userId)
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret));
}
