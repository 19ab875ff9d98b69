/** Who made an admin request, and until when the credential holds (epoch ms; for sessions). */
export type AdminPrincipal = { kind: 'token' } | { kind: 'jwt'; subject: string; expiresAt: number };
