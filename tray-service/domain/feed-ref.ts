/** Where the activity happened; decides the message shape (community feed vs user feed). */
export type FeedRef =
  | { kind: 'community'; id: string; name: string }
  /** A user feed; `name` is the feed owner's display name ("... in Ana feed"). */
  | { kind: 'user'; id: string; name: string };
