#!/usr/bin/env node
// lagscope-run --pushgateway (web/push.c; docs/viewer-api.md, "Pushing to a Pushgateway"), with
// a real Pushgateway (Debian's prometheus-pushgateway) and a real Prometheus scraping it:
//   1. glib_pings (a GLib program that knows nothing of lagscope, one 500 ms stall) run under
//      lagscope-run --pushgateway: at its exit the gateway holds its final metrics, grouped by
//      job "glib_pings" and instance "<host>:<pid>" (the default), with the one hang lagscope-run
//      also counted; again with --push-instance "ci/run 1" (a '/' and a space: the gateway's
//      base64 form of a label in the path);
//   2. Prometheus, scraping the gateway (honor_labels), answers the pushed hang count;
//   3. a gateway that accepts and never answers, and a port that refuses: one log line each,
//      the program's exit status (7) unchanged, the exit no later than the 2 s bound (compared
//      with the same run without a push);
//   4. an https URL is refused at the start, exit 2, before the program runs.
//
// Neither server can listen on port 0: a free port is found by listening on 0 and closing, and
// the start is tried again (3 times) when another process took it meanwhile.
//
// Usage: node pushgateway.test.js --run PATH/lagscope-run --subject PATH/glib_pings
//          --pushgateway PATH --prometheus PATH
// Exit: 0 passed, 1 failed, 2 bad usage.
'use strict';

const net = require('net');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const HOST = '127.0.0.1';
const BOUND_MS = 2000; // the push's bound (docs)
const arg = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : null; };
const runPath = arg('--run'), subjectPath = arg('--subject');
const gatewayPath = arg('--pushgateway'), prometheusPath = arg('--prometheus');
if (!runPath || !subjectPath || !gatewayPath || !prometheusPath) {
  console.error('usage: node pushgateway.test.js --run PATH --subject PATH --pushgateway PATH --prometheus PATH');
  process.exit(2);
}
const { fail, tempDir, track, letGo, until, get, freePort, startServer } =
  require('./script.js').testScript(150000);

// lagscope-run with args, then the program; its exit status, stderr and how long it took.
function run(args, program) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const proc = spawn(runPath, ['--no-server', '--no-hud', ...args, '--', ...program],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    track(proc);
    let err = '';
    proc.stderr.on('data', (c) => { err += c; });
    proc.on('exit', (code, signal) => {
      letGo(proc);
      resolve({ code: signal ? `signal ${signal}` : code, stderr: err, ms: Date.now() - t0 });
    });
  });
}

const subject = [subjectPath, '--idle-ms', '300', '--stall-ms', '500'];

