/* global URLSearchParams */
// A filter form <-> the query parameters of the API and of the console's own address (#/view?...).
// Times travel as ISO 8601 in UTC; the form shows them in the reader's time zone.
import { fromLocalInput, toLocalInput } from './dom.js';

const TIME_FIELDS = new Set(['since', 'until']);

/** The form's non-empty values by name, times as ISO. */
export function readForm(form) {
  const params = {};
  for (const element of form.elements) {
    if (!element.name || !element.value.trim()) continue;
    const value = TIME_FIELDS.has(element.name) ? fromLocalInput(element.value) : element.value.trim();
    if (value) params[element.name] = value;
  }
  return params;
}

/** Sets every named field of the form from `params` (missing ones emptied). */
export function fillForm(form, params) {
  for (const element of form.elements) {
    if (!element.name) continue;
    const value = params[element.name] ?? '';
    element.value = TIME_FIELDS.has(element.name) && value ? toLocalInput(value) : value;
  }
}

/** `params` restricted to `names`, without empty values. */
export function pick(params, names) {
  return Object.fromEntries(names.filter((name) => params[name]).map((name) => [name, params[name]]));
}

/** A query string (no `?`) of the non-empty values, in a stable order. */
export function toQuery(params) {
  const search = new URLSearchParams();
  for (const name of Object.keys(params).sort()) if (params[name]) search.set(name, params[name]);
  return search.toString();
}

/** Two filters are the same when their query strings are. */
export const sameFilter = (a, b) => toQuery(a) === toQuery(b);

const LABELS = {
  event: 'event',
  webhook: 'webhook',
  userId: 'user id',
  communityId: 'community id',
  moderation: 'moderation',
  status: 'status',
  since: 'from',
  until: 'before',
};

/** A filter in words, e.g. `event = post.didCreate, user id = u-ana`. */
export function describeFilter(params) {
  const parts = Object.keys(LABELS)
    .filter((name) => params[name])
    .map((name) => {
      const value = TIME_FIELDS.has(name) ? new Date(params[name]).toLocaleString() : params[name];
      return `${LABELS[name]} = ${value}`;
    });
  return parts.length === 0 ? 'every stored event' : parts.join(', ');
}
