/* global ResizeObserver, setInterval, clearInterval, document */
// The Traffic view: three uPlot charts (events per minute by name, queue depth and failed jobs,
// acknowledgement-to-tray lag) over the admin stats API. Beside each chart a data table holds the
// plotted numbers, for screen readers and for anyone who wants the exact values (data-* attributes
// carry them unformatted).
import uPlot from './uPlot.esm.js';
import { getJson } from './api.js';
import { byId, h, showError } from './dom.js';

const PALETTE = ['#1a5fb4', '#c01c28', '#26a269', '#a347ba', '#e66100', '#613583', '#865e3c', '#0e7c86'];
const HEIGHT = 220;
const QUEUE_SAMPLE_MS = 5000;
/** One hour of queue samples at most. */
const QUEUE_SAMPLES = 720;
const QUEUE_FIELDS = ['waiting', 'paused', 'active', 'delayed', 'failed', 'completed'];
/** The queue chart shows at least this much time: one sample alone is not a range uPlot can scale. */
const QUEUE_WINDOW_S = 5 * 60;
/** Seconds shown by each choice of the per-minute charts' range switch. */
const RANGES = { hour: 3600, day: 24 * 3600 };

const minuteLabel = (epochMs) => new Date(epochMs).toLocaleString();

/** A chart box (figure) of the page: its drawing area, its data area, and the chart drawn there. */
function chartBox(id) {
  const figure = byId(id);
  const box = { plot: figure.querySelector('.chart'), data: figure.querySelector('.data'), chart: undefined };
  new ResizeObserver(() => {
    if (box.chart && box.plot.clientWidth > 0)
      box.chart.setSize({ width: box.plot.clientWidth, height: HEIGHT });
  }).observe(box.plot);
  return box;
}

/** Keeps the x range drawn on the chart's element (epoch ms), for tests and for anyone inspecting it. */
function markRange(box, u) {
  const { min, max } = u.scales.x;
  if (min === undefined || max === undefined || min === null || max === null) return;
  box.plot.dataset.xMin = String(Math.round(min * 1000));
  box.plot.dataset.xMax = String(Math.round(max * 1000));
}

/**
 * Draws (or redraws) a time chart: `x` epoch ms, `series` [{label, values}]. `range` ([from, to]
 * epoch ms) is the x range shown, never uPlot's own: for a single x value that is a thousand days
 * (it widens a time scale by 86400 / ms, ms being 1e-3 for seconds). `stepped` draws each value
 * across its whole minute, so a one-minute burst is a block of that minute rather than a spike;
 * `points` marks every value.
 */
function draw(box, x, series, yLabel, range, { stepped = false, points = false } = {}) {
  box.chart?.destroy();
  box.chart = undefined;
  box.plot.replaceChildren();
  if (series.length === 0 || x.length === 0) return;
  box.chart = new uPlot(
    {
      width: Math.max(box.plot.clientWidth, 300),
      height: HEIGHT,
      scales: { x: { time: true, range: () => [range[0] / 1000, range[1] / 1000] } },
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 1.5,
          spanGaps: false,
          ...(stepped ? { paths: uPlot.paths.stepped({ align: 1 }) } : {}),
          ...(points ? { points: { show: true, size: 7 } } : {}),
        })),
      ],
      // Time labels spaced wider than uPlot's 50 px: its first label carries the date on a second line.
      axes: [{ space: 90 }, { label: yLabel }],
      hooks: {
        ready: [(u) => markRange(box, u)],
        setScale: [(u, key) => key === 'x' && markRange(box, u)],
      },
    },
    [x.map((ms) => ms / 1000), ...series.map((s) => s.values)],
    box.plot,
  );
}

/**
 * The x range of a per-minute chart for the chosen time range: the last hour or day of its
 * minutes, the last minute shown whole.
 */
function minutesRange(minutes, choice) {
  const end = (minutes.at(-1) ?? Date.now()) + 60_000;
  return [end - RANGES[choice] * 1000, end];
}

/** A data table: `head` the column labels, `rows` and `foot` lists of cells {text, data}, the first a row header. */
function dataTable(chart, caption, head, rows, foot) {
  const cellOf = (tag, c) => h(tag, { dataset: c.data, ...(tag === 'th' ? { scope: 'row' } : {}) }, c.text);
  return h(
    'table',
    { className: 'data-table', dataset: { chart } },
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map((label) => h('th', { scope: 'col' }, label)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map(([first, ...rest]) =>
        h(
          'tr',
          {},
          cellOf('th', first),
          rest.map((c) => cellOf('td', c)),
        ),
      ),
    ),
    foot
      ? h(
          'tfoot',
          {},
          h(
            'tr',
            {},
            cellOf('th', foot[0]),
            foot.slice(1).map((c) => cellOf('td', c)),
          ),
        )
      : undefined,
  );
}

function renderEventsPerMinute(box, stats, choice) {
  // Names beyond the most frequent come summed as `others`: drawn and listed as one more series.
  const all = stats.others
    ? [...stats.series, { event: `${stats.others.events} other events`, counts: stats.others.counts }]
    : stats.series;
  const series = all.map((s) => ({ label: s.event, values: s.counts }));
  draw(box, stats.minutes, series, 'events', minutesRange(stats.minutes, choice), { stepped: true });
  const rows = [];
  stats.minutes.forEach((minute, i) => {
    if (!all.some((s) => (s.counts[i] ?? 0) > 0)) return;
    rows.push([
      { text: minuteLabel(minute), data: { minute: String(minute) } },
      ...all.map((s) => ({
        text: String(s.counts[i] ?? 0),
        data: { event: s.event, minute: String(minute), value: String(s.counts[i] ?? 0) },
      })),
    ]);
  });
  const totals = all.map((s) => {
    const total = s.counts.reduce((sum, n) => sum + (n ?? 0), 0);
    return { text: String(total), data: { event: s.event, total: String(total) } };
  });
  box.data.replaceChildren(
    all.length === 0
      ? h('p', { className: 'muted' }, 'No events in this period.')
      : dataTable(
          'events-per-minute',
          'Events per minute (minutes with events only)',
          ['Minute', ...all.map((s) => s.event)],
          rows,
          [{ text: 'Total' }, ...totals],
        ),
  );
}

