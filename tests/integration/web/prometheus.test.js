#!/usr/bin/env node
// GET /metrics scraped by a real Prometheus (Debian's `prometheus`; docs/viewer-api.md,
// "GET /metrics"): two instances of the demo, one app name and one report folder, each given
// its own credential by LAGSCOPE_METRICS_TOKEN, stall 0.54 s every second; each /metrics
// answers 200 to its own credential (and its viewer token), 401 to none, a wrong one or the
// other's; a third, given a credential too short, refuses it and says so without its value,
// and no demo prints its credential. The first's /metrics answers the Prometheus text format
// that `promtool check metrics` passes, and the OpenMetrics format to a scraper that asks for
// it; Prometheus, started with the scrape config there (the set credential as a bearer),
// scrapes it through the stalls, and its HTTP API then has lagscope_hangs_total{kind="sleep"}
// of 2 or more (no more than the demo's hang_ended lines), lagscope_info with the demo's pid,
// lagscope_build_info, the docs' p95 query near the hangs' 0.54..0.6 s, the frame histogram's
// _sum and _count, the CPU seconds counter, the blind-spell counter, and the metadata
// OpenMetrics gives (lagscope's type "info"). With --run, lagscope-run's --metrics-token
// reaches the program's lagscope: its /metrics answers that credential (200), not a wrong one.
//
// Prometheus cannot listen on port 0: a free port is found by listening on 0 and closing, and
// the whole start is tried again (3 times) when another process took it meanwhile.
//
// Usage: node prometheus.test.js --demo PATH/lagscope-demo --prometheus PATH --promtool PATH
//        [--run PATH/lagscope-run]
// Exit: 0 passed, 1 failed, 2 bad usage.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawn, spawnSync } = require('child_process');

const HOST = '127.0.0.1';
const arg = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : null; };
const demoPath = arg('--demo'), prometheusPath = arg('--prometheus'), promtoolPath = arg('--promtool');
const runPath = arg('--run');
if (!demoPath || !prometheusPath || !promtoolPath) {
  console.error('usage: node prometheus.test.js --demo PATH --prometheus PATH --promtool PATH');
  process.exit(2);
}
const { fail, tempDir, track, letGo, until, get, startServer } =
  require('./script.js').testScript(150000);

// Credentials of the user's, as LAGSCOPE_METRICS_TOKEN gives them (16..128 characters).
const CREDENTIAL_A = 'team-scrape-A/7f3e9c1d+x', CREDENTIAL_B = 'team-scrape-B~42aa90cd=x';
const CREDENTIAL_SHORT = 'short-7f3e9';

// The demo, stalling 540 ms (a sleep) every second, with LAGSCOPE_METRICS_TOKEN set to
// credential; resolves once its viewer's URL is known. Its output is kept (never the
// credential in it).
function startDemo(reportDir, credential) {
  const proc = spawn(demoPath, ['--headless', '--events', 'jsonl', '--port', '0', '--bind', HOST,
    '--report-dir', reportDir, '--stall-kind', 'sleep', '--stall-ms', '540', '--stall-every', '1'],
  { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LAGSCOPE_METRICS_TOKEN: credential } });
  track(proc);
  const demo = { proc, hangsEnded: 0, url: null, pid: proc.pid, credential, output: '' };
  let buf = '';
  proc.stderr.on('data', (c) => { demo.output += c; process.stderr.write(c); });
  proc.stdout.on('data', (c) => {
    demo.output += c;
    buf += c;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.startsWith('{')) continue;
      const e = JSON.parse(line);
      if (e.type === 'server_started') demo.url = e.url;
      if (e.type === 'hang_ended' && e.counted) demo.hangsEnded++;
    }
  });
  return until('the demo\'s server_started line', 20000, async () => (demo.url ? demo : null));
}

