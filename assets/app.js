/*
 * The header: the app being watched (its name, pid and uptime, from GET /api/v1/status), the
 * connection's state, and the banner shown when this browser's token is refused.
 */
import { api } from './api.js';
import { byId, setText } from './dom.js';
import { fmtUptime } from './format.js';
import { appStatus, appStatusAt, connectionState, setStatus } from './state.js';

export async function loadStatus() {
  const status = await api('/api/v1/status');
  setStatus(status);
  return status;
}

/* The status came: the app's name, pid and hang threshold, and the uptime from it. */
export function renderStatus(status) {
  setText('app-name', (status.app && status.app.name) || '(unnamed app)');
  setText('app-pid', String(status.app && status.app.pid));
  document.title = ((status.app && status.app.name) || 'app') + ' — lagscope';
  if (status.config && status.config.hang_threshold_ms) {
    setText('hang-threshold', String(status.config.hang_threshold_ms));
  }
  updateUptime();
}

/* Uptime runs on from the server's figure with the browser's monotonic clock, so the two
 * machines' wall clocks never need to agree. It stands still while the app is away. */
export function updateUptime() {
  const status = appStatus();
  if (!status) return;
  const state = connectionState();
  const away = state === 'disconnected' || state === 'unauthorized';
  if (away && byId('app-uptime').textContent !== '—') return;
  setText('app-uptime', fmtUptime(status.uptime_ms + performance.now() - appStatusAt()));
}

export function renderConnection({ state, text }) {
  byId('connection').dataset.state = state;
  document.body.dataset.connection = state; // the stylesheet dims figures that are not live
  setText('connection-text', text);
}

export function renderAuthError(on) {
  byId('auth-error').hidden = !on;
}
