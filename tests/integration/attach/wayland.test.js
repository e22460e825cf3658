// lagscope-run on Wayland (issue 43): the HUD as a subsurface of the program's toplevel,
// live while its main thread is stuck (GTK 3, GTK 4, Qt 6, Debian's gtk4-widget-factory), and
// frames from a plain client's surface commits.
// Each case runs its own weston (headless backend, pixman renderer, --debug so that
// weston-screenshooter may shoot) on a socket of its own, in a runtime folder of its own (0700).
// Usage: node wayland.test.js LAGSCOPE_RUN GTK_STALL OUT_DIR [GTK4_STALL QT6_STALL QT6_WAYLAND
// GTK4_WIDGET_FACTORY QT5_STALL QT5_WAYLAND] (the last six: a case skipped where its path does
// not exist). Exit 77
// without weston.
'use strict';
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');

const [run, gtkStall, outDir, gtk4Stall, qt6Stall, qt6Wayland, widgetFactory, qt5Stall, qt5Wayland] =
  process.argv.slice(2).map((p) => path.resolve(p));
const have = (file, what) => (file && fs.existsSync(file)) || void console.log(`wayland: skipped: ${what}`);
const WAIT_MS = 30000;

function which(name) {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}
for (const tool of ['weston', 'weston-screenshooter', 'weston-simple-shm']) {
  if (!which(tool)) {
    console.log(`wayland: skipped: ${tool} not found (Debian: apt-get install weston)`);
    process.exit(77);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function fail(message) {
  console.error(`wayland: FAIL: ${message}`);
  process.exitCode = 1;
  throw new Error(message);
}
async function until(what, test, ms = WAIT_MS) {
  const end = Date.now() + ms;
  for (;;) {
    const got = test();
    if (got) return got;
    if (Date.now() > end) fail(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

// ---- a PNG (8-bit RGB or RGBA, not interlaced: cairo's, which weston-screenshooter writes) ----
function readPng(file) {
  const data = fs.readFileSync(file);
  let pos = 8, width = 0, height = 0, type = 0;
  const idat = [];
  while (pos < data.length) {
    const len = data.readUInt32BE(pos), kind = data.toString('ascii', pos + 4, pos + 8);
    const body = data.subarray(pos + 8, pos + 8 + len);
    if (kind === 'IHDR') (width = body.readUInt32BE(0)), (height = body.readUInt32BE(4)), (type = body[9]);
    if (kind === 'IDAT') idat.push(body);
    pos += 12 + len;
  }
  const bpp = type === 6 ? 4 : 3, row = width * bpp, raw = zlib.inflateSync(Buffer.concat(idat));
  const px = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (row + 1)], src = y * (row + 1) + 1;
    for (let x = 0; x < row; x++) {
      const a = x >= bpp ? px[y * row + x - bpp] : 0, b = y > 0 ? px[(y - 1) * row + x] : 0;
      const c = x >= bpp && y > 0 ? px[(y - 1) * row + x - bpp] : 0;
      let v = raw[src + x];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[y * row + x] = v & 255;
    }
  }
  return { width, height, at: (x, y) => [px[y * row + x * bpp], px[y * row + x * bpp + 1], px[y * row + x * bpp + 2]] };
}

// The hang badge's red (the HUD's, #ff453a-ish): nothing else on weston's grey desktop, GTK's
// light theme or simple-shm's pattern... which has red: only shots of GTK programs use this.
const isBadgeRed = ([r, g, b]) => r > 220 && g < 110 && b < 110;
function badgeBox(png) {
  let x0 = 1e9, y0 = 1e9, x1 = -1, y1 = -1, n = 0;
  for (let y = 0; y < png.height; y++)
    for (let x = 0; x < png.width; x++)
      if (isBadgeRed(png.at(x, y))) (n++), (x0 = Math.min(x0, x)), (y0 = Math.min(y0, y)), (x1 = Math.max(x1, x)), (y1 = Math.max(y1, y));
  return n >= 200 ? { x0, y0, x1, y1, n } : null;
}
function changedIn(a, b, box) {
  let n = 0;
  for (let y = box.y0; y <= box.y1; y++)
    for (let x = box.x0; x <= box.x1; x++) if (a.at(x, y).join() !== b.at(x, y).join()) n++;
  return n;
}

// ---- weston, lagscope-run, screenshots ----
const children = [];
process.on('exit', () => children.forEach((c) => { try { c.kill('SIGKILL'); } catch (e) {} }));

async function startWeston(name, x11Display, size = [800, 600]) {
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'lagscope-wl-'));
  fs.chmodSync(runtime, 0o700);
  const socket = `lagscope-${name}-${process.pid}`;
  const log = fs.openSync(path.join(runtime, 'weston.log'), 'w');
  const env = { ...process.env, XDG_RUNTIME_DIR: runtime };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  if (x11Display) env.DISPLAY = x11Display; /* weston's output a window there: xdotool clicks in it */
  const backend = x11Display ? 'x11-backend.so' : 'headless-backend.so';
  const weston = spawn('weston', [`--backend=${backend}`, '--use-pixman', '--debug',
    `--socket=${socket}`, `--width=${size[0]}`, `--height=${size[1]}`, '--idle-time=0'],
    { env, cwd: runtime, stdio: ['ignore', log, log] });
  children.push(weston);
  await until('weston\'s socket', () => fs.existsSync(path.join(runtime, socket)));
  const clientEnv = { ...env, WAYLAND_DISPLAY: socket, GDK_BACKEND: 'wayland' };
  delete clientEnv.DISPLAY; /* the program: Wayland only */
  return { runtime, env: clientEnv, weston };
}

function startRun(w, extra, program, env = {}) {
  const events = path.join(w.runtime, 'events.jsonl'), json = path.join(w.runtime, 'run.json');
  const p = spawn(run, ['--port', '0', '--bind', '127.0.0.1', '--events', events, '--json', json, ...extra, '--', ...program],
    { env: { ...w.env, ...env }, cwd: w.runtime, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(p);
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => (out += d));
  const ended = new Promise((r) => p.on('exit', (code) => r(code)));
  // Whole lines only: a line being appended shows in part to a reader (the kernel copies a write
  // of over a page in steps; the CI once read 4236 bytes of a longer metrics line).
  const whole = (text) => text.slice(0, text.lastIndexOf('\n') + 1);
  const lines = () => whole(fs.existsSync(events) ? fs.readFileSync(events, 'utf8') : '').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { p, ended, lines, output: () => out, json: () => JSON.parse(fs.readFileSync(json, 'utf8')) };
}

let shots = 0;
function screenshot(w, name) {
  const before = new Set(fs.readdirSync(w.runtime));
  const r = spawnSync('weston-screenshooter', [], { env: w.env, cwd: w.runtime, encoding: 'utf8', timeout: 10000 });
  const made = fs.readdirSync(w.runtime).find((f) => f.endsWith('.png') && !before.has(f));
  if (r.status !== 0 || !made) fail(`weston-screenshooter: exit ${r.status}, ${r.stderr}`);
  fs.mkdirSync(outDir, { recursive: true });
  const kept = path.join(outDir, `wayland_${name}.png`);
  fs.copyFileSync(path.join(w.runtime, made), kept);
  shots++;
  return readPng(kept);
}

async function stop(w) {
  w.weston.kill('SIGTERM');
  await new Promise((r) => (w.weston.exitCode !== null ? r() : w.weston.on('exit', r)));
  fs.rmSync(w.runtime, { recursive: true, force: true });
}

// ---- the cases ----

// A sample of a stall in fn, ms into it.
const inStall = (ms, fn = 'attach_stall_callback') => (e) => e.type === 'hang_sample' &&
  e.elapsed_ms >= ms && JSON.stringify(e.stack).includes(fn);
const framesCounted = (r) => (r.lines().filter((e) => e.type === 'metrics').pop() || {}).total_frames || 0;

// The frames the program said it drew (its last line, matched by re) counted once: not also its
// toplevel's commits (a toolkit's hook turns commit counting off), at most extra more.
function countedOnce(r, re, extra) {
  const own = Number((re.exec(r.output()) || [])[1]), counted = framesCounted(r);
  if (!(own >= 30) || counted < own * 0.95 || counted > own * 1.05 + extra) fail(`the program drew ${own} frames, lagscope counted ${counted}`);
  console.log(`wayland: the program drew ${own} frames, lagscope counted ${counted}`);
}

// Two shots 1.2 s apart while the program's main thread is stuck in fn (wayland_NAME_1/2.png):
// the hang badge in both, and changed between them (it counts up: the HUD is live).
async function badgeCountsMidStall(w, r, name, fn) {
  await until(`${name}'s stall under way`, () => r.lines().some(inStall(500, fn)));
  const first = screenshot(w, `${name}_1`);
  await sleep(1200);
  const second = screenshot(w, `${name}_2`);
  const box1 = badgeBox(first), box2 = badgeBox(second);
  if (!box1 || !box2) fail(`no hang badge in the shots mid-stall (${outDir}/wayland_${name}_*.png): ${r.output()}`);
  const changed = changedIn(first, second, box1);
  if (changed < 20) fail(`${name}: the badge did not count between the shots (${changed} pixels changed)`);
  console.log(`wayland: ${name}: badge at (${box1.x0},${box1.y0})-(${box1.x1},${box1.y1}), ${changed} of its pixels changed in 1.2 s`);
}

// lagscope-run's end: exit 0 and a hang of at least ms whose cause names fn.
async function hangFoundWhole(r, ms, fn) {
  const code = await r.ended;
  const hangs = r.json().hangs || [];
  const stall = hangs.find((h) => h.duration_ms >= ms);
  if (code !== 0 || !stall) fail(`lagscope-run exit ${code}, hangs ${JSON.stringify(hangs).slice(0, 400)}: ${r.output()}`);
  if (!JSON.stringify(stall).includes(fn)) fail(`the stall's cause misses ${fn}: ${JSON.stringify(stall).slice(0, 600)}`);
  console.log(`wayland: hang of ${stall.duration_ms} ms, cause: ${stall.cause}`);
  return stall;
}

// A GTK 3 program of the project's (gtk_stall) stalls 4 s: the HUD's badge counts in two shots
// mid-stall, the hang is found whole with its cause.
async function gtkStallBadgeCounts() {
  const w = await startWeston('stall');
  const r = startRun(w, [], [gtkStall, '--button', '--stall-ms', '4000', '--stall-after-ms', '1500', '--quit-after-ms', '500']);
  await badgeCountsMidStall(w, r, 'stall', 'attach_stall_callback');
  await hangFoundWhole(r, 3500, 'attach_stall_callback');
  await stop(w);
}

// GTK 4's frames timed by their presentation (GDK's frame timings, weston's presentation
// feedback), not by when the main thread drew them: the frame times lagscope reports
// (recent_frame_ms of every metrics line) are the intervals between the presentation times
// gtk4_stall read from its own frame clock (--print-presented), to 0.002 ms, 80% of them at
// least (the frames around the stall, the first, a frame GDK skipped are not), and lagscope said
// so. Timed when drawn, 7% were (60 of 803).
function timedByPresentation(r) {
  const line = /gtk4_stall: presented at \(us\):([ 0-9]*)/.exec(r.output());
  const at = line ? line[1].trim().split(/ +/).map(Number).filter((t) => t > 0) : [];
  if (at.length < 30) fail(`gtk4_stall read only ${at.length} presentation times: ${r.output()}`);
  const intervals = at.slice(1).map((t, i) => (t - at[i]) / 1000);
  const times = r.lines().filter((e) => e.type === 'metrics').flatMap((e) => e.recent_frame_ms || []).filter((ms) => ms > 0 && ms < 100);
  const matched = times.filter((ms) => intervals.some((iv) => Math.abs(iv - ms) <= 0.002)).length;
  if (times.length < 30 || matched < times.length * 0.8)
    fail(`${matched} of lagscope's ${times.length} frame times are intervals between GDK's presentation times (e.g. lagscope ${times.slice(0, 6).join(' ')}, GDK ${intervals.slice(0, 6).map((x) => x.toFixed(3)).join(' ')})`);
  if (!/GTK 4: frames timed by their presentation/.test(r.output())) fail(`lagscope did not say which clock times the frames: ${r.output()}`);
  console.log(`wayland: GTK 4: ${matched} of lagscope's ${times.length} frame times are intervals between GDK's presentation times`);
}

// GTK 4 (the tests' gtk4_stall, animating every frame, GSK_RENDERER=cairo as in
// test_attach_gtk4.c) stalls 4 s: the badge counts mid-stall, the hang is found whole, and its
// frames are counted once (GDK's signals; its toplevel's commits are not counted as well).
async function gtk4StallBadgeCounts() {
  console.log('wayland: GTK 4');
  if (!have(gtk4Stall, 'GTK 4: no gtk4_stall (libgtk-4-dev)')) return;
  const w = await startWeston('gtk4');
  const r = startRun(w, [], [gtk4Stall, '--stall-ms', '4000', '--stall-after-ms', '1500', '--run-ms', '7000', '--print-presented'],
    { GSK_RENDERER: 'cairo' });
  await badgeCountsMidStall(w, r, 'gtk4_stall', 'attach_gtk4_stall');
  await hangFoundWhole(r, 3500, 'attach_gtk4_stall');
  countedOnce(r, /gtk4_stall: (\d+) frames/, 2);
  timedByPresentation(r);
  await stop(w);
}

// Qt 6 (the tests' qt6_stall, QT_QPA_PLATFORM=wayland, its label repainted every 16 ms) stalls
// 6 s: the badge counts mid-stall, the hang is found whole, its paints counted once.
async function qt6StallBadgeCounts() {
  console.log('wayland: Qt 6');
  if (!have(qt6Stall, 'Qt 6: no qt6_stall (qt6-base-dev)') || !have(qt6Wayland, 'Qt 6: no Wayland plugin (qt6-wayland)')) return;
  const w = await startWeston('qt6');
  const r = startRun(w, [], [qt6Stall, '1500', '6000', '9000'], { QT_QPA_PLATFORM: 'wayland' });
  await badgeCountsMidStall(w, r, 'qt6_stall', 'attach_qt_stall');
  await hangFoundWhole(r, 5500, 'attach_qt_stall');
  countedOnce(r, /qt_stall: (\d+) paints/, 3); /* QBackingStore::flush: its window's first too */
  await stop(w);
}

// Qt 5 (the tests' qt_stall, QT_QPA_PLATFORM=wayland: Debian's qtwayland5) the same: the badge
// counts mid-stall, the hang is found whole, its paints counted once.
async function qt5StallBadgeCounts() {
  console.log('wayland: Qt 5');
  if (!have(qt5Stall, 'Qt 5: no qt_stall (qtbase5-dev)') || !have(qt5Wayland, 'Qt 5: no Wayland plugin (qtwayland5)')) return;
  const w = await startWeston('qt5');
  const r = startRun(w, [], [qt5Stall, '1500', '6000', '9000'], { QT_QPA_PLATFORM: 'wayland' });
  await badgeCountsMidStall(w, r, 'qt5_stall', 'attach_qt_stall');
  await hangFoundWhole(r, 5500, 'attach_qt_stall');
  countedOnce(r, /qt_stall: (\d+) paints/, 3);
  await stop(w);
}

// The HUD's panel (dark and neutral, #141419 at 82% over the window): rows with a run of at
// least 40 such pixels beside its badge, which no text or widget of a light theme makes. Below
// weston's panel (its top 32 rows, dark too).
const isPanelDark = ([r, g, b]) => Math.max(r, g, b) < 80 && Math.max(r, g, b) - Math.min(r, g, b) < 16;
function hudPanelRows(png) {
  let rows = 0;
  for (let y = 34; y < png.height; y++) {
    let run = 0, best = 0;
    for (let x = 0; x < png.width; x++) {
      run = isPanelDark(png.at(x, y)) ? run + 1 : 0;
      best = Math.max(best, run);
    }
    if (best >= 40) rows++;
  }
  return rows;
}

// The box of the HUD's panel (its rows as hudPanelRows finds them), and of the program's window
// (its plain background, on weston's grey desktop: weston-simple-shm's white frame, or
// weston-simple-egl's clear colour, black at alpha 0 in the shot); null when not found.
function panelBox(png) {
  let box = null;
  for (let y = 34; y < png.height; y++) {
    let run = 0, best = 0, bestEnd = 0;
    for (let x = 0; x < png.width; x++) {
      const px = png.at(x, y);
      run = isPanelDark(px) && px.some((v) => v > 0) ? run + 1 : 0; /* not black: simple-egl's window is */
      if (run > best) (best = run), (bestEnd = x);
    }
    if (best < 40) continue;
    if (!box) box = { x0: bestEnd - best + 1, y0: y, x1: bestEnd, y1: y };
    (box.x0 = Math.min(box.x0, bestEnd - best + 1)), (box.x1 = Math.max(box.x1, bestEnd)), (box.y1 = y);
  }
  return box;
}
function windowBox(png) {
  let box = null;
  for (let y = 34; y < png.height; y++)
    for (let x = 0; x < png.width; x++) {
      const [r, g, b] = png.at(x, y), white = Math.min(r, g, b) >= 250, black = r + g + b === 0;
      if (!white && !black) continue;
      if (!box) box = { x0: x, y0: y, x1: x, y1: y };
      (box.x0 = Math.min(box.x0, x)), (box.x1 = Math.max(box.x1, x)), (box.y1 = y);
    }
  return box;
}

// The HUD in the window's bottom left corner (lagscope-run's default), 8 points in (the HUD's
// margin), where the program set no window geometry: the window is then its buffer's extent.
function hudAtBottomLeft(png, name) {
  const hud = panelBox(png), win = windowBox(png);
  if (!hud || !win) fail(`${name}: no HUD or no window in the shot (${outDir}/wayland_${name}.png)`);
  const left = hud.x0 - win.x0, below = win.y1 - hud.y1;
  if (Math.abs(left - 8) > 3 || Math.abs(below - 8) > 3)
    fail(`${name}: the HUD at (${hud.x0},${hud.y0})-(${hud.x1},${hud.y1}) is ${left} px from the window's left and ${below} px above its bottom (${win.x0},${win.y0})-(${win.x1},${win.y1}), not 8 and 8: not in the bottom left corner`);
  console.log(`wayland: ${name}: the HUD in the window's bottom left corner (${left} px in, ${below} px up)`);
}

// The HUDs in a shot over a dark window (weston-simple-egl's is black): bands of rows with a run
// of at least 40 pixels of the HUD's panel (#141418, within 6), each at least 30 rows high,
// gaps of up to 12 rows (a line of its text) inside one.
function hudPanels(png) {
  let bands = 0, rows = 0, gap = 0;
  for (let y = 34; y <= png.height; y++) {
    let run = 0, best = 0;
    for (let x = 0; y < png.height && x < png.width; x++) {
      const [r, g, b] = png.at(x, y);
      run = Math.abs(r - 20) <= 6 && Math.abs(g - 20) <= 6 && Math.abs(b - 24) <= 6 ? run + 1 : 0;
      best = Math.max(best, run);
    }
    if (best >= 40) (rows += gap + 1), (gap = 0);
    else if (rows > 0 && ++gap > 12) (bands += rows >= 30 ? 1 : 0), (rows = 0), (gap = 0);
  }
  return bands + (rows >= 30 ? 1 : 0);
}

// An EGL program on Wayland (Debian's weston-simple-egl, opaque, Mesa's EGL): one HUD, the
// subsurface, not the subsurface and the HUD drawn into its GL frames as well.
async function simpleEglOneHud() {
  console.log('wayland: weston-simple-egl');
  if (!which('weston-simple-egl')) return console.log('wayland: skipped: no weston-simple-egl (weston)');
  const w = await startWeston('egl');
  const r = startRun(w, [], ['weston-simple-egl', '-o']);
  const frames = await until('10 frames of weston-simple-egl counted', () => (framesCounted(r) >= 10 ? framesCounted(r) : null));
  await sleep(1000); /* the HUD drawn, in the frames or beside them */
  const shot = screenshot(w, 'simple_egl'), huds = hudPanels(shot);
  if (huds !== 1) fail(`${huds} HUDs over weston-simple-egl (${outDir}/wayland_simple_egl.png), not one`);
  hudAtBottomLeft(shot, 'simple_egl');
  console.log(`wayland: weston-simple-egl: ${frames} frames counted, one HUD`);
  process.kill(r.lines().find((e) => e.type === 'run_started').pid, 'SIGINT');
  await r.ended;
  await stop(w);
}

// Debian's gtk4-widget-factory (gtk-4-examples), its own renderer: frames counted, the HUD in a shot.
async function widgetFactoryHud() {
  console.log('wayland: gtk4-widget-factory');
  if (!have(widgetFactory, 'gtk4-widget-factory: not installed (gtk-4-examples)')) return;
  // Its window (about 1400 x 800) on the screen whole: the HUD goes to its bottom left corner.
  const w = await startWeston('gtk4wf', undefined, [1920, 1080]);
  const r = startRun(w, [], [widgetFactory]);
  const frames = await until('10 frames of gtk4-widget-factory counted', () => (framesCounted(r) >= 10 ? framesCounted(r) : null));
  await sleep(1000); /* its window drawn, the HUD updated */
  const rows = hudPanelRows(screenshot(w, 'widget_factory'));
  if (rows < 30) fail(`no HUD over gtk4-widget-factory (${outDir}/wayland_widget_factory.png: ${rows} rows of its panel)`);
  console.log(`wayland: gtk4-widget-factory: ${frames} frames counted, the HUD's panel ${rows} rows high`);
  process.kill(r.lines().find((e) => e.type === 'run_started').pid, 'SIGTERM');
  await r.ended;
  await stop(w);
}

// The same with --no-hud: no badge mid-stall.
async function noHud() {
  console.log('wayland: --no-hud');
  const w = await startWeston('nohud');
  const r = startRun(w, ['--no-hud'], [gtkStall, '--stall-ms', '3000', '--stall-after-ms', '1500', '--quit-after-ms', '500']);
  await until('the stall under way', () => r.lines().some(inStall(800)));
  const shot = screenshot(w, 'no_hud');
  if (badgeBox(shot)) fail(`a HUD with --no-hud (${outDir}/wayland_no_hud.png)`);
  await r.ended;
  await stop(w);
}

// weston-simple-shm (Debian's, no toolkit): its frames counted from its toplevel's commits, and
// the HUD over it.
async function simpleShmFrames() {
  console.log('wayland: weston-simple-shm');
  const w = await startWeston('shm');
  const r = startRun(w, [], ['weston-simple-shm']);
  const frames = await until('30 frames of weston-simple-shm counted', () => {
    const m = r.lines().filter((e) => e.type === 'metrics').pop();
    return m && m.total_frames >= 30 ? m.total_frames : null;
  });
  await sleep(500); /* the HUD drawn and placed */
  hudAtBottomLeft(screenshot(w, 'simple_shm'), 'simple_shm');
  // weston-simple-shm ends on SIGINT (lagscope-run passes no signal on: the program gets it).
  process.kill(r.lines().find((e) => e.type === 'run_started').pid, 'SIGINT');
  const code = await r.ended;
  // Its only loop is libwayland's (wl_display_dispatch): watched, not 'no loop seen' (exit 5).
  const summary = r.json();
  if (code !== 0 || summary.watched !== true) fail(`lagscope-run exit ${code}, watched ${summary.watched}: ${r.output()}`);
  console.log(`wayland: weston-simple-shm: ${frames} frames counted, lagscope-run exit ${code}`);
  await stop(w);
}

// A click on the HUD reaches the program's button under it (the subsurface's input region is
// empty): weston's output is a window on an Xvfb of the case's own, where xdotool clicks.
async function clickThrough() {
  console.log('wayland: a click through the HUD');
  if (!which('Xvfb') || !which('xdotool')) return console.log('wayland: click: skipped: no Xvfb or xdotool');
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1024x768x24', '-nolisten', 'tcp'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  children.push(xvfb);
  let number = '';
  xvfb.stdio[3].on('data', (d) => (number += d));
  const display = ':' + (await until('Xvfb\'s display number', () => (/\n/.test(number) ? number.trim() : null)));
  const w = await startWeston('click', display);
  // The HUD at the top left, where gtk_stall's button is (the default corner, bottom left, is
  // clear of it).
  const r = startRun(w, ['--hud-corner', 'tl'], [gtkStall, '--button', '--stall-ms', '2500', '--stall-after-ms', '1500', '--quit-after-ms', '8000']);
  await until('the stall under way', () => r.lines().some(inStall(500)));
  const box = badgeBox(screenshot(w, 'click_stall'));
  if (!box) fail(`no hang badge mid-stall (${outDir}/wayland_click_stall.png)`);
  await until('the stall\'s end', () => r.lines().some((e) => e.type === 'hang_ended' && e.duration_ms >= 2000));
  // The badge's bottom middle: on the HUD, over gtk_stall's button (the upper half of its window).
  const x = String((box.x0 + box.x1) >> 1), y = String(box.y1 - 2);
  const click = spawnSync('xdotool', ['mousemove', x, y, 'sleep', '0.3', 'mousedown', '1', 'sleep', '0.15', 'mouseup', '1'],
    { env: { ...process.env, DISPLAY: display }, encoding: 'utf8' });
  if (click.status !== 0) fail(`xdotool: ${click.stderr}`);
  await until('gtk_stall\'s "clicked" after a click on the HUD at ' + x + ',' + y, () => r.output().includes('gtk_stall: clicked'), 5000);
  console.log(`wayland: the click at ${x},${y}, on the HUD, reached gtk_stall's button`);
  process.kill(r.lines().find((e) => e.type === 'run_started').pid, 'SIGTERM');
  await r.ended;
  await stop(w);
  xvfb.kill('SIGTERM');
}

(async () => {
  const only = process.env.LAGSCOPE_WAYLAND_CASE; /* one case, when debugging */
  if (!only || only === 'stall') await gtkStallBadgeCounts();
  if (!only || only === 'nohud') await noHud();
  if (!only || only === 'shm')
  await simpleShmFrames();
  if (!only || only === 'click') await clickThrough();
  if (!only || only === 'gtk4') await gtk4StallBadgeCounts();
  if (!only || only === 'qt6') await qt6StallBadgeCounts();
  if (!only || only === 'qt5') await qt5StallBadgeCounts();
  if (!only || only === 'egl') await simpleEglOneHud();
  if (!only || only === 'gtk4wf') await widgetFactoryHud();
  console.log(`wayland: ok (${shots} screenshots in ${outDir})`);
})().catch((e) => {
  if (!process.exitCode) console.error(`wayland: FAIL: ${e.stack}`);
  process.exit(1); /* the children are killed on exit */
});
