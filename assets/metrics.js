/*
 * The metric cards: FPS, frame time, CPU and memory, their figures and their charts of the
 * last minute, from GET /api/v1/metrics and the stream's metrics events (the ticks are
 * state.js's).
 */
import { api } from './api.js';
import { colors, prepareCanvas } from './canvas.js';
import { byId, setText } from './dom.js';
import { NBSP, fmtBytes, fmtPercent } from './format.js';
import { CHART_WINDOW_MS, appConfig, latestTick, metricTicks, metricsIntervalMs, setMetricsPage } from './state.js';

export async function loadMetrics() {
  setMetricsPage(await api('/api/v1/metrics'));
}

export function renderMetrics() {
  const tick = latestTick();
  if (!tick) return;
  const section = byId('metrics');
  section.dataset.seq = String(tick.seq);
  section.dataset.wallMs = String(tick.wall_ms);

  const fps = byId('fps-value');
  // An event-driven app with nothing to draw is idle: not "0", and no band either way.
  fps.textContent = tick.idle ? 'idle' : String(Math.round(tick.fps));
  fps.dataset.idle = tick.idle ? 'true' : 'false';
  fps.dataset.wallMs = String(tick.wall_ms); // lets a test see that a new tick arrived
  // A steady pace of the app's own, slower than the display (a game at 35 fps): judged by it.
  const cadence = tick.cadence_hz > 0 && !tick.idle;
  setText('fps-unit', cadence ? '/ own ' + Math.round(tick.cadence_hz) + ' Hz'
    : tick.refresh_hz ? (tick.idle ? 'at ' : '/ ') + Math.round(tick.refresh_hz) + ' Hz' : '');
  const band = byId('fps-band');
  band.textContent = tick.idle ? 'idle' : tick.hitch_band || '';
  band.dataset.band = tick.idle ? 'idle' : tick.hitch_band || '';
  setText('fps-sub', 'hitches ' + Math.round(tick.hitch_ms_per_s || 0) + ' ms/s · ' + (tick.dropped || 0) + ' dropped');

  const frames = tick.recent_frame_ms || [];
  const budget = cadence ? 1000 / tick.cadence_hz : tick.refresh_hz ? 1000 / tick.refresh_hz : 1000 / 60;
  setText('frametime-budget', 'budget ' + budget.toFixed(1) + ' ms');
  if (frames.length) {
    const sorted = frames.slice().sort((a, b) => a - b);
    setText('frametime-value', sorted[Math.floor(sorted.length / 2)].toFixed(1));
    setText('frametime-sub', 'worst ' + sorted[sorted.length - 1].toFixed(1) + ' ms · median of ' + frames.length);
  }

  setText('cpu-value', tick.cpu_percent >= 100 ? tick.cpu_percent.toFixed(0) : tick.cpu_percent.toFixed(1));
  setText('cpu-sub', tick.thread_count + ' threads · lagscope ' + fmtPercent(tick.monitor_cpu_percent || 0));

  const rss = fmtBytes(tick.rss_bytes).split(NBSP);
  setText('mem-value', rss[0]);
  setText('mem-unit', rss[1] || '');
  setText('mem-sub', 'PSS ' + fmtBytes(tick.pss_bytes) + ' · lagscope ' + fmtBytes(tick.monitor_memory_bytes || 0));

  drawCharts();
}

export function drawCharts() {
  const ticks = metricTicks();
  if (!ticks.length) return;
  const refresh = ticks[ticks.length - 1].refresh_hz || 60;
  drawLineChart(byId('chart-fps'), ticks, (t) => t.fps, {
    color: colors.good, max: Math.max(refresh, ...ticks.map((t) => t.fps)) * 1.08, guide: refresh,
  });
  drawLineChart(byId('chart-cpu'), ticks, (t) => t.cpu_percent, {
    color: colors.cpu, max: Math.max(100, ...ticks.map((t) => t.cpu_percent)) * 1.05,
  });
  drawLineChart(byId('chart-mem'), ticks, (t) => t.rss_bytes, {
    color: colors.mem, max: Math.max(...ticks.map((t) => t.rss_bytes)) * 1.15,
  });
  drawFrameChart(byId('chart-frametime'), ticks[ticks.length - 1]);
}

