/*
 * The app being watched: its name, pid and uptime in the header, from GET /api/v1/status.
 */
import { api, connection } from './api.js';
import { byId, setText } from './dom.js';
import { fmtUptime } from './format.js';

export const app = {
  status: null,        // the last /api/v1/status answer
  statusAt: 0,         // performance.now() when it came
  launchKey: '',       // pid and launch time of the launch the page shows
  pid: null,
};

export function launchKeyOf(pid, launchWallMs) {
  return pid + '@' + launchWallMs;
}

export async function loadStatus() {
  const status = await api('/api/v1/status');
  app.status = status;
  app.statusAt = performance.now();
  app.pid = status.app && status.app.pid;
  setText('app-name', (status.app && status.app.name) || '(unnamed app)');
  setText('app-pid', String(app.pid));
  document.title = ((status.app && status.app.name) || 'app') + ' — lagscope';
  if (status.config && status.config.hang_threshold_ms) {
    setText('hang-threshold', String(status.config.hang_threshold_ms));
  }
  updateUptime();
  return status;
}

/* Uptime runs on from the server's figure with the browser's monotonic clock, so the two
 * machines' wall clocks never need to agree. It stands still while the app is away. */
export function updateUptime() {
  if (!app.status) return;
  const away = connection.state === 'disconnected' || connection.state === 'unauthorized';
  if (away && byId('app-uptime').textContent !== '—') return;
  setText('app-uptime', fmtUptime(app.status.uptime_ms + performance.now() - app.statusAt));
}
