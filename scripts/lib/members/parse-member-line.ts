import { parseIsoTime } from '../../../tray-service/admin/parse-iso-time.ts';
import { MAX_EVENT_ID_LENGTH } from '../../../tray-service/domain/event-id.ts';

/** One membership from an import file: the community's member list as the platform knows it. */
export interface MemberRow {
  communityId: string;
  userId: string;
  /** Epoch ms the user joined, when the file says. */
  joinedAt?: number;
}

export type LineResult = { ok: true; row: MemberRow } | { ok: false; reason: string };

/** Splits one CSV line (RFC 4180 quoting: "a,b" and "" for a quote inside quotes). */
export function splitCsvLine(line: string): string[] | undefined {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field === '') quoted = true;
    else if (char === ',') {
      fields.push(field);
      field = '';
    } else field += char;
  }
  if (quoted) return undefined;
  fields.push(field);
  return fields;
}

/**
 * No community's member joined before 2000: an epoch number below it is seconds (as many databases
 * export times), which read as milliseconds would fall in January 1970.
 */
const EARLIEST_JOIN_MS = Date.UTC(2000, 0, 1);

function parseTime(value: unknown): number | undefined | 'invalid' | 'too early' {
  if (value === undefined || value === null || value === '') return undefined;
  const epoch = (ms: number) => (ms < EARLIEST_JOIN_MS ? 'too early' : ms);
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? epoch(value) : 'invalid';
  if (typeof value !== 'string') return 'invalid';
  if (/^\d{1,15}$/.test(value)) return epoch(Number(value));
  // As the admin API reads times: a real calendar day (no roll-over), UTC without an offset.
  return parseIsoTime(value)?.getTime() ?? 'invalid';
}

// No whitespace or control characters (\p{Cc}): ids are matched exactly by the worker. At most
// what an event may carry: a longer one no join, leave or post can ever name.
const idPattern = /^[^\s\p{Cc}]+$/u;
const isId = (value: unknown): value is string =>
  typeof value === 'string' && value.length <= MAX_EVENT_ID_LENGTH && idPattern.test(value);
const idProblem = `expected a non-empty id of at most ${MAX_EVENT_ID_LENGTH} characters without spaces`;

export function toMemberRow(communityId: unknown, userId: unknown, joinedAt: unknown): LineResult {
  if (!isId(communityId)) return { ok: false, reason: `communityId: ${idProblem}` };
  if (!isId(userId)) return { ok: false, reason: `userId: ${idProblem}` };
  const time = parseTime(joinedAt);
  if (time === 'invalid')
    return { ok: false, reason: 'joinedAt: expected an ISO 8601 time or epoch milliseconds' };
  if (time === 'too early') {
    return {
      ok: false,
      reason: 'joinedAt: epoch milliseconds before 2000 (epoch seconds? multiply by 1000)',
    };
  }
  return { ok: true, row: { communityId, userId, ...(time === undefined ? {} : { joinedAt: time }) } };
}

const CSV_COLUMNS = ['communityId', 'userId', 'joinedAt'];

/** A header name without case, spaces, `_` or `-`: `joined_at` and `Joined At` read as joinedAt. */
const looseName = (name: string) => name.toLowerCase().replace(/[\s_-]/g, '');

/**
 * Header names that mean a column read here but are spelled otherwise, with the spelling read. A
 * spreadsheet's `joined_at` was ignored: every member joined at the as-of time, and an import with
 * the right header could not correct it (an active member keeps the join time the tray has).
 */
function misspeltColumns(names: string[]): string[] {
  return names.flatMap((name) => {
    const meant = CSV_COLUMNS.find((column) => column !== name && looseName(column) === looseName(name));
    return meant === undefined ? [] : [`${name}: expected ${meant}`];
  });
}

/** Columns of a CSV file, from its header: communityId and userId are required, joinedAt optional. */
export function csvColumns(header: string): { communityId: number; userId: number; joinedAt?: number } {
  const names = (splitCsvLine(header) ?? []).map((name) => name.trim());
  const misspelt = misspeltColumns(names);
  if (misspelt.length > 0) {
    throw new Error(
      `the CSV header misspells columns (${misspelt.slice(0, 3).join(', ')}): only the exact names are read; rename them`,
    );
  }
  const communityId = names.indexOf('communityId');
  const userId = names.indexOf('userId');
  if (communityId < 0 || userId < 0) {
    throw new Error(
      `the CSV header must name communityId and userId (optional joinedAt); found: ${header.slice(0, 200)}`,
    );
  }
  const joinedAt = names.indexOf('joinedAt');
  return { communityId, userId, ...(joinedAt < 0 ? {} : { joinedAt }) };
}

export function parseCsvLine(line: string, columns: ReturnType<typeof csvColumns>): LineResult {
  const fields = splitCsvLine(line);
  if (!fields) return { ok: false, reason: 'unterminated quoted field' };
  const at = (index: number | undefined) => (index === undefined ? undefined : fields[index]?.trim());
  return toMemberRow(at(columns.communityId), at(columns.userId), at(columns.joinedAt));
}

const MEMBER_KEYS = new Set(['communityId', 'userId', 'joinedAt']);

export function parseNdjsonLine(line: string): LineResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  const otherKind = otherKindOfValue(value);
  if (otherKind !== undefined) return { ok: false, reason: otherKind };
  const record = value as Record<string, unknown>;
  return toMemberRow(record.communityId, record.userId, record.joinedAt);
}

/**
 * Why a line is JSON of another kind than a member line (not an object, or keys no member line
 * has), or undefined: checked on a file's first line before anything is opened, as a CSV's header
 * is. A member line with a bad value, or a line cut short, is one line's error, not the file's.
 */
export function otherKindOfLine(line: string): string | undefined {
  try {
    return otherKindOfValue(JSON.parse(line));
  } catch {
    return undefined;
  }
}

function otherKindOfValue(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'expected a JSON object';
  // A line of another export (an events export has communityId and userId too) is no member.
  const unexpected = Object.keys(value).filter((key) => !MEMBER_KEYS.has(key));
  if (unexpected.length === 0) return undefined;
  return `unexpected keys ${unexpected.slice(0, 5).join(', ')} (a member line holds communityId, userId and joinedAt)`;
}