function renderLag(box, stats, choice) {
  draw(
    box,
    stats.minutes,
    [
      { label: 'p50 (ms)', values: stats.p50 },
      { label: 'p99 (ms)', values: stats.p99 },
    ],
    'ms',
    minutesRange(stats.minutes, choice),
  );
  const rows = [];
  stats.minutes.forEach((minute, i) => {
    if (stats.p50[i] === null || stats.p50[i] === undefined) return;
    rows.push([
      { text: minuteLabel(minute), data: { minute: String(minute) } },
      ...['p50', 'p99', 'max'].map((field) => ({
        text: String(stats[field][i]),
        data: { field, minute: String(minute), value: String(stats[field][i]) },
      })),
    ]);
  });
  const overall = stats.overall;
  const summary = byId('lag-overall');
  summary.dataset.count = String(overall?.count ?? 0);
  summary.textContent =
    overall && overall.count > 0
      ? `Over the period: ${overall.count} events, p50 ${overall.p50} ms, p99 ${overall.p99} ms, max ${overall.max} ms (p50 and p99 estimated from a histogram; max exact).`
      : '';
  box.data.replaceChildren(
    rows.length === 0
      ? h('p', { className: 'muted' }, 'No event reached a tray in this period.')
      : dataTable(
          'lag',
          'Lag per minute in milliseconds (minutes with events only)',
          ['Minute', 'p50', 'p99', 'max'],
          rows,
        ),
  );
}

function renderQueues(box, stats, samples) {
  const sum = (field) => stats.queues.reduce((total, queue) => total + (queue[field] ?? 0), 0);
  samples.push({
    at: Date.now(),
    // A paused queue keeps its backlog as paused, not waiting: still to be processed.
    depth: sum('waiting') + sum('paused') + sum('active') + sum('delayed'),
    failed: sum('failed'),
  });
  if (samples.length > QUEUE_SAMPLES) samples.shift();
  draw(
    box,
    samples.map((s) => s.at),
    [
      { label: 'depth (waiting + paused + active + delayed)', values: samples.map((s) => s.depth) },
      { label: 'failed', values: samples.map((s) => s.failed) },
    ],
    'jobs',
    // The samples' own span, but never less than a few minutes ending at the last one.
    [Math.min(samples[0].at, samples.at(-1).at - QUEUE_WINDOW_S * 1000), samples.at(-1).at],
    // Each sample marked: the first ones alone would be a dot a pixel wide at the chart's edge.
    { points: true },
  );
  const depth = samples.at(-1).depth;
  const table = dataTable(
    'queue',
    `Jobs per queue at ${new Date().toLocaleTimeString()}; depth ${depth} (waiting + paused + active + delayed)`,
    ['Queue', ...QUEUE_FIELDS],
    stats.queues.map((queue) => [
      { text: queue.name, data: { queue: queue.name } },
      ...QUEUE_FIELDS.map((field) => ({
        text: String(queue[field] ?? 0),
        data: { queue: queue.name, field, value: String(queue[field] ?? 0) },
      })),
    ]),
  );
  // The plotted depth, unformatted, as the other data-* attributes carry theirs.
  table.dataset.depth = String(depth);
  box.data.replaceChildren(table);
}

export function createTrafficView() {
  const error = byId('traffic-error');
  const events = chartBox('chart-events');
  const queue = chartBox('chart-queue');
  const lag = chartBox('chart-lag');
  const samples = [];
  let timer;
  // The per-minute charts' range, and the stats they last drew (redrawn when the range changes).
  let choice = 'day';
  const last = { events: undefined, lag: undefined };
  const drawPerMinute = () => {
    if (last.events) renderEventsPerMinute(events, last.events, choice);
    if (last.lag) renderLag(lag, last.lag, choice);
  };
  const switches = document.querySelectorAll('.range-switch button[data-range]');
  for (const button of switches) {
    button.addEventListener('click', () => {
      choice = button.dataset.range;
      for (const other of switches) other.setAttribute('aria-pressed', String(other === button));
      drawPerMinute();
    });
  }

  async function sampleQueues() {
    try {
      renderQueues(queue, await getJson('/stats/queue'), samples);
    } catch (failure) {
      showError(error, failure);
    }
  }

  async function refresh() {
    showError(error);
    const results = await Promise.allSettled([
      getJson('/stats/events-per-minute').then((stats) => {
        last.events = stats;
        renderEventsPerMinute(events, stats, choice);
      }),
      getJson('/stats/lag').then((stats) => {
        last.lag = stats;
        renderLag(lag, stats, choice);
      }),
      sampleQueues(),
    ]);
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) showError(error, failed.reason);
  }

  byId('traffic-refresh').addEventListener('click', refresh);

  return {
    show() {
      refresh();
      clearInterval(timer);
      timer = setInterval(sampleQueues, QUEUE_SAMPLE_MS);
    },
    hide() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
