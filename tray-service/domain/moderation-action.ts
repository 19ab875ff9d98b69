/** What a rule asks for; the moderation team's own system acts on it. */
export const moderationActions = ['flag', 'ban-request'] as const;
export type ModerationAction = (typeof moderationActions)[number];
