import { nameOf, type TestEnvelope } from '../worker/event-builder.ts';

/** user.didGlobalBan / user.didGlobalUnban of `userIds` at the platform time `createdAt` (ISO). */
export function banEvent(kind: 'ban' | 'unban', userIds: string[], createdAt: string): TestEnvelope {
  return {
    event: kind === 'ban' ? 'user.didGlobalBan' : 'user.didGlobalUnban',
    data: {
      userIds,
      createdAt,
      users: userIds.map((userId) => ({ userId, displayName: nameOf(userId) })),
    },
  };
}
