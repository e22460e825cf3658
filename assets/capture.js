/*
 * "Capture now": every thread's stack at this moment (POST /api/v1/capture), with the
 * button's rate-limit countdown. The result goes to main.js (onResult), which selects it and
 * shows captureDetail in the detail pane.
 */
import { ApiError, api } from './api.js';
import { byId, el } from './dom.js';
import { fmtWall } from './format.js';

let captureUntil = 0;    // rate limit: performance.now() before which the button waits
let captureTimer = 0;

export async function capture(onResult) {
  const button = byId('capture-button');
  button.disabled = true;
  setCaptureMessage('Capturing…', 'busy');
  try {
    const result = await api('/api/v1/capture', { method: 'POST' });
    setCaptureMessage('', '');
    onResult(result);
    button.disabled = false;
  } catch (e) {
    handleCaptureError(e);
  }
}

function handleCaptureError(e) {
  const button = byId('capture-button');
  if (e instanceof ApiError && e.status === 429) {
    captureUntil = performance.now() + (e.retryAfterMs || 1000);
    countDownCapture();
    return;
  }
  button.disabled = false;
  if (e instanceof ApiError && e.status === 503) {
    setCaptureMessage('The app is busy (' + e.message + '). Try again.', 'error');
  } else if (e instanceof ApiError && e.status === 401) {
    setCaptureMessage('', ''); // the banner says what to do
  } else {
    setCaptureMessage('Capture failed: ' + e.message, 'error');
  }
}

/* 429: the button says when the next capture is allowed and comes back by itself. */
function countDownCapture() {
  clearTimeout(captureTimer);
  const left = captureUntil - performance.now();
  const button = byId('capture-button');
  if (left <= 0) {
    button.disabled = false;
    setCaptureMessage('', '');
    return;
  }
  setCaptureMessage('Rate limited — retry in ' + (left / 1000).toFixed(1) + ' s', 'warn');
  captureTimer = setTimeout(countDownCapture, Math.min(100, left));
}

function setCaptureMessage(text, kind) {
  const node = byId('capture-message');
  node.textContent = text;
  node.dataset.kind = kind;
}

/* Every thread of a capture, drawn by threadList (threads.js's, handed in by main.js). */
export function captureDetail(result, threadList) {
  const root = el('div', 'capture-detail');
  root.dataset.testid = 'capture-result';
  const threads = result.threads || [];
  root.append(el('header', 'detail-head',
    el('h2', null, 'Capture · ' + threads.length + ' threads'),
    el('p', 'muted', 'Every thread of the app at ' + fmtWall(result.wall_ms, true) + ', taken in ' +
      (result.duration_ms !== undefined ? result.duration_ms + ' ms' : '—') + ' (lagscope\'s own threads excepted).')));
  root.append(threadList(threads, result.main_thread_tid));
  return root;
}
