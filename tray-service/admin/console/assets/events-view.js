/* global AbortController, clearTimeout, document, EventSource, fetch, setTimeout */
// The Events view: the stored events, newest first, with filters, keyset paging ("Older") and a
// live tail that puts each newly stored event at the top as the worker stores it.
import { adminUrl, getJson, pageLimit } from './api.js';
import { byId, h, showError, timeOf } from './dom.js';
import { fillForm, pick, readForm, sameFilter } from './filters.js';

/** The events filters the API takes (GET /admin/events, /tail, /export, POST /replay). */
export const EVENT_FILTERS = [
  'event',
  'webhook',
  'userId',
  'communityId',
  'moderation',
  'status',
  'since',
  'until',
];

const PAGE_SIZE = 25;
/** Rows the live tail leaves in the table, the newest: a tail left running all day keeps the page light. */
const MAX_TAIL_ROWS = 500;
/** How long tail announcements are gathered into one, so a burst is not read out event by event. */
const ANNOUNCE_MS = 1000;
/** A refused tail tries again after this long when the refusal names no wait of its own. */
const TAIL_RETRY_S = 5;
/** The longest wait a refusal's Retry-After may ask for before the tail tries again. */
const MAX_TAIL_RETRY_S = 300;
/** How long the question why a tail was refused may wait for its answer. */
const PROBE_TIMEOUT_MS = 10_000;

/** One event's row; its button opens the detail. */
function eventRow(view, fresh = false) {
  return h(
    'tr',
    { dataset: { key: view.key }, className: fresh ? 'fresh' : undefined },
    h('td', {}, timeOf(view.receivedAt)),
    h('td', {}, h('button', { type: 'button', className: 'link', dataset: { key: view.key } }, view.event)),
    h('td', {}, view.webhook),
    h('td', {}, view.userId ?? '—'),
    h('td', {}, view.communityId ?? '—'),
    h('td', {}, h('span', { className: `badge status-${view.status}` }, view.status)),
    h(
      'td',
      {},
      view.moderation ? h('span', { className: `badge action-${view.moderation}` }, view.moderation) : '—',
    ),
    h('td', { className: 'mono', title: view.key }, `${view.key.slice(0, 12)}…`),
  );
}

/**
 * `navigate(params)` changes the address to this filter; `openDetail(key, opener)` shows an event.
 */