// Each instance answers its own credential and its viewer token, and nothing else.
async function checkCredentials(a, b, short) {
  for (const [demo, other] of [[a, b], [b, a]]) {
    const u = new URL(demo.url);
    const metrics = `http://${u.host}/metrics`;
    const own = await get(metrics, { Authorization: `Bearer ${demo.credential}` });
    if (own.status !== 200) fail(`instance ${demo.pid}, its own credential: ${own.status}, not 200`);
    const viewer = await get(metrics, { Authorization: `Bearer ${u.searchParams.get('token')}` });
    if (viewer.status !== 200) fail(`instance ${demo.pid}, its viewer token: ${viewer.status}, not 200`);
    const theirs = await get(metrics, { Authorization: `Bearer ${other.credential}` });
    if (theirs.status !== 401) fail(`instance ${demo.pid}, the other's credential: ${theirs.status}, not 401`);
    const wrong = await get(metrics, { Authorization: `Bearer ${demo.credential}x` });
    if (wrong.status !== 401) fail(`instance ${demo.pid}, a wrong credential: ${wrong.status}, not 401`);
    const api = await get(`http://${u.host}/api/v1/status`, { Authorization: `Bearer ${demo.credential}` });
    if (api.status !== 401) fail(`instance ${demo.pid}: the credential opened /api/v1/status (${api.status})`);
  }
  console.log('ok   two instances of one app, one report folder: each answers its own credential (200), not the other\'s nor a wrong one (401); the credential opens /metrics only');
  const su = new URL(short.url);
  const refused = await get(`http://${su.host}/metrics`, { Authorization: `Bearer ${CREDENTIAL_SHORT}` });
  if (refused.status !== 401) fail(`a credential too short: ${refused.status}, not 401`);
  await until('the demo saying its credential is too short', 10000, async () =>
    (short.output.includes('LAGSCOPE_METRICS_TOKEN is shorter than 16 characters') ? true : null));
  console.log('ok   a credential too short is refused (401) and said');
}

async function checkRoute(demo) {
  const u = new URL(demo.url);
  const token = u.searchParams.get('token');
  const metrics = `http://${u.host}/metrics`;
  const none = await get(metrics);
  if (none.status !== 401) fail(`/metrics without the token: ${none.status}, not 401`);
  const wrong = await get(metrics, { Authorization: 'Bearer 0123456789abcdef0123456789abcdef' });
  if (wrong.status !== 401) fail(`/metrics with a wrong bearer token: ${wrong.status}, not 401`);
  // once the first metrics sample is in, so that promtool reads every family
  const text = await until('/metrics with the gauges', 10000, async () => {
    const r = await get(metrics, { Authorization: `Bearer ${token}` });
    return r.status !== 200 || r.body.includes('lagscope_fps ') ? r : null;
  });
  if (text.status !== 200 || !/^text\/plain; version=0\.0\.4/.test(text.type))
    fail(`/metrics with the bearer token: ${text.status} ${text.type}`);
  const lint = spawnSync(promtoolPath, ['check', 'metrics'], { input: text.body, encoding: 'utf8' });
  if (lint.status !== 0 || lint.stdout.trim() !== '' || lint.stderr.trim() !== '')
    fail(`promtool check metrics: exit ${lint.status}\n${lint.stdout}${lint.stderr}\n${text.body}`);
  console.log(`ok   /metrics: 401 without the token or with a wrong one; promtool check metrics passes (${text.body.length} bytes)`);
  const om = await get(`${metrics}?token=${token}`, { Accept: 'application/openmetrics-text;version=1.0.0,text/plain;q=0.5' });
  if (!/^application\/openmetrics-text; version=1\.0\.0/.test(om.type) || !om.body.endsWith('# EOF\n') ||
      !om.body.includes('# TYPE lagscope info\n') || !om.body.includes('# TYPE lagscope_hangs counter\n'))
    fail(`OpenMetrics asked for: ${om.type}\n${om.body}`);
  console.log('ok   Accept: application/openmetrics-text gets OpenMetrics (info type, counter families, # EOF)');
}

