/* global setTimeout */
// The Export and replay view: download links for the Events view's filter (NDJSON, CSV), and a
// replay of every matching event with its progress. A download the service refuses (too many
// events, every export slot busy) would fail in the browser's downloads without a reason, so each
// link asks GET /admin/events/export/check first and shows a refusal here.
import { adminUrl, getJson, postJson } from './api.js';
import { byId, showError } from './dom.js';
import { describeFilter } from './filters.js';

const POLL_MS = 500;

export function createExportView({ currentFilter }) {
  const summary = byId('export-filter');
  const ndjson = byId('export-ndjson');
  const csv = byId('export-csv');
  const exportError = byId('export-error');
  const start = byId('replay-start');
  const progress = byId('replay-progress');
  const bar = byId('replay-bar');
  const status = byId('replay-status');

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  async function follow(id) {
    for (;;) {
      const replay = await getJson(`/replays/${encodeURIComponent(id)}`);
      bar.max = Math.max(replay.total, 1);
      const read = replay.done + replay.failed + replay.expired;
      bar.value = read;
      // Events within minutes of their expiry are left alone (stored again, they would count as new).
      const expired = replay.expired > 0 ? `, ${replay.expired} left alone as about to expire` : '';
      status.textContent =
        replay.state === 'running'
          ? `Replaying: ${read} of ${replay.total}…`
          : replay.state === 'lost'
            ? `Replay lost: its process stopped after ${replay.done} of ${replay.total}. Start it again; a replay changes nothing twice.`
            : `Replay ${replay.state}: ${replay.done} of ${replay.total} replayed, ${replay.failed} failed${expired}.`;
      progress.dataset.state = replay.state;
      if (replay.state !== 'running') return;
      await sleep(POLL_MS);
    }
  }

  /** The link whose export the check just accepted: its next click is the download's own. */
  let admitted;
  for (const [link, format] of [
    [ndjson, 'ndjson'],
    [csv, 'csv'],
  ]) {
    link.addEventListener('click', async (event) => {
      if (admitted === link) {
        admitted = undefined;
        return;
      }
      event.preventDefault();
      showError(exportError);
      try {
        await getJson('/events/export/check', { format, ...currentFilter() });
        admitted = link;
        link.click();
      } catch (failure) {
        showError(exportError, failure);
      }
    });
  }

  start.addEventListener('click', async () => {
    start.disabled = true;
    progress.hidden = false;
    bar.value = 0;
    status.textContent = 'Starting the replay…';
    try {
      const { id } = await postJson('/events/replay', currentFilter());
      await follow(id);
    } catch (failure) {
      showError(status, failure);
    } finally {
      start.disabled = false;
    }
  });

  return {
    show() {
      const filter = currentFilter();
      summary.textContent = describeFilter(filter);
      showError(exportError);
      ndjson.href = adminUrl('/events/export', { format: 'ndjson', ...filter });
      csv.href = adminUrl('/events/export', { format: 'csv', ...filter });
    },
  };
}
