/*
 * The detail pane: a hang's report (summary, downloads, verdict and the tabs: call tree,
 * bottom-up, flame graph, threads), a live hang whose report is not stored yet, and the tabs
 * themselves; or what main.js hands it to show (a hitch, a capture). What is selected is
 * state.js's; main.js builds this pane with the views it draws with:
 *   createDetail({ loadHangs, verdictView, callTree, bottomUpTree, flameGraph, shownTree,
 *                  myCodeToggle, threadList, stackList })
 */
import { api } from './api.js';
import { byId, el, summaryItem } from './dom.js';
import { fmtBytes, fmtDuration, fmtPercent, fmtWall, stateLabel } from './format.js';
import { elapsedMs } from './hang-list.js';
import { hangFromSummary } from './state.js';

function elapsedOf(entry) {
  return elapsedMs(entry, performance.now());
}

function showDetail(node) {
  const pane = byId('detail');
  pane.replaceChildren(node);
  // On a phone the pane is below the list: bring it into view.
  if (window.matchMedia('(max-width: 900px)').matches) pane.scrollIntoView({ block: 'start', behavior: 'smooth' });
}

function stackSignature(stack) {
  return (stack || []).map((f) => f.address).join(',');
}

function beforeDuring(pair, format, inProgress) {
  if (!pair) return '—';
  const none = inProgress ? 'not sampled yet' : 'ended before a sample';
  const during = pair.during === null || pair.during === undefined ? none : format(pair.during);
  return format(pair.before) + ' → ' + during;
}

function downloadLink(href, text, filename, testid) {
  const a = el('a', 'btn btn-quiet', text);
  a.href = href;
  a.download = filename;
  a.dataset.testid = testid;
  return a;
}

/* A stored report is newer than the list's copy: bring the entry up to date. */
function fromSummaryOfReport(report) {
  const inner = (report.heaviest_stack || [])[0] || {};
  hangFromSummary({ id: report.id, hang_id: report.hang_id, pid: report.app.pid, app: report.app.name, state: report.state,
    start_wall_ms: report.start.wall_ms, duration_ms: report.duration_ms, samples: report.samples.count,
    function: inner.function || null, module: inner.module || null,
    label: report.cause && report.cause.label });
}