/* A minute of one metric as a filled line; time runs on the app's clock (wall_ms of the
 * ticks), so a browser whose clock is off still draws it right. Ticks that fell inside a hang
 * get a red band behind the line. */
function drawLineChart(canvas, ticks, value, opts) {
  const box = prepareCanvas(canvas);
  if (!box) return;
  const { ctx, width, height } = box;
  const end = ticks[ticks.length - 1].wall_ms;
  const start = end - CHART_WINDOW_MS;
  const x = (t) => ((t - start) / CHART_WINDOW_MS) * width;
  const top = 4;
  const max = opts.max || 1;
  const y = (v) => height - 1 - (Math.max(0, v) / max) * (height - top - 1);

  ctx.fillStyle = colors.hang;
  ctx.globalAlpha = 0.22;
  for (const t of ticks) {
    if (t.hang_in_progress && t.wall_ms >= start) {
      const x0 = x(t.wall_ms - metricsIntervalMs());
      ctx.fillRect(x0, 0, x(t.wall_ms) - x0 + 1, height);
    }
  }
  ctx.globalAlpha = 1;

  ctx.strokeStyle = colors.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(0, height - 0.5);
  ctx.lineTo(width, height - 0.5);
  ctx.stroke();
  if (opts.guide) {
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(0, Math.round(y(opts.guide)) + 0.5);
    ctx.lineTo(width, Math.round(y(opts.guide)) + 0.5);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  const visible = ticks.filter((t) => t.wall_ms >= start - metricsIntervalMs());
  if (!visible.length) return;
  ctx.beginPath();
  visible.forEach((t, i) => (i ? ctx.lineTo(x(t.wall_ms), y(value(t))) : ctx.moveTo(x(t.wall_ms), y(value(t)))));
  ctx.strokeStyle = opts.color;
  ctx.lineWidth = 1.5;
  ctx.lineJoin = 'round';
  ctx.stroke();
  ctx.lineTo(x(visible[visible.length - 1].wall_ms), height);
  ctx.lineTo(x(visible[0].wall_ms), height);
  ctx.closePath();
  ctx.globalAlpha = 0.14;
  ctx.fillStyle = opts.color;
  ctx.fill();
  ctx.globalAlpha = 1;
}

/* The latest frames as bars on a square-root scale: a 600 ms hitch and 16 ms frames stay
 * visible side by side. The dashed line is the frame budget of the display's refresh rate. */
function drawFrameChart(canvas, tick) {
  const box = prepareCanvas(canvas);
  if (!box) return;
  const { ctx, width, height } = box;
  const frames = tick.recent_frame_ms || [];
  const budget = 1000 / (tick.refresh_hz || 60);
  const threshold = appConfig('hang_threshold_ms') || 250;
  const max = Math.max(budget * 4, ...frames);
  const y = (v) => height - Math.sqrt(Math.max(0, v) / max) * (height - 4);
  const slots = Math.max(frames.length, 60);
  const step = width / slots;
  const barWidth = Math.max(1, step - (step > 3 ? 1 : 0));
  frames.forEach((ms, i) => {
    const x = width - (frames.length - i) * step;
    ctx.fillStyle = ms >= threshold ? colors.bad : ms > budget * 1.5 ? colors.warn : colors.accent;
    const top = y(ms);
    ctx.fillRect(x, top, barWidth, height - top);
  });
  ctx.strokeStyle = colors.muted;
  ctx.setLineDash([3, 3]);
  ctx.beginPath();
  ctx.moveTo(0, Math.round(y(budget)) + 0.5);
  ctx.lineTo(width, Math.round(y(budget)) + 0.5);
  ctx.stroke();
  ctx.setLineDash([]);
}
