import { z } from 'zod';
import { eventId } from './event-id.ts';
import { isoDateTimeProblemMessages, parseIsoDateTime } from './iso-date-time.ts';

// Payload schemas of the events that change the tray (docs/contract.md#event-catalogue). Unknown extra
// fields are allowed: the platform may add fields without breaking the tray.

// Ids have a maximum length (event-id.ts): a longer one makes the payload invalid.
const id = eventId;

/**
 * An event time: any ISO 8601 date-time with its offset (iso-date-time.ts), as epoch ms. The
 * contract says only "ISO 8601", so +0000, +00 and minutes-only times count as much as
 * 2026-11-28T10:00:00.000Z; a time without an offset, a date alone or a day that does not exist
 * makes the event invalid, naming the problem.
 */
const time = z.string().transform((value, ctx) => {
  const ms = parseIsoDateTime(value);
  if (typeof ms === 'number') return ms;
  ctx.addIssue({ code: 'custom', message: isoDateTimeProblemMessages[ms] });
  return z.NEVER;
});

/**
 * A profile's name may be left out or null (a user who never set one): the id stands in for it
 * (display-name.ts), rather than the whole event, and every record it makes for others, being
 * refused for one profile's missing name.
 */
export const userProfileSchema = z.object({
  userId: id,
  displayName: z.string().nullish(),
  avatarFileUrl: z.string().nullish(),
  avatarCustomUrl: z.string().nullish(),
});
export type UserProfile = z.infer<typeof userProfileSchema>;

const users = z.array(userProfileSchema).default([]);
/**
 * Mentions of users; entries of other types (a channel, a role, whatever the platform adds) carry
 * other fields, or none, and are left out. A user entry without its ids is a damaged payload.
 */
const userMention = z.object({ type: z.literal('user'), userIds: z.array(id) });
const otherMention = z.object({ type: z.string().refine((type) => type !== 'user') });
const mentionees = z.array(z.union([userMention, otherMention])).nullish();
const community = z.object({ communityId: id, displayName: z.string().nullish() });

/** The post a comment or reaction belongs to; decides the feed (community or user). */
export const postRefSchema = z.object({
  postId: id,
  postedUserId: id,
  targetType: z.enum(['community', 'user']),
  targetId: id,
});

export const postDidCreate = z.object({
  post: postRefSchema.extend({ text: z.string().nullish(), createdAt: time, mentionees }),
  community: community.nullish(),
  users,
});

export const commentDidCreate = z.object({
  comment: z.object({
    commentId: id,
    userId: id,
    referenceId: id,
    parentId: id.nullish(),
    segmentNumber: z.number().int().nonnegative().nullish(),
    createdAt: time,
    mentionees,
  }),
  post: postRefSchema,
  parentComment: z.object({ commentId: id, userId: id }).nullish(),
  community: community.nullish(),
  users,
});

export const reactionDidAdd = z.object({
  reaction: z.object({
    reactionId: id,
    userId: id,
    referenceType: z.enum(['post', 'comment']),
    referenceId: id,
    createdAt: time,
  }),
  post: postRefSchema,
  /** The comment a `comment` reaction is on; `referenceId`, its post, when sent. */
  comment: z.object({ commentId: id, userId: id, referenceId: id.nullish() }).nullish(),
  community: community.nullish(),
  users,
});

/** community.didJoin / didLeave; `createdAt` orders them (absent from older platforms). */
export const communityMembership = z.object({
  community: z.object({ communityId: id }),
  userIds: z.array(id).min(1),
  createdAt: time.nullish(),
});

/** user.didUpdate: the new profiles; `createdAt`, when sent, dates them (else their receipt). */
export const userDidUpdate = z.object({
  users: z.array(userProfileSchema).min(1),
  createdAt: time.nullish(),
});

/** A delete may carry the profiles or only the ids. */
export const userDidDelete = z
  .object({ users: z.array(z.object({ userId: id })).nullish(), userIds: z.array(id).nullish() })
  .refine((data) => (data.users?.length ?? 0) + (data.userIds?.length ?? 0) > 0, {
    error: 'expected users or userIds to name at least one user',
  });

/** user.didGlobalBan / user.didGlobalUnban: ordered by `createdAt`, so it is required. */
export const userGlobalBan = z.object({ userIds: z.array(id).min(1), createdAt: time, users });

/** post.didDelete: the post as in comment.didCreate, its community when on one, deletedAt. */
export const postDidDelete = z.object({
  post: postRefSchema,
  community: community.nullish(),
  deletedAt: time,
  users,
});

/** comment.didDelete: as comment.didCreate without the comment's text and times, plus deletedAt. */
export const commentDidDelete = z.object({
  comment: z.object({ commentId: id, userId: id, referenceId: id, parentId: id.nullish() }),
  post: postRefSchema,
  parentComment: z.object({ commentId: id, userId: id }).nullish(),
  community: community.nullish(),
  deletedAt: time,
  users,
});

/** reaction.didRemove: as reaction.didAdd without the reaction's createdAt, plus removedAt. */
export const reactionDidRemove = z.object({
  reaction: z.object({
    reactionId: id,
    userId: id,
    referenceType: z.enum(['post', 'comment']),
    referenceId: id,
  }),
  post: postRefSchema,
  comment: z.object({ commentId: id, userId: id }).nullish(),
  community: community.nullish(),
  removedAt: time,
  users,
});