export function createDetail({
  loadHangs, verdictView, callTree, bottomUpTree, flameGraph, shownTree, myCodeToggle, threadList, stackList,
}) {
  let request = 0; // a load that another selection overtook shows nothing

  /* What main.js hands the pane (a hitch's detail, a capture's): shown now, and any hang
   * report still loading is not. */
  function show(node) {
    request++;
    showDetail(node);
  }

  async function openHang(entry) {
    const mine = ++request;
    if (!entry.id) {
      // A live hang is written to the store at its first capture: find its id there.
      try {
        await loadHangs(true);
      } catch (e) { /* shown below as live */ }
    }
    if (mine !== request) return;
    if (!entry.id) {
      showDetail(liveDetail(entry));
      return;
    }
    showDetail(el('div', 'loading', 'Loading report…'));
    let report;
    try {
      report = await api('/api/v1/hangs/' + encodeURIComponent(entry.id));
    } catch (e) {
      if (mine === request) showDetail(el('div', 'error-box', 'Could not load the report: ' + e.message));
      return;
    }
    if (mine !== request) return;
    showDetail(hangDetail(report, entry));
  }

  /* The detail of a hang still going on whose report is not stored yet: what the stream said. */
  function liveDetail(entry) {
    const root = el('div', 'hang-detail');
    root.dataset.testid = 'hang-detail';
    root.dataset.state = 'in_progress';
    root.append(el('header', 'detail-head',
      el('h2', null, 'Hang #' + entry.hang_id + ' ', el('span', 'state-pill', 'hanging')),
      el('p', 'muted', 'The report is being written; it opens here when the hang is captured.')));
    const summary = el('dl', 'summary');
    summary.append(summaryItem('Elapsed', el('span', 'live-elapsed', fmtDuration(elapsedOf(entry)))));
    summary.append(summaryItem('Started', fmtWall(entry.start_wall_ms, true)));
    root.append(summary, el('h3', 'section-title', 'Latest main-thread stack'), liveStack(entry));
    return root;
  }

  function liveStack(entry) {
    const stack = entry.latestStack || [];
    const list = stack.length ? stackList(stack) : el('p', 'empty', 'Waiting for the first sample…');
    list.classList.add('live-stack');
    list.dataset.testid = 'live-stack';
    list.dataset.signature = stackSignature(stack);
    return list;
  }

  /* Ten times a second while the selected hang lasts: its elapsed time and, when it moved, the
   * main thread's latest stack. */
  function updateLive(entry) {
    const pane = byId('detail');
    for (const node of pane.querySelectorAll('.live-elapsed')) node.textContent = fmtDuration(elapsedOf(entry));
    const old = pane.querySelector('.live-stack');
    if (old && old.dataset.signature !== stackSignature(entry.latestStack)) old.replaceWith(liveStack(entry));
  }

  function hangDetail(report, entry) {
    const root = el('div', 'hang-detail');
    root.dataset.testid = 'hang-detail';
    root.dataset.id = report.id;
    root.dataset.state = report.state;
    const id = encodeURIComponent(report.id);

    // A hang still going on: its report is the one first written; the time counts on live.
    const live = report.state === 'in_progress' && entry && entry.state === 'in_progress' && entry.live;
    const title = el('h2', null, 'Hang #' + report.hang_id + ' · ',
      live ? el('span', 'live-elapsed', fmtDuration(elapsedOf(entry))) : fmtDuration(report.duration_ms), ' ');
    const pill = el('span', 'state-pill', stateLabel(report.state));
    pill.dataset.state = report.state;
    title.append(pill);
    const links = el('div', 'downloads',
      downloadLink('/api/v1/hangs/' + id, 'Report JSON', report.id + '.json', 'download-report'),
      downloadLink('/api/v1/hangs/' + id + '/speedscope', 'Speedscope', report.id + '.speedscope.json', 'download-speedscope'),
      downloadLink('/api/v1/hangs/' + id + '/trace', 'Chrome trace', report.id + '.trace.json', 'download-trace'));
    root.append(el('header', 'detail-head', title, el('p', 'muted mono', report.id), links));
    if (report.cause) root.append(verdictView(report));

    const samples = report.samples || {};
    const walks = Object.entries(samples.walks || {}).map(([k, v]) => v + ' ' + k).join(', ');
    const summary = el('dl', 'summary');
    summary.dataset.testid = 'hang-summary';
    summary.append(
      summaryItem('Duration', live ? el('span', 'live-elapsed', fmtDuration(elapsedOf(entry)))
        : fmtDuration(report.duration_ms) + (report.state === 'ended_by_termination' ? ' (at least)' : '')),
      summaryItem('State', stateLabel(report.state)),
      summaryItem('App', ((report.app && report.app.name) || '—') + ' · pid ' + (report.app && report.app.pid)),
      summaryItem('Started', fmtWall(report.start && report.start.wall_ms, true)),
      summaryItem('Samples', (samples.count || 0) + ' every ' + report.sample_interval_ms + ' ms' +
        (samples.dropped ? ', ' + samples.dropped + ' dropped' : '') + (walks ? ' (' + walks + ')' : '')),
      summaryItem('CPU', beforeDuring(report.cpu, fmtPercent, live)),
      summaryItem('Memory', beforeDuring(report.memory, (m) => fmtBytes(m.rss_bytes), live)),
      summaryItem('FPS', beforeDuring(report.frames, (f) => Math.round(f.fps) + ' (' + f.hitch_band + ')', live)));
    root.append(summary);
    if (live) {
      const n = samples.count || 0;
      root.append(el('p', 'live-note', 'Still hanging. Below is the report as first written (' + n +
        (n === 1 ? ' sample' : ' samples') + '); the final one replaces it when the main thread answers.'),
      el('h3', 'section-title', 'Latest main-thread stack'), liveStack(entry));
    }

    const threads = report.threads || [];
    const tree = report.call_tree;
    const tabs = makeTabs([
      { id: 'calltree', label: 'Call tree', filtered: true, build: () => callTree(shownTree(tree)) },
      { id: 'bottomup', label: 'Bottom-up', filtered: true, build: () => bottomUpTree(shownTree(tree)) },
      { id: 'flamegraph', label: 'Flame graph', filtered: true, build: () => flameGraph(shownTree(tree)) },
      { id: 'threads', label: 'Threads (' + threads.length + ')', build: () => threadList(threads, report.main_thread_tid) },
    ], myCodeToggle(() => tabs.rebuild()));
    root.append(tabs);
    if (entry && entry.state === 'in_progress' && report.state !== 'in_progress') fromSummaryOfReport(report);
    return root;
  }

  return { show, openHang, updateLive };
}

/* Tabs whose panels are built the first time they are shown (a flame graph needs its size).
 * tool, beside the bar, shows with the tabs marked filtered; rebuild() builds them anew. */
function makeTabs(specs, tool) {
  const wrap = el('div', 'tabs');
  const bar = el('div', 'tab-bar');
  bar.setAttribute('role', 'tablist');
  const panels = el('div', 'tab-panels');
  const built = new Map();
  let current = specs[0];
  function show(spec) {
    current = spec;
    if (tool) tool.hidden = !spec.filtered;
    for (const button of bar.children) {
      const on = button.dataset.tab === spec.id;
      button.setAttribute('aria-selected', on ? 'true' : 'false');
      button.classList.toggle('active', on);
    }
    if (!built.has(spec.id)) {
      const panel = el('div', 'tab-panel');
      panel.setAttribute('role', 'tabpanel');
      panel.dataset.tab = spec.id;
      panels.append(panel);
      built.set(spec.id, panel);
      panel.append(spec.build());
    }
    for (const [id, panel] of built) panel.hidden = id !== spec.id;
    const shown = built.get(spec.id);
    if (shown.firstChild && shown.firstChild.redraw) shown.firstChild.redraw();
  }
  for (const spec of specs) {
    const button = el('button', 'tab', spec.label);
    button.type = 'button';
    button.setAttribute('role', 'tab');
    button.dataset.tab = spec.id;
    button.dataset.testid = 'tab-' + spec.id;
    button.addEventListener('click', () => show(spec));
    bar.append(button);
  }
  wrap.append(el('div', 'tab-head', bar, tool || null), panels);
  wrap.rebuild = () => {
    built.clear();
    panels.replaceChildren();
    show(current);
  };
  show(specs[0]);
  return wrap;
}
