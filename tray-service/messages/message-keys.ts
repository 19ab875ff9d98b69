/**
 * The messages every catalogue defines: one per shape of docs/contract.md#tray-records (verb x feed kind x
 * actor-count form), and the placeholders each one must use. A message that leaves one out would
 * drop information the reader needs; one that uses another would print an empty value.
 */

export const placeholders = ['actor1', 'actor2', 'others', 'community', 'feedOwner'] as const;
export type Placeholder = (typeof placeholders)[number];

/** Actor-count forms (docs/messages.md#catalogue-format): 1 actor, 2 actors, 3 or more (two names plus "N others"). */
export const actorForms = ['1', '2', '3+'] as const;
export type ActorForm = (typeof actorForms)[number];

type FeedKind = 'community' | 'user';
const feedKinds: readonly FeedKind[] = ['community', 'user'];

/** `named`: the feed the message names: a community, a user's feed, or none ("on your post"). */
function placeholdersOf(form: ActorForm, named: FeedKind | undefined): Placeholder[] {
  const used: Placeholder[] = ['actor1'];
  if (form !== '1') used.push('actor2');
  if (form === '3+') used.push('others');
  if (named === 'community') used.push('community');
  if (named === 'user') used.push('feedOwner');
  return used;
}

function buildMessageKeys(): ReadonlyMap<string, readonly Placeholder[]> {
  const keys = new Map<string, readonly Placeholder[]>();
  // `post` on a user feed is not a platform event (docs/contract.md#postdidcreate); it is kept so any stored record renders.
  for (const verb of ['post', 'comment', 'reaction', 'mentreact']) {
    for (const feed of feedKinds) {
      // On a user feed, comments and reactions are "on your post/comment": no feed is named (docs/contract.md#tray-records).
      const named = verb === 'post' || feed === 'community' ? feed : undefined;
      for (const form of actorForms) keys.set(`${verb}.${feed}.${form}`, placeholdersOf(form, named));
    }
  }
  // Replies read the same on user and community feeds (docs/contract.md#tray-records, "Reply").
  for (const form of actorForms) keys.set(`mentreply.${form}`, placeholdersOf(form, undefined));
  // Mentions are never grouped (docs/contract.md#postdidcreate): always one actor.
  for (const where of ['post', 'comment']) {
    for (const feed of feedKinds) keys.set(`mention.${where}.${feed}`, placeholdersOf('1', feed));
  }
  keys.set(DELETED_USER_KEY, []);
  return keys;
}

/**
 * Not a message but a name the messages show: a deleted user's, in the reader's language, put in
 * the place of a snapshot marked `deleted` (docs/messages.md#deleted-users). Plain text, no
 * placeholder; English reads the contract's `Deleted user`.
 */
export const DELETED_USER_KEY = 'name.deletedUser';

/** Catalogue key -> the placeholders that entry uses, all of them and only them. */
export const messageKeys = buildMessageKeys();
