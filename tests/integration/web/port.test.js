#!/usr/bin/env node
// The viewer's port (docs/guide.md, "The viewer"): when the configured port is taken, the next
// nine are tried, the log names the port taken and why, and the URL printed is the one it got;
// with all ten taken, the log says so and the app runs on without a viewer.
//
// No fixed port: a base port P is chosen at run time below the OS's ephemeral range (which
// starts at 32768 on Linux: no connect() is ever given one of these), and this test itself
// listens on P..P+9 before it lets the demo have any of them.
//
// Usage: node port.test.js --demo PATH/lagscope-demo
// Exit: 0 passed, 1 failed, 2 bad usage.
'use strict';

const net = require('net');
const { spawn } = require('child_process');

const HOST = '127.0.0.1';
const TRIES = 10;
const demoPath = process.argv[2] === '--demo' ? process.argv[3] : null;
if (!demoPath) {
  console.error('usage: node port.test.js --demo PATH/lagscope-demo');
  process.exit(2);
}
const { fail, tempDir, track, letGo } = require('./script.js').testScript(60000);

function listen(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen({ port, host: HOST, exclusive: true }, () => resolve(server));
  });
}

const close = (server) => new Promise((resolve) => server.close(resolve));

// TRIES consecutive ports, all held by this process; another base is tried when one is taken.
async function holdRange() {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + Math.floor(Math.random() * (32768 - 20000 - TRIES));
    const held = [];
    for (let i = 0; i < TRIES; i++) {
      const s = await listen(base + i);
      if (!s) break;
      held.push(s);
    }
    if (held.length === TRIES) return { base, held };
    for (const s of held) await close(s);
  }
  fail('found no 10 free consecutive ports in 20000-32767');
}

// Runs the demo for a moment; resolves with its JSON lines and stderr once it has said whether
// its viewer started (a server_started line, or the error line on stderr), then stops it.
function runDemo(base) {
  const dir = tempDir('lagscope-port-');
  const proc = spawn(demoPath, ['--headless', '--events', 'jsonl', '--port', String(base), '--bind', HOST,
    '--report-dir', dir, '--duration', '20'], { stdio: ['ignore', 'pipe', 'pipe'] });
  track(proc);
  let out = '', err = '';
  return new Promise((resolve) => {
    const settle = () => {
      const started = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
        .find((l) => l.type === 'server_started');
      const failed = /viewer not started[^\n]*\n/.test(err);
      const running = /demo_started/.test(out);
      if ((started || failed) && running) {
        proc.kill('SIGINT');
        proc.once('exit', (code) => {
          letGo(proc);
          resolve({ started, err, code });
        });
      }
    };
    proc.stdout.on('data', (c) => { out += c; settle(); });
    proc.stderr.on('data', (c) => { err += c; settle(); });
  });
}

async function main() {
  // 1. P, P+1 and P+2 taken: the demo gets P+3 and says why.
  let { base, held } = await holdRange();
  for (const s of held.slice(3)) await close(s);
  let r = await runDemo(base);
  if (!r.started) fail(`three ports taken: no viewer; stderr:\n${r.err}`);
  if (r.started.port !== base + 3) fail(`three ports taken (${base}..${base + 2}): got port ${r.started.port}`);
  if (r.started.url !== undefined && !r.started.url.includes(`:${base + 3}/`))
    fail(`the URL ${r.started.url} is not on port ${base + 3}`);
  if (!r.err.includes(`port ${base} on ${HOST} is in use (EADDRINUSE): using port ${base + 3}`))
    fail(`the log does not name the port taken and the reason:\n${r.err}`);
  if (!r.err.includes(`viewer: http://${HOST}:${base + 3}/?token=`))
    fail(`the log does not print the URL it got:\n${r.err}`);
  if (r.code !== 0) fail(`the demo exited ${r.code}`);
  console.log(`ok   ports ${base}..${base + 2} taken: the viewer is on ${base + 3}, and the log says why`);
  for (const s of held.slice(0, 3)) await close(s);

  // 2. All ten taken: no viewer, the log names the ports and the reason, the app runs on.
  ({ base, held } = await holdRange());
  r = await runDemo(base);
  if (r.started) fail(`all ten ports taken, yet a viewer on ${r.started.port}`);
  const want = `viewer not started: ports ${base} to ${base + TRIES - 1} on ${HOST} are all in use (EADDRINUSE)`;
  if (!r.err.includes(want)) fail(`the log does not say "${want}":\n${r.err}`);
  if (r.code !== 0) fail(`the demo exited ${r.code} (it must run on without a viewer)`);
  console.log(`ok   ports ${base}..${base + TRIES - 1} taken: "${want}"`);
  for (const s of held) await close(s);
  console.log('port: every check passed');
}

main().catch((e) => fail(e.stack || e));