// The gateway's /metrics samples of one family for a group: [{labels, value}].
function samples(text, family) {
  const out = [];
  for (const line of text.split('\n')) {
    const m = line.match(/^([a-z_]+)\{(.*)\} (\S+)$/);
    if (!m || m[1] !== family) continue;
    const labels = {};
    for (const l of m[2].matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

async function checkPushed(gw, instance) {
  const args = ['--pushgateway', `${gw.api}/`].concat(instance ? ['--push-instance', instance] : []);
  const r = await run(args, subject);
  if (r.code !== 0) fail(`lagscope-run ${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
  if (!/glib_pings: 1 hang/.test(r.stderr)) fail(`lagscope-run did not see the one hang:\n${r.stderr}`);
  const said = r.stderr.match(/pushgateway: the final metrics pushed to .* \(job "glib_pings", instance "([^"]+)"\)/);
  if (!said) fail(`no "pushed" line:\n${r.stderr}`);
  const want = instance || said[1];
  if (!instance && !/^[^:]+:\d+$/.test(want)) fail(`the default instance "${want}" is not host:pid`);
  const text = (await get(`${gw.api}/metrics`)).body;
  const mine = (s) => s.labels.job === 'glib_pings' && s.labels.instance === want;
  const hangs = samples(text, 'lagscope_hangs_total').filter(mine);
  const total = hangs.reduce((a, s) => a + s.value, 0);
  const count = samples(text, 'lagscope_hang_duration_seconds_count').filter(mine);
  if (hangs.length < 2 || total !== 1 || count.length !== 1 || count[0].value !== 1)
    fail(`the gateway's /metrics for job glib_pings, instance ${want}: hangs ${JSON.stringify(hangs)}, count ${JSON.stringify(count)}\n${text}`);
  const api = JSON.parse((await get(`${gw.api}/api/v1/metrics`)).body);
  const group = api.data.find((g) => g.labels.job === 'glib_pings' && g.labels.instance === want);
  if (!group || group.last_push_successful !== true) fail(`/api/v1/metrics has no successful push for ${want}: ${JSON.stringify(api.data.map((g) => g.labels))}`);
  console.log(`ok   pushed at exit: job="glib_pings", instance="${want}", lagscope_hangs_total sums to 1 (${r.ms} ms run)`);
  return want;
}

async function checkScraped(gw, instance) {
  const dir = tempDir('lagscope-push-prom-');
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), [
    'global:', '  scrape_interval: 1s', '  scrape_timeout: 1s',
    'scrape_configs:', '  - job_name: pushgateway', '    honor_labels: true',
    '    static_configs:', `      - targets: ['${new URL(gw.api).host}']`, ''].join('\n'));
  const prom = await startServer('Prometheus', prometheusPath, (attempt) => [
    `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, `data${attempt}`)}`], HOST);
  const q = `sum(lagscope_hangs_total{job="glib_pings",instance="${instance}"})`;
  const r = await until(`${q} in Prometheus`, 30000, async () => {
    const a = await get(`${prom.api}/api/v1/query?query=${encodeURIComponent(q)}`);
    if (a.status !== 200) return null;
    const j = JSON.parse(a.body);
    return j.status === 'success' && j.data.result.length === 1 ? j.data.result : null;
  });
  if (Number(r[0].value[1]) !== 1) fail(`${q} = ${r[0].value[1]}, not 1`);
  console.log(`ok   Prometheus scraping the gateway: ${q} = 1`);
  prom.proc.kill('SIGTERM');
}

// A gateway that never answers (accepts, reads, says nothing), and a port that refuses.
async function checkUnreachable() {
  const silent = net.createServer((s) => { s.on('data', () => {}); s.on('error', () => {}); });
  await new Promise((r) => silent.listen(0, HOST, r));
  const refused = await freePort(HOST);
  const program = ['perl', '-e', 'exit 7']; // exit(), so its atexit handlers run (a shell's exit does not)
  const plain = await run([], program);
  if (plain.code !== 7) fail(`without a push: exit ${plain.code}, not 7\n${plain.stderr}`);
  for (const [what, url] of [['never answers', `http://${HOST}:${silent.address().port}`],
    ['refuses', `http://${HOST}:${refused}`]]) {
    const r = await run(['--pushgateway', url], program);
    const lines = r.stderr.split('\n').filter((l) => l.includes('pushgateway'));
    if (r.code !== 7) fail(`a gateway that ${what}: exit ${r.code}, not the program's 7\n${r.stderr}`);
    if (lines.length !== 1 || !/the metrics were not pushed to .*: \S/.test(lines[0]))
      fail(`a gateway that ${what}: not one clear line:\n${r.stderr}`);
    const late = r.ms - plain.ms;
    if (late > BOUND_MS + 1000) fail(`a gateway that ${what}: the exit came ${late} ms late (bound ${BOUND_MS} ms)`);
    console.log(`ok   a gateway that ${what}: exit 7 kept, ${late} ms later than without a push; "${lines[0].trim()}"`);
  }
  silent.close();
  const https = await run(['--pushgateway', 'https://127.0.0.1:1'], ['sh', '-c', 'echo ran >&2']);
  if (https.code !== 2 || !/https is not supported/.test(https.stderr) || /ran/.test(https.stderr))
    fail(`--pushgateway https://: exit ${https.code}\n${https.stderr}`);
  console.log('ok   --pushgateway https://... refused at the start (exit 2), the program not run');
}

async function main() {
  const gw = await startServer('the Pushgateway', gatewayPath, () => [], HOST);
  await checkPushed(gw, null);
  const instance = await checkPushed(gw, 'ci/run 1');
  await checkScraped(gw, instance);
  await checkUnreachable();
  gw.proc.kill('SIGTERM');
  console.log('pushgateway: every check passed');
  process.exit(0);
}

main().catch((e) => fail(e.stack));
