/*
 * The viewer's words for numbers and frames: durations, uptimes, times of day, bytes,
 * percentages, frame names and places, and which modules are the system's. Pure (no DOM):
 * node's test runner imports it as it is (tests/unit/viewer/format.test.mjs).
 */
export function basename(path) {
  if (!path) return '';
  const cut = path.lastIndexOf('/');
  return cut >= 0 ? path.slice(cut + 1) : path;
}

/* "595 ms", "1.24 s", "2 min 05 s". */
export function fmtDuration(ms) {
  if (ms === null || ms === undefined || !isFinite(ms)) return '—';
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
  const min = Math.floor(ms / 60000);
  const s = Math.floor((ms % 60000) / 1000);
  return min + ' min ' + String(s).padStart(2, '0') + ' s';
}

export function fmtUptime(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return s + ' s';
  const min = Math.floor(s / 60);
  if (min < 60) return min + ' min ' + String(s % 60).padStart(2, '0') + ' s';
  const h = Math.floor(min / 60);
  if (h < 48) return h + ' h ' + String(min % 60).padStart(2, '0') + ' min';
  return Math.floor(h / 24) + ' d ' + (h % 24) + ' h';
}

function pad2(n) {
  return String(n).padStart(2, '0');
}

/* Local time of a Unix ms; with the date when it is not today. */
export function fmtWall(ms, withMs) {
  if (!ms) return '—';
  const d = new Date(ms);
  let text = pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
  if (withMs) text += '.' + String(d.getMilliseconds()).padStart(3, '0');
  if (d.toDateString() !== new Date().toDateString()) {
    text = d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) + ' ' + text;
  }
  return text;
}

export const NBSP = '\u00a0'; // between a number and its unit, so a line never breaks there

export function fmtBytes(bytes) {
  if (bytes === null || bytes === undefined) return '—';
  if (bytes >= 1e9) return (bytes / 1e9).toFixed(2) + NBSP + 'GB';
  if (bytes >= 1e6) return (bytes / 1e6).toFixed(1) + NBSP + 'MB';
  return Math.round(bytes / 1e3) + NBSP + 'kB';
}

export function fmtPercent(value) {
  if (value === null || value === undefined) return '—';
  return (value >= 100 ? value.toFixed(0) : value.toFixed(1)) + NBSP + '%';
}

export function sharePercent(share) {
  const pct = Math.round((share || 0) * 100);
  return (pct === 0 && share > 0 ? '<1' : String(pct)) + NBSP + '%';
}

export function stateLabel(state) {
  if (state === 'in_progress') return 'hanging';
  if (state === 'ended_by_termination') return 'killed while hung';
  return 'ended';
}

/* A frame's name: its function, else module+offset, else its raw address. */
export function frameName(frame) {
  if (frame.function) return frame.function;
  if (frame.module) return basename(frame.module) + '+' + (frame.module_offset || frame.address || '?');
  return frame.address || '(unknown)';
}

export function frameLocation(frame) {
  if (!frame.file) return '';
  return basename(frame.file) + (frame.line ? ':' + frame.line : '');
}

/* Frames from system libraries get cool colours in the flame graph, the app's warm ones. */
export function isSystemModule(module) {
  return /(^|\/)(lib|usr\/lib|system|linux-vdso)|\.so(\.|$)|\.dylib$/.test(module || '');
}

/* "My code only" hides these: the C library, the loader, the vDSO, Darwin's system. */
const SYSTEM_LIBRARY = /^(\/usr)?\/lib(64)?\/|^\/System\/Library\/|linux-vdso|\[vdso\]|(^|\/)ld-linux/;

export function isSystemLibrary(module) {
  return SYSTEM_LIBRARY.test(module || '');
}

/* A frame that is not the app's code: by the report's "code" (lagscope's one rule: the system's
 * frames and lagscope's own), else, in a report written before it, by its module. */
export function isOthersCode(frame) {
  return frame.code ? frame.code !== 'app' : isSystemLibrary(frame.module);
}

export function hashString(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