// lagscope-run --metrics-token: `sleep` run under it (no loop: --allow-unwatched) serves
// /metrics to the credential given; its viewer's URL comes from the --events file.
async function checkRunFlag() {
  const dir = tempDir('lagscope-prom-run-');
  const events = path.join(dir, 'events.jsonl');
  const credential = 'run-flag-credential-9c41';
  const proc = spawn(runPath, ['--allow-unwatched', '--quiet', '--port', '0', '--bind', HOST,
    '--report-dir', path.join(dir, 'reports'), '--events', events, '--metrics-token', credential,
    '--', 'sleep', '60'], { stdio: ['ignore', 'ignore', 'pipe'] });
  track(proc);
  let err = '';
  proc.stderr.on('data', (c) => { err += c; });
  const url = await until('lagscope-run\'s server_started line', 20000, async () => {
    const text = fs.existsSync(events) ? fs.readFileSync(events, 'utf8') : '';
    const line = text.split('\n').find((l) => l.includes('"server_started"'));
    return line ? JSON.parse(line).url : null;
  });
  const metrics = `http://${new URL(url).host}/metrics`;
  const own = await get(metrics, { Authorization: `Bearer ${credential}` });
  if (own.status !== 200) fail(`lagscope-run --metrics-token: ${own.status}, not 200`);
  const wrong = await get(metrics, { Authorization: `Bearer ${credential}x` });
  if (wrong.status !== 401) fail(`lagscope-run, a wrong credential: ${wrong.status}, not 401`);
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
  letGo(proc);
  if (err.includes(credential) || fs.readFileSync(events, 'utf8').includes(credential))
    fail(`lagscope-run printed its credential:\n${err}`);
  console.log('ok   lagscope-run --metrics-token: the program\'s /metrics answers it (200), not a wrong one (401); never printed');
}

// No demo wrote its credential anywhere (log lines, events).
function checkNeverLogged(demos) {
  for (const d of demos)
    if (d.output.includes(d.credential)) fail(`instance ${d.pid} printed its credential:\n${d.output}`);
  console.log('ok   no instance printed its credential');
}

// Prometheus scraping the demo every second, as docs/viewer-api.md's scrape config says.
async function startPrometheus(demo) {
  const dir = tempDir('lagscope-prom-');
  const target = new URL(demo.url).host;
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), [
    'global:', '  scrape_interval: 1s', '  scrape_timeout: 1s',
    'scrape_configs:', '  - job_name: lagscope',
    '    authorization:', `      credentials: '${demo.credential}'`,
    '    static_configs:', `      - targets: ['${target}']`, ''].join('\n'));
  return startServer('Prometheus', prometheusPath, (attempt) => [
    `--config.file=${path.join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(dir, `data${attempt}`)}`], HOST);
}

