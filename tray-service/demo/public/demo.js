/* global document, fetch, sessionStorage, AbortController */
// The demo page's script: one user's tray through the public API only (history, read, ticket,
// stream). An ES module from the same origin (the Content-Security-Policy refuses inline scripts)
// that takes the live stream from the client package, built and served by the tray service, as an
// app's page would take it from npm.
import { openTrayStream } from '/demo/client/stream/index.js';

const $ = (id) => document.getElementById(id);
const state = { locale: '', stream: undefined, records: [] };

/** The pasted token, read at each use: the stream asks for it again when the one it used expires. */
const token = () => $('token').value.trim();

function setStatus(text) {
  $('status').textContent = text;
}

function setBadge(count) {
  const badge = $('badge');
  badge.textContent = String(count);
  badge.classList.toggle('zero', count === 0);
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: {
      Authorization: `Bearer ${token()}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${response.status} ${json.message ?? ''}`);
  return json;
}

function render() {
  const list = $('records');
  list.replaceChildren(
    ...state.records.map((record) => {
      const item = document.createElement('li');
      item.dataset.id = record.v_tarid_uid;
      item.className = record.hasRead ? 'read' : 'unread';
      if (record.fresh) item.classList.add('fresh');
      const text = document.createElement('div');
      const description = document.createElement('span');
      description.className = 'description';
      description.textContent = record.description;
      const time = document.createElement('time');
      time.textContent = new Date(record.lastUpdate).toLocaleString(state.locale);
      text.append(description, time);
      item.append(text);
      if (!record.hasRead) {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'mark-read';
        button.textContent = 'Mark read';
        button.addEventListener('click', () => {
          button.disabled = true;
          api('POST', '/notifications/v2/read', { verb: record.verb, targetId: record.targetId }).catch(
            (error) => setStatus(`Mark read failed: ${error.message}`),
          );
        });
        item.append(button);
      }
      return item;
    }),
  );
}

function sortAndRender() {
  state.records.sort((a, b) => b.lastUpdate - a.lastUpdate);
  render();
}

function upsert(record) {
  state.records = state.records.filter((known) => known.v_tarid_uid !== record.v_tarid_uid);
  state.records.push({ ...record, fresh: true });
  sortAndRender();
}

async function loadHistory() {
  const page = await api('GET', `/notifications/v3/history?locale=${encodeURIComponent(state.locale)}`);
  // A record the stream already delivered is at least as new as the page's copy.
  const streamed = new Set(state.records.map((record) => record.v_tarid_uid));
  state.records.push(...page.data.filter((record) => !streamed.has(record.v_tarid_uid)));
  sortAndRender();
}

/** One stream event, typed by the client (docs/live-tray.md lists them). */
function apply({ event, data }) {
  switch (event) {
    case 'unread':
      // The first event of every connection, so also the sign that the stream is (back) up.
      setStatus('Live: updates appear as they happen.');
      setBadge(data.totalUnreadCount);
      return;
    case 'record':
      upsert(data);
      return;
    case 'read': {
      const ids = new Set(data.ids);
      for (const record of state.records) if (ids.has(record.v_tarid_uid)) record.hasRead = true;
      render();
      return;
    }
    case 'cleared':
      state.records = [];
      render();
      return;
    case 'reset':
      state.records = [];
      void loadHistory();
      return;
  }
}

/**
 * The client's stream takes a ticket per connection, reconnects after drops and token expiry
 * resuming from the last event, and ends with an error only when the service refuses for good.
 */
async function listen() {
  state.stream?.abort();
  const controller = new AbortController();
  state.stream = controller;
  const events = openTrayStream({
    baseUrl: '',
    getToken: token,
    locale: state.locale,
    signal: controller.signal,
    onState: (connection) => {
      if (connection === 'waiting') setStatus('Disconnected; reconnecting…');
    },
  });
  try {
    for await (const event of events) apply(event);
  } catch (error) {
    setStatus(`Stream stopped: ${error.message} (${error.code ?? 'no code'})`);
  }
}

async function open() {
  state.locale = $('locale').value;
  state.records = [];
  sessionStorage.setItem('tray-demo-token', token());
  setStatus('Loading…');
  try {
    // The stream first: it sends every change from the moment it opens, so nothing falls
    // between the history read and the stream (a record in both is shown once).
    void listen();
    await loadHistory();
    $('mark-all').disabled = false;
  } catch (error) {
    setStatus(`Could not load the tray: ${error.message}`);
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
$('mark-all').addEventListener('click', () => {
  api('GET', '/notifications/v3/mark-all-as-read').catch((error) =>
    setStatus(`Mark all failed: ${error.message}`),
  );
});
