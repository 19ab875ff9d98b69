/* global document, location, sessionStorage, AbortController, setTimeout */
// The demo page's script: one user's inbox through the public API only (history, counts, read,
// seen, archive, snooze, mutes, ticket, stream). An ES module from the same origin (the
// Content-Security-Policy refuses inline scripts) that makes every call and reads the live stream
// through the client package, built and served by the tray service, as an app's page would take
// it from npm.
import { createTrayClient } from '/demo/client/index.js';

const $ = (id) => document.getElementById(id);
const state = {
  locale: '',
  client: undefined,
  stream: undefined,
  records: [],
  mutes: new Set(),
  /** Counts the trays opened: an answer for one opened before is dropped, not shown on this one. */
  opened: 0,
  /** The history read the page waits for, and what the stream said meanwhile (loadHistory). */
  load: undefined,
  /** The tray opened that failed (failTray): nothing read for it afterwards is shown. */
  failed: 0,
};

/** The pasted token, read at each use: the stream asks for it again when the one it used expires. */
const token = () => $('token').value.trim();

function setStatus(text) {
  $('status').textContent = text;
}

function setBadge(id, count) {
  const badge = $(id);
  badge.textContent = String(count);
  badge.classList.toggle('zero', count === 0);
}

/** What muting a record silences: its post, or for a community's post record the community. */
function muteTargetOf(record) {
  if (record.verb === 'post') return { targetType: 'community', targetId: record.targetId };
  // Replies, reactions to comments and mentions in comments target the comment: mute its post.
  const onComment = !['comment', 'reaction'].includes(record.verb) && record.parentTargetId;
  return { targetType: 'post', targetId: onComment ? record.parentTargetId : record.targetId };
}

const muteKey = ({ targetType, targetId }) => `${targetType}:${targetId}`;

/** A button that calls the API once and reports a failure in the status line. */
function action(className, label, call) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = className;
  button.textContent = label;
  button.addEventListener('click', () => {
    button.disabled = true;
    call().catch((error) => {
      button.disabled = false;
      setStatus(`${label} failed: ${error.message}`);
    });
  });
  return button;
}

function render() {
  const list = $('records');
  list.replaceChildren(
    ...state.records.map((record) => {
      const item = document.createElement('li');
      item.dataset.id = record.v_tarid_uid;
      item.className = record.hasRead ? 'read' : 'unread';
      if (record.isSeen === false) item.classList.add('unseen');
      if (record.fresh) item.classList.add('fresh');
      const text = document.createElement('div');
      const description = document.createElement('span');
      description.className = 'description';
      description.textContent = record.description;
      const time = document.createElement('time');
      time.textContent = new Date(record.lastUpdate).toLocaleString(state.locale);
      text.append(description, time);
      const actions = document.createElement('div');
      actions.className = 'actions';
      const ids = [record.v_tarid_uid];
      if (!record.hasRead) {
        actions.append(
          action('mark-read', 'Mark read', () => state.client.read(record.verb, record.targetId)),
        );
      }
      actions.append(
        action('archive', 'Archive', () => state.client.archive(ids)),
        action('snooze', 'Snooze 5 s', () => state.client.snooze(ids, Date.now() + 5_000)),
      );
      const target = muteTargetOf(record);
      actions.append(
        state.mutes.has(muteKey(target))
          ? action('unmute', `Unmute ${target.targetType}`, async () => {
              await state.client.unmute(target);
              state.mutes.delete(muteKey(target));
              render();
            })
          : action('mute', `Mute ${target.targetType}`, async () => {
              await state.client.mute(target);
              state.mutes.add(muteKey(target));
              render();
            }),
      );
      item.append(text, actions);
      return item;
    }),
  );
}

function sortAndRender() {
  state.records.sort((a, b) => b.lastUpdate - a.lastUpdate);
  render();
}

/** The page shows the inbox: records neither archived nor snoozed now. */
const inInbox = (record) =>
  record.archivedAt == null && (record.snoozedUntil == null || record.snoozedUntil <= Date.now());

function drop(ids) {
  const gone = new Set(ids);
  state.records = state.records.filter((record) => !gone.has(record.v_tarid_uid));
  render();
}

