/**
 * Batch size of whole-group reads (a fan-out's records, a community's members, a group's actors):
 * one batch as large as the server allows (16 MiB), not a getMore per 101 documents.
 */
export const WHOLE_GROUP = 100_000;
