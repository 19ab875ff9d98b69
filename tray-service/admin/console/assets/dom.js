/* global document, Node */
// Small DOM helpers for the console's modules. Text always goes in as text (textContent), never
// as markup: event payloads are data from outside.

/** The element with this id (the page's static parts all have one). */
export const byId = (id) => {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element;
};

/**
 * Builds an element. `props`: attributes, except `className`, `dataset` (data-*) and `on`
 * (listeners by event type); `true` makes an empty attribute, `false`/`undefined` none. Children
 * are nodes or text.
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'className') element.className = value;
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name === 'on')
      for (const [type, listener] of Object.entries(value)) element.addEventListener(type, listener);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** A <time> showing an ISO time in the reader's locale and time zone, the exact value in `datetime`. */
export function timeOf(iso) {
  if (!iso) return h('span', { className: 'muted' }, '—');
  return h('time', { datetime: iso, title: iso }, new Date(iso).toLocaleString());
}

const pad = (n) => String(n).padStart(2, '0');

/** An ISO time as a datetime-local input's value (the reader's time zone, to the second). */
export function toLocalInput(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A datetime-local input's value (the reader's time zone) as an ISO time in UTC, or ''. */
export function fromLocalInput(value) {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** Shows `message` in an alert paragraph, or empties it. */
export function showError(element, error) {
  element.textContent = error ? `${error.message ?? error}` : '';
}
