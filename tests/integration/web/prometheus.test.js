#!/usr/bin/env node
// GET /metrics scraped by a real Prometheus (Debian's `prometheus`; docs/viewer-api.md,
// "GET /metrics"): the demo stalls every second; its /metrics refuses a request without the
// token, answers the Prometheus text format that `promtool check metrics` passes, and the
// OpenMetrics format to a scraper that asks for it; Prometheus, started with the scrape config
// there (the token as a bearer, from the report folder's viewer-token file), scrapes
// it through the stalls, and its HTTP API then has lagscope_hangs_total{kind="sleep"} of 2 or
// more (no more than the demo's hang_ended lines), lagscope_info with the demo's pid, the hang
// duration histogram, and the metadata OpenMetrics gives (lagscope's type "info").
//
// Prometheus cannot listen on port 0: a free port is found by listening on 0 and closing, and
// the whole start is tried again (3 times) when another process took it meanwhile.
//
// Usage: node prometheus.test.js --demo PATH/lagscope-demo --prometheus PATH --promtool PATH
// Exit: 0 passed, 1 failed, 2 bad usage.
'use strict';

const net = require('net');
const http = require('http');
const fs = require('fs');
const path = require('path');
const { spawn, spawnSync } = require('child_process');

const HOST = '127.0.0.1';
const arg = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : null; };
const demoPath = arg('--demo'), prometheusPath = arg('--prometheus'), promtoolPath = arg('--promtool');
if (!demoPath || !prometheusPath || !promtoolPath) {
  console.error('usage: node prometheus.test.js --demo PATH --prometheus PATH --promtool PATH');
  process.exit(2);
}
const { fail, tempDir, track, letGo, until } = require('./script.js').testScript(150000);

function get(url, headers = {}) {
  return new Promise((resolve) => {
    const req = http.get(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.setTimeout(5000, () => req.destroy());
  });
}

// The demo, stalling 300 ms (a sleep) every second; resolves once its viewer's URL is known.
function startDemo(reportDir) {
  const proc = spawn(demoPath, ['--headless', '--events', 'jsonl', '--port', '0', '--bind', HOST,
    '--report-dir', reportDir, '--stall-kind', 'sleep', '--stall-ms', '300', '--stall-every', '1'],
  { stdio: ['ignore', 'pipe', 'inherit'] });
  track(proc);
  const demo = { proc, hangsEnded: 0, url: null, pid: proc.pid };
  let buf = '';
  proc.stdout.on('data', (c) => {
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

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, HOST, () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// Prometheus scraping the demo every second, as docs/viewer-api.md's scrape config says.
async function startPrometheus(demo, reportDir) {
  const dir = tempDir('lagscope-prom-');
  const target = new URL(demo.url).host;
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), [
    'global:', '  scrape_interval: 1s', '  scrape_timeout: 1s',
    'scrape_configs:', '  - job_name: lagscope',
    '    authorization:', `      credentials_file: ${path.join(reportDir, 'viewer-token')}`,
    '    static_configs:', `      - targets: ['${target}']`, ''].join('\n'));
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const proc = spawn(prometheusPath, [`--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, `data${attempt}`)}`, `--web.listen-address=${HOST}:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] });
    track(proc);
    let err = '', exited = false;
    proc.stderr.on('data', (c) => { err += c; });
    proc.on('exit', () => { exited = true; });
    const api = `http://${HOST}:${port}`;
    const ready = await until('Prometheus ready', 30000, async () => {
      if (exited) return 'exited';
      return (await get(`${api}/-/ready`)).status === 200 ? 'ready' : null;
    });
    if (ready === 'ready') return { proc, api };
    letGo(proc);
    if (!/address already in use/.test(err)) fail(`Prometheus exited:\n${err}`);
    console.log(`note port ${port} was taken before Prometheus could listen: another`);
  }
  fail('Prometheus found no free port in 3 tries');
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
  for (const gauge of ['lagscope_fps', 'lagscope_cpu_usage_ratio', 'lagscope_resident_memory_bytes']) {
    const g = await query(prom.api, gauge);
    if (!g || g.length !== 1) fail(`${gauge}: ${JSON.stringify(g)}`);
  }
  const meta = JSON.parse((await get(`${prom.api}/api/v1/metadata?metric=lagscope`)).body).data;
  if (!meta.lagscope || meta.lagscope[0].type !== 'info') fail(`Prometheus did not read OpenMetrics: ${JSON.stringify(meta)}`);
  console.log(`ok   Prometheus: target up, lagscope_info{pid="${demo.pid}"}, median hang ${median.toFixed(3)} s, frame times, gauges; scraped as OpenMetrics (type info)`);
}

async function main() {
  const reportDir = tempDir('lagscope-prom-reports-');
  const demo = await startDemo(reportDir);
  await checkRoute(demo);
  const prom = await startPrometheus(demo, reportDir);
  await checkScraped(demo, prom);
  prom.proc.kill('SIGTERM');
  demo.proc.kill('SIGTERM');
  const code = await new Promise((r) => demo.proc.once('exit', r));
  letGo(demo.proc);
  if (code !== 0) fail(`the demo exited ${code}`);
  console.log('prometheus: every check passed');
  process.exit(0);
}

main().catch((e) => fail(e.stack));