async function query(api, promql) {
  const r = await get(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`);
  if (r.status !== 200) return null;
  const j = JSON.parse(r.body);
  return j.status === 'success' ? j.data.result : null;
}

async function checkScraped(demo, prom) {
  const hangs = await until('lagscope_hangs_total{kind="sleep"} >= 2 in Prometheus', 60000, async () => {
    const r = await query(prom.api, 'lagscope_hangs_total{job="lagscope",kind="sleep"}');
    return r && r.length === 1 && Number(r[0].value[1]) >= 2 ? r : null;
  });
  const value = Number(hangs[0].value[1]);
  if (value > demo.hangsEnded) fail(`Prometheus has ${value} hangs, the demo printed ${demo.hangsEnded} hang_ended`);
  console.log(`ok   Prometheus: lagscope_hangs_total{kind="sleep"} = ${value} (the demo has printed ${demo.hangsEnded} hang_ended so far)`);
  const targets = JSON.parse((await get(`${prom.api}/api/v1/targets`)).body).data.activeTargets;
  if (targets.length !== 1 || targets[0].health !== 'up' || targets[0].lastError !== '')
    fail(`the target: ${JSON.stringify(targets)}`);
  const info = await query(prom.api, 'lagscope_info');
  if (!info || info.length !== 1 || info[0].metric.app !== 'lagscope-demo' || info[0].metric.pid !== String(demo.pid))
    fail(`lagscope_info: ${JSON.stringify(info)} (the demo's pid ${demo.pid})`);
  const p = await query(prom.api, 'histogram_quantile(0.5, lagscope_hang_duration_seconds_bucket)');
  const median = p && p.length === 1 ? Number(p[0].value[1]) : NaN;
  if (!(median >= 0.25 && median <= 1)) fail(`the hangs' median from the histogram: ${JSON.stringify(p)}`);
  const frames = await query(prom.api, 'lagscope_frame_time_seconds_bucket{le="+Inf"}');
  if (!frames || frames.length !== 1 || Number(frames[0].value[1]) < 1) fail(`frame times: ${JSON.stringify(frames)}`);
  const frameCount = await query(prom.api, 'lagscope_frame_time_seconds_count');
  const frameSum = await query(prom.api, 'lagscope_frame_time_seconds_sum');
  if (!frameCount || frameCount.length !== 1 || frameCount[0].value[1] !== frames[0].value[1] ||
      !frameSum || frameSum.length !== 1 || !(Number(frameSum[0].value[1]) > 0))
    fail(`the frame histogram's _count and _sum: ${JSON.stringify(frameCount)} ${JSON.stringify(frameSum)}`);
  // docs/viewer-api.md's p95 query: every hang lasted 0.54..0.6 s (0.975 s with buckets 0.5, 1)
  // (rate needs two scrapes in which the hangs grew)
  const p95q = await until('the p95 query answering', 20000, async () => {
    const r = await query(prom.api, 'histogram_quantile(0.95, sum by (le) (rate(lagscope_hang_duration_seconds_bucket[15m])))');
    return r && r.length === 1 && !Number.isNaN(Number(r[0].value[1])) ? r : null;
  });
  const p95 = p95q && p95q.length === 1 ? Number(p95q[0].value[1]) : NaN;
  if (!(p95 >= 0.5 && p95 <= 0.65)) fail(`the docs' p95 query for hangs of 0.54 s: ${JSON.stringify(p95q)}`);
  const build = await query(prom.api, 'lagscope_build_info');
  if (!build || build.length !== 1 || build[0].metric.app !== 'lagscope-demo' || !build[0].metric.lagscope_version)
    fail(`lagscope_build_info: ${JSON.stringify(build)}`);
  for (const counter of ['lagscope_process_cpu_seconds_total', 'lagscope_blind_spells_total']) {
    const c = await query(prom.api, counter);
    if (!c || c.length !== 1) fail(`${counter}: ${JSON.stringify(c)}`);
  }
  const cpu = await query(prom.api, 'lagscope_process_cpu_seconds_total');
  if (!(Number(cpu[0].value[1]) > 0)) fail(`lagscope_process_cpu_seconds_total: ${JSON.stringify(cpu)}`);
  console.log(`ok   Prometheus: p95 of the hangs ${p95.toFixed(3)} s by the docs' query; frame _sum and _count; lagscope_build_info; CPU seconds ${Number(cpu[0].value[1]).toFixed(2)}; blind spells`);
  for (const gauge of ['lagscope_fps', 'lagscope_cpu_usage_ratio', 'lagscope_resident_memory_bytes']) {
    const g = await query(prom.api, gauge);
    if (!g || g.length !== 1) fail(`${gauge}: ${JSON.stringify(g)}`);
  }
  const meta = JSON.parse((await get(`${prom.api}/api/v1/metadata?metric=lagscope`)).body).data;
  if (!meta.lagscope || meta.lagscope[0].type !== 'info') fail(`Prometheus did not read OpenMetrics: ${JSON.stringify(meta)}`);
  console.log(`ok   Prometheus: target up, lagscope_info{pid="${demo.pid}"}, median hang ${median.toFixed(3)} s, frame times, gauges; scraped as OpenMetrics (type info)`);
}

async function stopDemo(demo) {
  const exited = new Promise((r) => demo.proc.once('exit', r));
  demo.proc.kill('SIGTERM');
  const code = await exited;
  letGo(demo.proc);
  if (code !== 0) fail(`the demo ${demo.pid} exited ${code}`);
}

async function main() {
  const reportDir = tempDir('lagscope-prom-reports-');
  const demo = await startDemo(reportDir, CREDENTIAL_A);
  const second = await startDemo(reportDir, CREDENTIAL_B); // same app, same folder
  const short = await startDemo(tempDir('lagscope-prom-short-'), CREDENTIAL_SHORT);
  await checkCredentials(demo, second, short);
  await stopDemo(short);
  if (runPath) await checkRunFlag();
  await checkRoute(demo);
  const prom = await startPrometheus(demo);
  await checkScraped(demo, prom);
  prom.proc.kill('SIGTERM');
  await stopDemo(second);
  await stopDemo(demo);
  checkNeverLogged([demo, second, short]);
  console.log('prometheus: every check passed');
  process.exit(0);
}

main().catch((e) => fail(e.stack));
