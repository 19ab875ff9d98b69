/* global document, fetch, EventSource, URLSearchParams, sessionStorage, setTimeout, clearTimeout */
// The demo page's script: one user's tray through the public API only (history, read, ticket,
// stream). A same-origin file, because the Content-Security-Policy refuses inline scripts.
'use strict';

const $ = (id) => document.getElementById(id);
const state = { token: '', locale: '', source: undefined, lastEventId: '', retry: undefined, records: [] };

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
      Authorization: `Bearer ${state.token}`,
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

function upsert(record) {
  state.records = state.records.filter((known) => known.v_tarid_uid !== record.v_tarid_uid);
  state.records.push({ ...record, fresh: true });
  state.records.sort((a, b) => b.lastUpdate - a.lastUpdate);
  render();
}

async function loadHistory() {
  const page = await api('GET', `/notifications/v3/history?locale=${encodeURIComponent(state.locale)}`);
  // A record the stream already delivered is at least as new as the page's copy.
  const streamed = new Set(state.records.map((record) => record.v_tarid_uid));
  state.records.push(...page.data.filter((record) => !streamed.has(record.v_tarid_uid)));
  state.records.sort((a, b) => b.lastUpdate - a.lastUpdate);
  render();
}

function listen() {
  if (state.source) state.source.close();
  clearTimeout(state.retry);
  api('POST', '/notifications/v3/stream-ticket')
    .then(({ data }) => {
      const query = new URLSearchParams({ ticket: data.ticket, locale: state.locale });
      if (state.lastEventId) query.set('lastEventId', state.lastEventId);
      const source = new EventSource(`/notifications/v3/stream?${query}`);
      state.source = source;
      const track = (handler) => (event) => {
        state.lastEventId = event.lastEventId;
        handler(JSON.parse(event.data));
      };
      source.addEventListener('open', () => setStatus('Live: updates appear as they happen.'));
      source.addEventListener(
        'unread',
        track((data) => setBadge(data.totalUnreadCount)),
      );
      source.addEventListener('record', track(upsert));
      source.addEventListener(
        'read',
        track((data) => {
          const ids = new Set(data.ids);
          for (const record of state.records) if (ids.has(record.v_tarid_uid)) record.hasRead = true;
          render();
        }),
      );
      source.addEventListener(
        'cleared',
        track(() => {
          state.records = [];
          render();
        }),
      );
      source.addEventListener(
        'reset',
        track(() => {
          state.records = [];
          void loadHistory();
        }),
      );
      // A ticket works once, so the browser's own reconnect cannot succeed: reconnect with a new
      // ticket and the last id received, which resumes without losing or repeating anything.
      source.addEventListener('error', () => {
        source.close();
        setStatus('Disconnected; reconnecting…');
        state.retry = setTimeout(listen, 2_000);
      });
    })
    .catch((error) => {
      // A refused token will not get better by retrying; anything else (a restart) may.
      if (error.message.startsWith('401')) {
        setStatus(`Token refused: ${error.message}`);
        return;
      }
      setStatus(`Stream failed: ${error.message}; retrying…`);
      state.retry = setTimeout(listen, 5_000);
    });
}

async function open() {
  state.token = $('token').value.trim();
  state.locale = $('locale').value;
  state.lastEventId = '';
  state.records = [];
  sessionStorage.setItem('tray-demo-token', state.token);
  setStatus('Loading…');
  try {
    // The stream first: it sends every change from the moment it opens, so nothing falls
    // between the history read and the stream (a record in both is shown once).
    listen();
    await loadHistory();
    $('mark-all').disabled = false;
  } catch (error) {
    setStatus(`Could not load the tray: ${error.message}`);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('token').value = sessionStorage.getItem('tray-demo-token') ?? '';
  $('connect').addEventListener('submit', (event) => {
    event.preventDefault();
    void open();
  });
  $('locale').addEventListener('change', () => {
    if (state.token) void open();
  });
  $('mark-all').addEventListener('click', () => {
    api('GET', '/notifications/v3/mark-all-as-read').catch((error) =>
      setStatus(`Mark all failed: ${error.message}`),
    );
  });
});