function upsert(record) {
  state.records = state.records.filter((known) => known.v_tarid_uid !== record.v_tarid_uid);
  if (inInbox(record)) state.records.push({ ...record, fresh: true });
  sortAndRender();
}

/** Each record's state by id, for events that change one field of several records. */
function update(ids, change) {
  const changed = new Set(ids);
  for (const record of state.records) if (changed.has(record.v_tarid_uid)) change(record);
  render();
}

/**
 * Reads the inbox's first page into the list. The stream runs alongside, and the page may have
 * been read before a change the stream announces ahead of it: events that drop or mark records
 * find nothing to change in the list for a record that is only in the page. So what the stream
 * says while the read is on its way is kept here and applied to the page when it comes: records
 * it sent or took out of the inbox, read and seen marks, a deleted tray. A read that another tray
 * or a reset replaced is dropped, answer or error: the one that replaced it speaks for the page.
 */
async function loadHistory(opened, again = false) {
  if (state.failed === opened) return;
  const load = { settled: new Set(), marks: new Map(), cleared: false };
  state.load = load;
  const current = () => opened === state.opened && state.load === load && state.failed !== opened;
  let page;
  try {
    page = await state.client.historyPage(undefined, 'inbox');
  } catch (error) {
    if (current()) throw error;
    return;
  }
  if (!current()) return;
  state.load = undefined;
  // Deleted after the read began: what the page holds is gone, and the stream sends again what
  // was stored since the delete.
  if (load.cleared) return;
  // Read again (listen): the first read's rows are older than this page, which drops those
  // archived, snoozed or deleted since; what the stream delivered (fresh) stays.
  if (again) state.records = state.records.filter((record) => record.fresh);
  // A record the stream already delivered is at least as new as the page's copy.
  const streamed = new Set(state.records.map((record) => record.v_tarid_uid));
  for (const record of page.data) {
    const id = record.v_tarid_uid;
    if (streamed.has(id) || load.settled.has(id)) continue;
    state.records.push({ ...record, ...load.marks.get(id) });
  }
  sortAndRender();
}

/** A mark the stream sent while a history read is on its way, for records only that page holds. */
function markPending(ids, mark) {
  if (!state.load) return;
  for (const id of ids) state.load.marks.set(id, { ...state.load.marks.get(id), ...mark });
}

/** The stream's word on these records came after the history read began: the page's copies are older. */
function settlePending(ids) {
  for (const id of ids) state.load?.settled.add(id);
}

/** The tray cannot be read: nothing of it is shown, not even half of it from its stream. */
function failTray(opened, error) {
  if (opened !== state.opened) return;
  // Also for the history read the aborted stream's end lets start (listen's `subscribed`).
  state.failed = opened;
  state.stream?.abort();
  showNoTray();
  setStatus(`Could not load the tray: ${error.message}`);
}

async function loadMutes(opened) {
  const mutes = await state.client.mutes();
  if (opened !== state.opened) return;
  state.mutes = new Set(mutes.map(muteKey));
  render();
}

/** No user's tray on the page: no records, zero badges, nothing to mark. */
function showNoTray() {
  state.load = undefined;
  state.records = [];
  state.mutes = new Set();
  render();
  setBadge('badge', 0);
  setBadge('unseen', 0);
  $('mark-all').disabled = true;
  $('mark-seen').disabled = true;
}

/** One stream event, typed by the client (docs/live-tray.md lists them). */
function apply({ event, data }) {
  switch (event) {
    case 'unread':
      // The first event of every connection, so also the sign that the stream is (back) up.
      setStatus('Live: updates appear as they happen.');
      setBadge('badge', data.totalUnreadCount);
      setBadge('unseen', data.totalUnseenCount ?? 0);
      return;
    case 'record':
      // New, changed, or back in the inbox (unarchived, snooze ended); or a catch-up's record
      // archived or snoozed meanwhile, which upsert leaves out.
      settlePending([data.v_tarid_uid]);
      upsert(data);
      return;
    case 'read':
      markPending(data.ids, { hasRead: true, isSeen: true });
      update(data.ids, (record) => Object.assign(record, { hasRead: true, isSeen: true }));
      return;
    case 'seen':
      markPending(data.ids, { isSeen: true });
      update(data.ids, (record) => (record.isSeen = true));
      return;
    case 'archived':
    case 'snoozed':
    case 'removed':
      settlePending(data.ids);
      drop(data.ids);
      return;
    case 'cleared':
      if (state.load) state.load.cleared = true;
      state.records = [];
      render();
      return;
    case 'reset': {
      // The stream missed too much to catch up: the list is read again, shown empty meanwhile,
      // and a read that fails ends the tray as one that fails on opening does.
      const opened = state.opened;
      state.records = [];
      render();
      loadHistory(opened).catch((error) => failTray(opened, error));
      return;
    }
    case 'replaced':
      // The last event: the client does not reconnect by itself, or two tabs would take the
      // place from each other for ever. Opening the tray again takes it back here.
      setStatus('Paused: this tray was opened in another tab or app. Open it again to take it back here.');
      return;
  }
}

