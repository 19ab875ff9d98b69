// What the messages drop from a name (messages/sanitize-name.ts): white space and line breaks at
// its ends, C0 and C1 controls, DEL, and the bidi embeddings, overrides and isolates.
// eslint-disable-next-line no-control-regex
const showsNothing = /^[\s\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$/;

/**
 * The name a record keeps for a user or community: the payload's, or the id when the payload has
 * none or one the messages would show as nothing ("" or spaces: " commented on your post in ").
 */
export function nameOrId(name: string | undefined, id: string): string {
  return name === undefined || showsNothing.test(name) ? id : name;
}
