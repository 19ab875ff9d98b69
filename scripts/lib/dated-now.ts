/** A time as events carry them (`2026-11-20T10:05:00.000Z`): UTC, whole or fractional seconds. */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?Z$/;

/**
 * `event` with every time in it moved by the same amount, the latest to `now`: a sample dated on
 * the day it was written (the comment 5 minutes after its post) shows in a tray for 90 days only,
 * and sent later it would be stored but shown to no one. The times keep their order and distances.
 * Pure; an event without times comes back as it was.
 */
export function datedNow(event: unknown, now: Date): unknown {
  const times: number[] = [];
  const visit = (value: unknown, change?: (text: string) => string): unknown => {
    if (typeof value === 'string' && ISO_TIME.test(value)) {
      if (!change) times.push(Date.parse(value));
      return change ? change(value) : value;
    }
    if (Array.isArray(value)) return value.map((item) => visit(item, change));
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, visit(item, change)]));
    return value;
  };
  visit(event);
  if (times.length === 0) return event;
  const shift = now.getTime() - Math.max(...times);
  return visit(event, (text) => new Date(Date.parse(text) + shift).toISOString());
}
