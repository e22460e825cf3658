/*
 * lagscope's viewer: live metrics, hangs as they happen, a hang's call tree, flame graph and
 * threads, and "Capture now". Plain ES modules, no build step, no dependency; the API it reads
 * is docs/viewer-api.md. This file starts the page; index.html loads it as a module script.
 *
 * The server's Content-Security-Policy allows script only from the page's own origin
 * (script-src 'self', which module scripts satisfy) and viewer.css as style: no inline script
 * or style markup, no eval. Positions and widths are set through the CSSOM
 * (element.style.x = ...), which that policy allows. Every string from the API reaches the DOM
 * through textContent or an attribute, never through innerHTML.
 *
 * The modules, one job each:
 *   format.js      numbers, times and frame names as the page words them (pure)
 *   hang-list.js   the hang list's entries merged from pages and events (pure)
 *   trees.js       bottom-up and "my code only" trees (pure)
 *   backoff.js     the stream's reconnect delays (pure)
 *   dom.js         elements with text, look-ups, the toast
 *   api.js         requests, ApiError, the connection state
 *   app.js         the app's name, pid and uptime
 *   canvas.js      the palette and canvas sizing
 *   metrics.js     the metric cards and their charts
 *   hitches.js     the hitch marks and a hitch's detail
 *   hangs.js       the hang list on the page and the stream's hang events
 *   detail.js      the selection and the detail pane
 *   verdict.js     a hang's verdict and lock chain
 *   calltree.js    the call tree view and "my code only"
 *   flame.js       the flame graph (its layout pure)
 *   threads.js     threads and stacks
 *   capture.js     "Capture now"
 *   stream.js      the event stream, reloads, the once-a-second checks
 * The pure ones import nothing that touches the page, so node's test runner tests them as
 * they are (tests/unit/viewer/). The page modules call one another's functions (a hang's detail
 * and the hang list, for one): such cycles are sound in ES modules because no module calls
 * into another while it is being loaded, only from start() on.
 */
import { readColors } from './canvas.js';
import { capture } from './capture.js';
import { byId, el } from './dom.js';
import { loadMoreHangs } from './hangs.js';
import { drawCharts } from './metrics.js';
import { connect, everySecond, loadAll } from './stream.js';

/* Wires the buttons, adds the header's hang badge and starts loading and streaming. */
function start() {
  readColors();
  byId('capture-button').addEventListener('click', capture);
  byId('hang-more').addEventListener('click', loadMoreHangs);
  // The header's hang badge, counted like the HUD's.
  const badge = el('span', 'hang-badge', 'HANG');
  badge.id = 'hang-badge';
  badge.dataset.testid = 'hang-badge';
  badge.hidden = true;
  byId('connection').after(badge);
  new ResizeObserver(() => drawCharts()).observe(byId('metrics'));
  setInterval(everySecond, 1000);
  loadAll();
  connect();
}

// A module script runs after the document is parsed; the check keeps that from mattering.
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
