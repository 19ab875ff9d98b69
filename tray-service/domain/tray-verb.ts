/** Record verbs: the four of section 4.1 plus the mention verbs of section 2.3 (v3 only). */
export const trayVerbs = ['post', 'comment', 'reaction', 'mentreply', 'mention', 'mentreact'] as const;
export type TrayVerb = (typeof trayVerbs)[number];
