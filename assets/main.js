/*
 * lagscope's viewer: live metrics, hangs as they happen, a hang's call tree, flame graph and
 * threads, and "Capture now". Plain ES modules, no build step, no dependency; the API it reads
 * is docs/viewer-api.md. This file is the hub: it builds the views, wires the state's events
 * to them and their callbacks to one another, and starts the page; index.html loads it as a
 * module script.
 *
 * The server's Content-Security-Policy allows script only from the page's own origin
 * (script-src 'self', which module scripts satisfy) and viewer.css as style: no inline script
 * or style markup, no eval. Positions and widths are set through the CSSOM
 * (element.style.x = ...), which that policy allows. Every string from the API reaches the DOM
 * through textContent or an attribute, never through innerHTML.
 *
 * The modules, one job each. Pure (nothing that touches the page):
 *   format.js      numbers, times and frame names as the page words them
 *   hang-list.js   the hang list's entries merged from pages and events
 *   trees.js       bottom-up and "my code only" trees
 *   backoff.js     the stream's reconnect delays
 * What the views stand on:
 *   state.js       the data (status, connection, ticks, hitches, hangs, selection) and on/emit
 *   dom.js         elements with text, look-ups, the toast
 *   api.js         requests and ApiError
 *   canvas.js      the palette and canvas sizing
 * The views, each drawing its own part of the page:
 *   app.js         the header: the app's name, pid and uptime, the connection
 *   metrics.js     the metric cards and their charts
 *   hitches.js     the hitch marks and a hitch's detail
 *   hangs.js       the hang list and the header's HANG badge
 *   detail.js      the detail pane and a hang's report in it
 *   verdict.js     a hang's verdict and lock chain
 *   calltree.js    the call tree view and "my code only"
 *   flame.js       the flame graph (its layout pure)
 *   threads.js     threads and stacks
 *   capture.js     "Capture now"
 * And:
 *   stream.js      the event stream into the state, reconnects, the once-a-second checks
 *   main.js        this hub
 *
 * The wiring rule: a view imports only the pure modules, state.js, dom.js, api.js and
 * canvas.js, never another view; nothing imports main.js, and no module imports another that
 * imports it back (tests/unit/viewer/imports.test.mjs checks all three). A view changes the
 * data only through state.js's functions, each of which emits an event; what one view's change
 * means for another (a hang selected is marked in the list, a hitch selected clears the hang's
 * mark) is wired here, on those events and on the views' callbacks. A view that draws with
 * another's builder (the detail pane with the call tree, a verdict with a stack) is handed it
 * here. The pure ones import nothing that touches the page, so node's test runner tests them
 * as they are (tests/unit/viewer/).
 */
import { ApiError } from './api.js';
import { loadStatus, renderAuthError, renderConnection, renderStatus, updateUptime } from './app.js';
import { bottomUpTree, callTree, myCodeToggle, shownTree } from './calltree.js';
import { readColors } from './canvas.js';
import { capture, captureDetail } from './capture.js';
import { createDetail } from './detail.js';
import { byId, el, toast } from './dom.js';
import { flameGraph } from './flame.js';
import { createHangList, loadHangs } from './hangs.js';
import { hitchDetail, loadHitches, renderHitchStrip } from './hitches.js';
import { drawCharts, loadMetrics, renderMetrics } from './metrics.js';
import {
  hangEntry, isSelectedHang, launchKeyOf, markLiveHangs, on, select, setLaunchKey,
} from './state.js';
import { createStream } from './stream.js';
import { stackList, threadList } from './threads.js';
import { verdictView } from './verdict.js';

const detail = createDetail({
  loadHangs,
  verdictView: (report) => verdictView(report, stackList),
  callTree, bottomUpTree, flameGraph, shownTree, myCodeToggle, threadList, stackList,
});

const hangList = createHangList({
  onSelect: selectHang,
  // Ten times a second while a hang lasts: the detail pane follows the selected one.
  onLiveTick: (entry) => { if (isSelectedHang(entry.key)) detail.updateLive(entry); },
});

const stream = createStream({ loadAll, loadHangs });

function selectHang(key) {
  const entry = hangEntry(key);
  if (!entry) return;
  select('hang', key);
  detail.openHang(entry);
}

function openHitch(hitch) {
  select('hitch', hitch.seq);
  detail.show(hitchDetail(hitch, callTree));
}

function showCapture(result) {
  select('capture', null);
  detail.show(captureDetail(result, threadList));
}

const drawHitches = () => renderHitchStrip(openHitch);

/* What each change of the state redraws, in this order. */
function wire() {
  on('status', renderStatus);
  on('connection', renderConnection);
  on('auth', renderAuthError);
  on('metrics', () => {
    renderMetrics();
    drawHitches();
  });
  on('hitches', drawHitches);
  on('hang', hangList.renderEntry);
  on('hang-page', hangList.renderCount);
  on('signatures', hangList.renderSignatures);
  on('hang-began', hangList.hangBegan);
  on('hang-sample', (entry) => {
    hangList.startLiveTimer();
    if (isSelectedHang(entry.key)) detail.updateLive(entry);
  });
  on('hang-ended', (entry) => {
    hangList.tickLive();
    // Samples and the stored summary: a quiet refresh of the newest page fills them in.
    loadHangs(true).catch(() => {});
    if (isSelectedHang(entry.key)) detail.openHang(entry);
  });
  on('hangs-live', hangList.startLiveTimer);
  on('select', ({ kind, hitchWas }) => {
    hangList.renderSelection();
    if (kind === 'hitch' || hitchWas !== null) drawHitches();
  });
}

/* Status, metrics and the newest hangs; a call while one is under way shares it. */
let loadingAll = null;
function loadAll() {
  if (!loadingAll) loadingAll = reloadAll().finally(() => { loadingAll = null; });
  return loadingAll;
}

async function reloadAll() {
  try {
    const status = await loadStatus();
    setLaunchKey(launchKeyOf(status.app.pid, status.launch_wall_ms));
    await Promise.all([loadMetrics(), loadHangs(true), loadHitches()]);
    markLiveHangs();
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) toast('Could not load from the app: ' + e.message);
  }
}

/* Wires the buttons, adds the header's hang badge and starts loading and streaming. */
function start() {
  readColors();
  wire();
  byId('capture-button').addEventListener('click', () => capture(showCapture));
  byId('hang-more').addEventListener('click', hangList.loadMore);
  // The header's hang badge, counted like the HUD's.
  const badge = el('span', 'hang-badge', 'HANG');
  badge.id = 'hang-badge';
  badge.dataset.testid = 'hang-badge';
  badge.hidden = true;
  byId('connection').after(badge);
  new ResizeObserver(() => {
    drawCharts();
    drawHitches();
  }).observe(byId('metrics'));
  setInterval(() => {
    updateUptime();
    stream.everySecond();
  }, 1000);
  loadAll();
  stream.connect();
}

// A module script runs after the document is parsed; the check keeps that from mattering.
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