export function createEventsView({ navigate, openDetail }) {
  const form = byId('events-filter');
  const rows = byId('events-rows');
  const older = byId('events-older');
  const empty = byId('events-empty');
  const count = byId('events-count');
  const error = byId('events-error');
  const toggle = byId('tail-toggle');
  const tailState = byId('tail-state');
  const tailLog = byId('tail-log');
  let filter;
  let cursor = null;
  let shown = new Set();
  let source;
  let pendingAnnouncements = [];
  let announceTimer;
  /** Counts loads, so the answer to an older request never replaces a newer one's rows. */
  let loads = 0;
  /** Whether the live tail pushed older rows out of the table since the list was loaded. */
  let trimmed = false;
  /**
   * The events the tail showed while a new list was on its way (undefined when none is): stored
   * after the server read the list maybe, so not in it, and kept above it when it arrives.
   */
  let tailedMeanwhile;

  const updateCount = () => {
    empty.hidden = shown.size > 0;
    count.textContent =
      shown.size === 0
        ? ''
        : trimmed
          ? `Showing the newest ${shown.size} events: older ones left the page as the live tail added new ones. Apply filters to list them again.`
          : `Showing ${shown.size} event${shown.size === 1 ? '' : 's'}.`;
  };

  /** Drops the oldest rows past MAX_TAIL_ROWS. */
  function trim() {
    while (shown.size > MAX_TAIL_ROWS && rows.lastElementChild) {
      shown.delete(rows.lastElementChild.dataset.key);
      rows.lastElementChild.remove();
      trimmed = true;
    }
    if (trimmed) {
      // The cursor follows the last row loaded, now gone: "Older" would skip the rows dropped.
      cursor = null;
      older.hidden = true;
    }
  }

  async function load(reset) {
    const ticket = ++loads;
    if (reset) tailedMeanwhile = [];
    older.disabled = true;
    showError(error);
    try {
      const page = await getJson('/events', {
        ...filter,
        limit: pageLimit(PAGE_SIZE),
        cursor: reset ? undefined : cursor,
      });
      if (ticket !== loads) return;
      if (reset) {
        rows.replaceChildren();
        shown = new Set();
        trimmed = false;
        const listed = new Set(page.items.map((view) => view.key));
        for (const view of (tailedMeanwhile ?? []).reverse()) {
          if (listed.has(view.key) || shown.has(view.key)) continue;
          shown.add(view.key);
          rows.append(eventRow(view, true));
        }
        tailedMeanwhile = undefined;
      }
      for (const view of page.items) {
        if (shown.has(view.key)) continue;
        shown.add(view.key);
        rows.append(eventRow(view));
      }
      // Older rows dropped since this load began: its cursor would skip them.
      cursor = trimmed ? null : page.nextCursor;
      older.hidden = !cursor;
      updateCount();
    } catch (failure) {
      // The rows the tail added stay on the page; nothing more to keep for a list that failed.
      if (ticket === loads) tailedMeanwhile = undefined;
      showError(error, failure);
    } finally {
      older.disabled = false;
    }
  }

  function announce(view) {
    pendingAnnouncements.push(view.event);
    if (announceTimer !== undefined) return;
    announceTimer = setTimeout(() => {
      const names = pendingAnnouncements;
      pendingAnnouncements = [];
      announceTimer = undefined;
      const text = names.length === 1 ? `New event: ${names[0]}` : `${names.length} new events`;
      tailLog.append(h('p', {}, text));
      while (tailLog.childElementCount > 5) tailLog.firstElementChild.remove();
    }, ANNOUNCE_MS);
  }

  /** Counts starts and stops: an answer about an older tail never changes a newer one. */
  let tails = 0;
  let retryTimer;
  /** The request asking why a tail was refused, while it runs: it may hold a tail's place. */
  let probe;

  function stopTail(state = 'Live tail off.') {
    tails += 1;
    clearTimeout(retryTimer);
    probe?.abort();
    probe = undefined;
    source?.close();
    source = undefined;
    tailState.textContent = state;
  }

  /**
   * Why the server refused the tail at `url`, or undefined when it now accepts it (the refusal has
   * passed) or does not answer. EventSource tells no status, so the request is made once more with
   * fetch, dropped as soon as its answer's head arrives.
   */
  async function refusalOf(url) {
    const controller = new AbortController();
    probe = controller;
    const timeout = setTimeout(() => controller.abort(), PROBE_TIMEOUT_MS);
    try {
      const response = await fetch(url, {
        headers: { accept: 'text/event-stream' },
        credentials: 'same-origin',
        signal: controller.signal,
      });
      if (response.ok) return undefined;
      const json = await response.json().catch(() => undefined);
      const error = json?.error ?? json;
      const retryAfter = Number(response.headers.get('retry-after'));
      return {
        status: response.status,
        message: error?.message ?? `${response.status} ${response.statusText}`,
        retryAfterS:
          Number.isFinite(retryAfter) && retryAfter > 0
            ? Math.min(retryAfter, MAX_TAIL_RETRY_S)
            : TAIL_RETRY_S,
      };
    } catch {
      return undefined;
    } finally {
      clearTimeout(timeout);
      controller.abort();
      if (probe === controller) probe = undefined;
    }
  }

  /** Says why the tail was refused; tries again later when the refusal is a passing one. */
  async function refused(url) {
    const tail = tails;
    tailState.textContent = 'Live tail refused: asking the server why…';
    const why = await refusalOf(url);
    if (tail !== tails) return;
    const later = (seconds, state) => {
      tailState.textContent = state;
      retryTimer = setTimeout(() => {
        if (tail === tails) startTail();
      }, seconds * 1000);
    };
    if (why === undefined) later(TAIL_RETRY_S, `Live tail reconnecting in ${TAIL_RETRY_S} s…`);
    else if (why.status === 401) {
      toggle.checked = false;
      stopTail('Live tail stopped: your session has ended. Reload the page to sign in again.');
    } else if (why.status === 429 || why.status === 503)
      later(why.retryAfterS, `Live tail waiting: ${why.message}. Trying again in ${why.retryAfterS} s.`);
    else {
      toggle.checked = false;
      stopTail(`Live tail stopped: ${why.message}`);
    }
  }

  function startTail() {
    stopTail('Live tail connecting…');
    const url = adminUrl('/events/tail', filter);
    const stream = new EventSource(url);
    source = stream;
    stream.addEventListener('open', () => {
      tailState.textContent = 'Live tail on: new events appear at the top.';
    });
    stream.addEventListener('stored', (message) => {
      const view = JSON.parse(message.data);
      // Before the check: the rows shown now may be the previous filter's, about to be replaced.
      tailedMeanwhile?.push(view);
      if (shown.has(view.key)) return;
      shown.add(view.key);
      rows.prepend(eventRow(view, true));
      trim();
      updateCount();
      announce(view);
    });
    stream.addEventListener('error', () => {
      if (source !== stream) return;
      if (stream.readyState === EventSource.CLOSED) {
        // Refused (the session ended, every tail open, the filter invalid): the browser will not
        // retry by itself.
        stream.close();
        source = undefined;
        void refused(url);
      } else {
        tailState.textContent = 'Live tail reconnecting…';
      }
    });
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    navigate(pick(readForm(form), EVENT_FILTERS));
  });
  form.addEventListener('reset', (event) => {
    event.preventDefault();
    fillForm(form, {});
    navigate({});
  });
  older.addEventListener('click', () => load(false));
  toggle.addEventListener('change', () => (toggle.checked ? startTail() : stopTail()));
  rows.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-key]');
    if (button) openDetail(button.dataset.key, button);
  });
  // Up and down move between the rows' buttons; Enter (the button's own) opens one.
  rows.addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    const buttons = [...rows.querySelectorAll('button[data-key]')];
    const index = buttons.indexOf(document.activeElement);
    if (index === -1) return;
    const next = buttons[index + (event.key === 'ArrowDown' ? 1 : -1)];
    if (next) {
      event.preventDefault();
      next.focus();
    }
  });

  return {
    /** Shows the events for `params`; the same filter again keeps the rows already loaded. */
    show(params, { reload = false } = {}) {
      const next = pick(params, EVENT_FILTERS);
      if (filter !== undefined && sameFilter(filter, next) && !reload) return;
      filter = next;
      fillForm(form, filter);
      load(true);
      if (toggle.checked) startTail();
    },
    get filter() {
      return filter ?? {};
    },
  };
}