/**
 * The client's stream takes a ticket per connection, reconnects after drops and token expiry
 * resuming from the last event, and ends with an error only when the service refuses for good.
 */
/** How long the history waits for the stream's first event before it is read anyway. */
const FIRST_EVENT_WAIT_MS = 5_000;

/**
 * Listens to the tray's stream; `subscribed` resolves at its first event, which the service sends
 * once the stream receives every change (also when the stream ends first, or after
 * FIRST_EVENT_WAIT_MS: a stream that cannot connect must not keep the history from showing). A
 * history read after that wait may have missed what was stored before the stream subscribed, so
 * the history is read again at the stream's first event, in place of the first read's records.
 */
function listen(opened) {
  state.stream?.abort();
  const controller = new AbortController();
  state.stream = controller;
  let first;
  let waitedOut = false;
  const subscribed = new Promise((resolve) => {
    first = resolve;
    setTimeout(() => {
      waitedOut = true;
      resolve();
    }, FIRST_EVENT_WAIT_MS);
  });
  let heard = false;
  const firstEvent = () => {
    if (heard) return;
    heard = true;
    if (waitedOut) loadHistory(opened, true).catch((error) => failTray(opened, error));
    first();
  };
  const events = state.client.stream({
    signal: controller.signal,
    onState: (connection) => {
      if (connection === 'waiting') setStatus('Disconnected; reconnecting…');
    },
  });
  void (async () => {
    try {
      for await (const event of events) {
        // Another tray was opened: what is still on its way from this one is not for it.
        if (controller.signal.aborted) return;
        apply(event);
        firstEvent();
      }
    } catch (error) {
      if (!controller.signal.aborted)
        setStatus(`Stream stopped: ${error.message} (${error.code ?? 'no code'})`);
    } finally {
      first();
    }
  })();
  return subscribed;
}

async function open() {
  const opened = ++state.opened;
  // Nothing of the tray shown before stays, also when this one is refused.
  showNoTray();
  state.locale = $('locale').value;
  state.client = createTrayClient({ baseUrl: location.origin, getToken: token, locale: state.locale });
  sessionStorage.setItem('tray-demo-token', token());
  setStatus('Loading…');
  try {
    // The stream first, and the history once the stream has its first event: from then on it sends
    // every change, so nothing falls between the history read and the stream (a record in both is
    // shown once).
    const subscribed = listen(opened);
    await Promise.all([subscribed.then(() => loadHistory(opened)), loadMutes(opened)]);
    // Another tray was opened, or this one failed meanwhile (a reset's read, failTray).
    if (opened !== state.opened || state.stream?.signal.aborted) return;
    $('mark-all').disabled = false;
    $('mark-seen').disabled = false;
  } catch (error) {
    failTray(opened, error);
  }
}

$('token').value = sessionStorage.getItem('tray-demo-token') ?? '';
$('connect').addEventListener('submit', (event) => {
  event.preventDefault();
  void open();
});
$('locale').addEventListener('change', () => {
  if (token()) void open();
});
$('mark-seen').addEventListener('click', () => {
  state.client.markSeen('all').catch((error) => setStatus(`Mark all seen failed: ${error.message}`));
});
$('mark-all').addEventListener('click', () => {
  state.client.markAllAsRead().catch((error) => setStatus(`Mark all failed: ${error.message}`));
});
