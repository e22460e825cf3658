#!/usr/bin/env node
// The viewer's HTTP API (docs/viewer-api.md) end to end: lagscope-demo is started as a process
// and driven with a real HTTP client (Node's own http module, and raw `net` sockets where the
// test needs exact control of the bytes: oversized headers, a slowloris client, a stream client
// that never reads). Every route, every error code, the token rules, the limits.
//
// Usage: node api.test.js --demo PATH/lagscope-demo [--keep-going] [--only PHASE]
//   --keep-going  run every check and report every failure (default: stop at the first one)
//   --only PHASE  run one phase: routes, hitches, folder, limits, dos, slow, counts (default: all)
// Exit: 0 every check passed, 1 a check failed, 2 bad usage, 77 skipped (Node too old).
//
// Every wait is bounded and waits on a condition; every demo started is killed on every exit
// path, and its temporary report folder removed.
'use strict';

const http = require('http');
const net = require('net');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');

const SKIP = 77;
const HOST = '127.0.0.1';
const TOKEN_RE = /^[0-9a-f]{32}$/;
const TOTAL_TIMEOUT_MS = 240000; // ctest's TIMEOUT is larger: this one says which check hung

// ---- the run: options, progress, failure ------------------------------------------------------

const options = parseArgs(process.argv.slice(2));
const started = Date.now();
const demos = new Set();     // running demos, killed on any exit
const tempDirs = new Set();  // report folders, removed on any exit
const exits = [];            // how each demo ended, checked at the end
let failures = 0;

function parseArgs(argv) {
  const out = { demo: null, keepGoing: false, only: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--demo') out.demo = argv[++i];
    else if (argv[i] === '--keep-going') out.keepGoing = true;
    else if (argv[i] === '--only') out.only = argv[++i];
    else usage(`unknown argument ${argv[i]}`);
  }
  if (!out.demo) usage('--demo is required');
  try {
    fs.accessSync(out.demo, fs.constants.X_OK);
  } catch {
    usage(`${out.demo} is not an executable file`);
  }
  return out;
}

function usage(message) {
  console.error(`api.test.js: ${message}\nusage: node api.test.js --demo PATH [--keep-going] [--only PHASE]`);
  process.exit(2);
}

function log(line) {
  const t = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  console.log(`[${t}s] ${line}`);
}

// Kills what is still running and removes the temporary folders: synchronous, so that it also
// runs from process.on('exit').
function cleanup() {
  for (const demo of demos) demo.kill('SIGKILL');
  demos.clear();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

function finish(code) {
  cleanup();
  process.exit(code);
}

process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    log(`interrupted by ${sig}`);
    finish(1);
  });
}
process.on('uncaughtException', (e) => {
  log(`FAIL internal error: ${e.stack || e}`);
  finish(1);
});
process.on('unhandledRejection', (e) => {
  log(`FAIL internal error: ${(e && e.stack) || e}`);
  finish(1);
});
setTimeout(() => {
  log(`FAIL the whole test took over ${TOTAL_TIMEOUT_MS / 1000} s`);
  finish(1);
}, TOTAL_TIMEOUT_MS).unref();

// One check: one progress line. A failure ends the run unless --keep-going.
async function check(name, fn) {
  const t = Date.now();
  try {
    const note = await fn();
    log(`ok   ${name}${note ? ` (${note})` : ''} [${Date.now() - t} ms]`);
  } catch (e) {
    failures++;
    log(`FAIL ${name}\n       ${String(e.message || e).replace(/\n/g, '\n       ')}`);
    if (!options.keepGoing) {
      log('stopping at the first failure (--keep-going runs every check)');
      finish(1);
    }
  }
}

function fail(message) {
  throw new Error(message);
}

function expect(cond, message) {
  if (!cond) fail(message);
}

function equal(actual, wanted, what) {
  if (actual !== wanted)
    fail(`${what}: expected ${JSON.stringify(wanted)}, got ${JSON.stringify(actual)}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls fn (async; a truthy result ends the wait) every intervalMs for at most ms.
async function waitFor(what, ms, fn, intervalMs = 100) {
  const until = Date.now() + ms;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() >= until) fail(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

function tempDir(tag) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lagscope-api-${tag}-`));
  tempDirs.add(dir);
  return dir;
}

function removeDir(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

// ---- the demo as a process ---------------------------------------------------------------------

// lagscope-demo with its JSON lines on stdout read as they come (docs/guide.md, "The --events
// jsonl contract").
class Demo {
  constructor(reportDir, extraArgs) {
    this.reportDir = reportDir;
    this.lines = [];      // every JSON line, in order
    this.stderr = '';
    this.exit = null;     // {code, signal} once it has ended
    const args = ['--headless', '--events', 'jsonl', '--port', '0', '--bind', HOST,
      '--report-dir', reportDir, ...extraArgs];
    this.args = args;
    this.proc = spawn(options.demo, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    demos.add(this.proc);
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', (code, signal) => {
        demos.delete(this.proc);
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
    let partial = '';
    this.proc.stdout.on('data', (chunk) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop();
      for (const line of parts) if (line.trim()) this.lines.push(JSON.parse(line));
    });
    this.proc.stderr.on('data', (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
  }

  // Starts one and waits for its server_started line (the URL with the token, the port).
  static async start(reportDir, extraArgs = []) {
    const demo = new Demo(reportDir, extraArgs);
    const line = await demo.waitLine('server_started', 15000, (l) => l.type === 'server_started');
    const info = demo.lines.find((l) => l.type === 'demo_started');
    expect(info, 'no demo_started line before server_started');
    demo.pid = info.pid;
    demo.port = line.port;
    demo.url = line.url;
    demo.token = new URL(line.url).searchParams.get('token');
    return demo;
  }

  // The first line from index `from` on that pred accepts; waits at most ms.
  async waitLine(what, ms, pred, from = 0) {
    return waitFor(`the demo's ${what} line`, ms, async () => {
      if (this.exit) fail(`the demo exited (${JSON.stringify(this.exit)}) before its ${what} ` +
        `line; stderr:\n${this.stderr}`);
      return this.lines.slice(from).find(pred);
    }, 50);
  }

  // One stall on demand (SIGUSR2: demo_stall_busy → demo_busy_middle → demo_busy_spin), and its
  // hang_ended line with the report id.
  async stall() {
    const from = this.lines.length;
    process.kill(this.proc.pid, 'SIGUSR2');
    return this.waitLine('hang_ended', 15000, (l) => l.type === 'hang_ended', from);
  }

  // SIGINT, as a user would; SIGKILL if it does not end in 10 s. The exit is kept for the
  // final check (a demo that serves and stops must exit 0).
  async stop(label) {
    if (!this.exit) {
      this.proc.kill('SIGINT');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10000);
      await this.exited;
      clearTimeout(timer);
    }
    exits.push({ label, ...this.exit, stderr: this.stderr });
    return this.exit;
  }
}

// ---- HTTP: Node's client, and raw sockets -------------------------------------------------------

// One request on a connection of its own (agent: false, so "Connection: close": no kept-alive
// connection lingers and counts as a client of the server).
function request(port, { method = 'GET', path: p, headers = {}, body, timeout = 5000, localAddress }) {
  return new Promise((resolve, reject) => {
    const t = Date.now();
    const req = http.request({ host: HOST, port, method, path: p, headers, agent: false, localAddress }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const out = { status: res.statusCode, headers: res.headers, rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks).toString('utf8'), ms: Date.now() - t, what: `${method} ${p}` };
        try {
          expectSecurityHeaders(out);
        } catch (e) {
          return reject(e);
        }
        resolve(out);
      });
      res.on('error', reject);
    });
    req.setTimeout(timeout, () => req.destroy(new Error(`${method} ${p}: no answer in ${timeout} ms`)));
    req.on('error', (e) => reject(new Error(`${method} ${p}: ${e.message}`)));
    req.end(body);
  });
}

const bearer = (token) => ({ Authorization: `Bearer ${token}` });

// GET with the token as a bearer header, JSON expected.
async function getJson(demo, p, status = 200) {
  const res = await request(demo.port, { path: p, headers: bearer(demo.token) });
  equal(res.status, status, `${res.what}: status (body ${res.body.slice(0, 200)})`);
  expect(/^application\/json/.test(res.headers['content-type'] || ''),
    `${res.what}: Content-Type ${res.headers['content-type']}, not JSON`);
  return { res, json: parseJson(res) };
}

function parseJson(res) {
  try {
    return JSON.parse(res.body);
  } catch (e) {
    fail(`${res.what}: the body is not JSON (${e.message}): ${res.body.slice(0, 200)}`);
  }
}

const status = async (demo) => (await getJson(demo, '/api/v1/status')).json;

// Writes `text` on a new connection and collects everything until the server closes it, or
// until ms. Returns the raw bytes, whether the server closed, and how long it took.
function rawExchange(port, text, ms = 5000) {
  return new Promise((resolve) => {
    const t = Date.now();
    const chunks = [];
    const sock = net.connect(port, HOST, () => sock.write(text));
    const done = (closed, error) => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ raw: Buffer.concat(chunks).toString('latin1'), closed, error, ms: Date.now() - t });
    };
    const timer = setTimeout(() => done(false), ms);
    sock.on('data', (c) => chunks.push(c));
    sock.on('close', () => done(true));
    sock.on('error', (e) => done(true, e.code || e.message));
  });
}

// The first response in raw bytes: status, headers (names lower-cased), what follows them.
function parseRaw(raw) {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!m) return null;
  const headers = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(m[1]), statusLine, headers, rest: raw.slice(end + 4) };
}

// ---- what every answer carries ---------------------------------------------------------------------

// docs/viewer-api.md "Headers on every answer"; no CORS ever.
function expectSecurityHeaders(res) {
  const h = res.headers;
  const what = `${res.what} (${res.status})`;
  const csp = h['content-security-policy'];
  expect(csp, `${what}: no Content-Security-Policy header`);
  expect(!csp.includes('unsafe-inline'), `${what}: CSP allows 'unsafe-inline': ${csp}`);
  expect(/(^|;)\s*script-src 'self'\s*(;|$)/.test(csp), `${what}: CSP lacks script-src 'self': ${csp}`);
  expect(/(^|;)\s*default-src 'none'/.test(csp), `${what}: CSP lacks default-src 'none': ${csp}`);
  expect(/frame-ancestors 'none'/.test(csp), `${what}: CSP lacks frame-ancestors 'none': ${csp}`);
  equal(h['x-content-type-options'], 'nosniff', `${what}: X-Content-Type-Options`);
  equal(h['x-frame-options'], 'DENY', `${what}: X-Frame-Options`);
  equal(h['referrer-policy'], 'no-referrer', `${what}: Referrer-Policy`);
  equal(h['cache-control'], 'no-store', `${what}: Cache-Control`);
  const cors = Object.keys(h).filter((name) => name.startsWith('access-control-'));
  expect(cors.length === 0, `${what}: CORS headers present: ${cors.join(', ')}`);
}

// The status answer that docs/viewer-api.md shows (its JSON block under "GET /api/v1/status").
function documentedStatus() {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'viewer-api.md'), 'utf8');
  const block = doc.split('### `GET /api/v1/status`')[1].split('```json')[1].split('```')[0];
  return JSON.parse(block);
}

// docs/viewer-api.md "Errors": JSON {"error": kind, "message": sentence}.
function expectError(res, statusWanted, kind) {
  equal(res.status, statusWanted, `${res.what}: status (body ${res.body.slice(0, 200)})`);
  expect(/^application\/json/.test(res.headers['content-type'] || ''),
    `${res.what}: error Content-Type ${res.headers['content-type']}, not JSON`);
  const json = parseJson(res);
  equal(json.error, kind, `${res.what}: "error"`);
  expect(typeof json.message === 'string' && json.message.length > 0,
    `${res.what}: no "message" sentence in ${res.body}`);
  return json;
}

// The cookie of docs/viewer-api.md "Access", with the given token.
function expectTokenCookie(res, token) {
  const cookie = res.headers['set-cookie'];
  expect(cookie && cookie.length === 1, `${res.what}: expected one Set-Cookie, got ${JSON.stringify(cookie)}`);
  const parts = cookie[0].split(';').map((s) => s.trim());
  equal(parts[0], `lagscope_token=${token}`, `${res.what}: Set-Cookie value`);
  const attrs = parts.slice(1).map((s) => s.toLowerCase());
  for (const a of ['httponly', 'samesite=strict', 'path=/'])
    expect(attrs.includes(a), `${res.what}: Set-Cookie lacks ${a}: ${cookie[0]}`);
}

// ---- the live stream ---------------------------------------------------------------------------------

// A Server-Sent Events client on a raw socket: the status line and headers, then each event
// ({event, id, data}) as it comes. paused: never reads the socket at all (a stuck viewer).
class Stream {
  constructor(port, headers, p = '/api/v1/stream') {
    this.events = [];
    this.buffer = '';
    this.head = null;
    this.closed = false;
    this.bytes = 0;
    const lines = Object.entries({ Host: `${HOST}:${port}`, Accept: 'text/event-stream', ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`).join('');
    this.sock = net.connect(port, HOST, () => this.sock.write(`GET ${p} HTTP/1.1\r\n${lines}\r\n`));
    this.sock.on('data', (c) => this.take(c));
    this.sock.on('close', () => { this.closed = true; });
    this.sock.on('error', () => { this.closed = true; });
  }

  take(chunk) {
    this.bytes += chunk.length;
    this.lastData = Date.now();
    this.buffer += chunk.toString('utf8');
    if (!this.head) {
      const head = parseRaw(this.buffer);
      if (!head) return;
      this.head = head;
      this.buffer = head.rest;
    }
    if (this.head.status !== 200) return; // an error: its JSON body stays in buffer
    let end;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      this.parseEvent(block);
    }
  }

  parseEvent(block) {
    const ev = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue; // a comment (keep-alive)
      const i = line.indexOf(':');
      const field = line.slice(0, i);
      const value = line.slice(i + 1).replace(/^ /, '');
      if (field === 'data') ev.data = ev.data === undefined ? value : `${ev.data}\n${value}`;
      else if (field === 'event' || field === 'id') ev[field] = value;
    }
    if (ev.event === undefined && ev.data === undefined) return; // "retry:" alone
    try {
      ev.json = JSON.parse(ev.data);
    } catch {
      ev.json = null;
    }
    this.events.push(ev);
  }

  async opened(ms = 5000) {
    await waitFor('the stream\'s status line and headers', ms, async () => this.head || this.closed);
    expect(this.head, 'the stream was closed before any answer');
    this.head.what = 'GET /api/v1/stream';
    return this.head;
  }

  async waitEvent(what, ms, pred, from = 0) {
    try {
      return await waitFor(`${what} on the stream`, ms, async () => {
        const i = this.events.slice(from).findIndex(pred);
        if (i >= 0) return { index: from + i, ev: this.events[from + i] };
        if (this.closed) fail(`the stream closed before ${what}`);
        return null;
      }, 50);
    } catch (e) {
      fail(`${e.message}; the stream held from event ${from}: ${this.summary(from)}`);
    }
  }

  // The events from index `from` on, as "type#id(hang N)", for a failure's message.
  summary(from = 0) {
    return this.events.slice(from).map((e) => {
      const hang = e.json && e.json.hang_id !== undefined ? `(hang ${e.json.hang_id})` : '';
      return `${e.event}#${e.id}${hang}`;
    }).join(' ') || 'nothing';
  }

  close() {
    this.sock.destroy();
  }
}

// ---- small helpers ------------------------------------------------------------------------------------

// Is there a frame (or call-tree node) of that function anywhere in a JSON value?
function hasFunction(value, name) {
  if (Array.isArray(value)) return value.some((v) => hasFunction(v, name));
  if (value && typeof value === 'object') {
    if (value.function === name) return true;
    return Object.values(value).some((v) => hasFunction(v, name));
  }
  return false;
}

// A token of the right form but not the demo's: each hex digit shifted by one.
function wrongToken(token) {
  return token.replace(/[0-9a-f]/g, (c) => ((parseInt(c, 16) + 1) % 16).toString(16));
}

// ---- phase A: one demo, every route, the token, every error ---------------------------------------------

async function phaseRoutes() {
  const dir = tempDir('routes');
  let demo;
  await check('demo starts and prints its viewer URL with a 128-bit token', async () => {
    demo = await Demo.start(dir);
    expect(TOKEN_RE.test(demo.token), `token ${demo.token} is not 32 lowercase hex digits`);
    equal(demo.url, `http://${HOST}:${demo.port}/?token=${demo.token}`, 'viewer URL');
    return `port ${demo.port}, pid ${demo.pid}`;
  });
  if (!demo) return null;

  // Hangs first: the later checks (routes without a token, paging, exports) need reports.
  const stream = new Stream(demo.port, bearer(demo.token));
  await check('GET /api/v1/stream: text/event-stream, security headers, hello first', async () => {
    const head = await stream.opened();
    equal(head.status, 200, 'stream status');
    expect(/^text\/event-stream/.test(head.headers['content-type']),
      `stream Content-Type ${head.headers['content-type']}`);
    expectSecurityHeaders(head);
    const { index, ev } = await stream.waitEvent('hello', 3000, () => true);
    equal(index, 0, 'index of the first event');
    equal(ev.event, 'hello', 'first event type');
    equal(ev.json && ev.json.pid, demo.pid, 'hello pid');
    expect(Number.isInteger(ev.json.launch_wall_ms), 'hello without launch_wall_ms');
    await stream.waitEvent('a metrics event', 3000, (e) => e.event === 'metrics');
  });

  const hangs = []; // hang_ended lines of the demo, oldest first
  await check('three stalls (SIGUSR2) give three hang_ended with a report id', async () => {
    for (let i = 0; i < 3; i++) hangs.push(await demo.stall());
    for (const h of hangs) expect(h.report_id, `hang_ended without report_id: ${JSON.stringify(h).slice(0, 200)}`);
    return hangs.map((h) => h.report_id).join(', ');
  });
  const ids = hangs.map((h) => h.report_id);

  await check('stream: hang_began, hang_sample (with a stack), hang_ended in order', async () => {
    const hangId = hangs[0] && hangs[0].hang_id;
    const forHang = (type) => (e) => e.event === type && e.json && e.json.hang_id === hangId;
    const began = await stream.waitEvent('hang_began', 5000, forHang('hang_began'));
    const sample = await stream.waitEvent('hang_sample', 5000, forHang('hang_sample'), began.index);
    const ended = await stream.waitEvent('hang_ended', 5000, forHang('hang_ended'), sample.index);
    expect(Array.isArray(sample.ev.json.stack) && sample.ev.json.stack.length > 0,
      `hang_sample without a stack: ${sample.ev.data.slice(0, 200)}`);
    equal(ended.ev.json.report_id, ids[0], 'hang_ended report_id on the stream');
    const seqs = stream.events.filter((e) => e.id !== undefined).map((e) => Number(e.id));
    expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]), `stream ids not increasing: ${seqs.join(',')}`);
  });
  stream.close();

  await tokenChecks(demo, ids);
  await routeChecks(demo, ids);
  await errorChecks(demo, ids);
  await requestChecks(demo);
  await demo.stop('routes');
  return { dir, token: demo.token, ids };
}

async function tokenChecks(demo, ids) {
  const T = demo.token;
  // Every route, those that do not exist included: without the token, one and the same 401.
  const routes = [['GET', '/'], ['GET', '/main.js'], ['GET', '/viewer.css'], ['GET', '/favicon.svg'],
    ['GET', '/api/v1/status'], ['GET', '/api/v1/metrics'], ['GET', '/api/v1/hangs'],
    ['GET', `/api/v1/hangs/${ids[0]}`], ['GET', `/api/v1/hangs/${ids[0]}/speedscope`],
    ['GET', `/api/v1/hangs/${ids[0]}/trace`], ['POST', '/api/v1/capture'], ['GET', '/api/v1/stream'],
    ['GET', '/api/v1/hitches'],
    ['GET', '/nope'], ['GET', '/api/v1/nope'], ['GET', '/api/v1/hangs/doesnotexist'],
    ['GET', '/api/v1/hangs?limit=abc'], ['POST', '/api/v1/status'], ['DELETE', '/'],
    ['GET', '/index.html'], ['GET', '/etc/passwd']];
  await check(`no token: 401 {"error":"unauthorized"} and nothing else on ${routes.length} routes`, async () => {
    let first = null;
    for (const [method, p] of routes) {
      const res = await request(demo.port, { method, path: p });
      const json = expectError(res, 401, 'unauthorized');
      equal(Object.keys(json).sort().join(','), 'error,message', `${res.what}: 401 body keys`);
      expect(!res.headers['set-cookie'], `${res.what}: a 401 sets a cookie`);
      expect(!res.headers.allow && !res.headers.location, `${res.what}: a 401 says Allow/Location`);
      first = first || res.body;
      equal(res.body, first, `${res.what}: 401 body differs from other routes' (leaks what exists)`);
    }
  });

  const wrong = [['right length, wrong value', wrongToken(T)], ['one digit short', T.slice(0, -1)],
    ['one digit long', `${T}0`], ['upper case', T.toUpperCase()], ['empty', '']];
  await check('a wrong token by query, bearer or cookie: 401', async () => {
    for (const [why, w] of wrong) {
      const tries = [
        { path: `/api/v1/status?token=${w}` },
        { path: '/api/v1/status', headers: bearer(w) },
        { path: '/api/v1/status', headers: { Cookie: `lagscope_token=${w}` } },
        { path: `/?token=${w}` },
      ];
      for (const t of tries) {
        const res = await request(demo.port, t);
        res.what += ` [${why}${t.headers ? ` ${Object.keys(t.headers)[0]}` : ''}]`;
        expectError(res, 401, 'unauthorized');
      }
    }
  });

  await check('the token by ?token= on an API route: 200', async () => {
    const res = await request(demo.port, { path: `/api/v1/status?token=${T}` });
    equal(res.status, 200, `${res.what}: status`);
    equal(parseJson(res).app.pid, demo.pid, 'status app.pid');
  });
  await check('the token by Authorization: Bearer: 200', async () => {
    const { json } = await getJson(demo, '/api/v1/hangs');
    expect(Array.isArray(json.hangs), 'no hangs array');
  });

  let cookie;
  await check('GET /?token=T: 303 to "/" with the HttpOnly SameSite=Strict cookie', async () => {
    const res = await request(demo.port, { path: `/?token=${T}` });
    equal(res.status, 303, `${res.what}: status`);
    equal(res.headers.location, '/', `${res.what}: Location`);
    expectTokenCookie(res, T);
    cookie = res.headers['set-cookie'][0].split(';')[0];
  });
  await check('the cookie alone opens the page and the API', async () => {
    const page = await request(demo.port, { path: '/', headers: { Cookie: cookie } });
    equal(page.status, 200, `${page.what} with the cookie: status`);
    expect(/^text\/html/.test(page.headers['content-type']), `page Content-Type ${page.headers['content-type']}`);
    const api = await request(demo.port, { path: '/api/v1/status',
      headers: { Cookie: `other=1; ${cookie}; more=2` } });
    equal(api.status, 200, `${api.what} with the cookie among others: status`);
  });

  await check('no CORS: OPTIONS preflight and Origin get no Access-Control-* header', async () => {
    const origin = { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization' };
    for (const p of ['/api/v1/capture', '/api/v1/status', '/']) {
      const pre = await request(demo.port, { method: 'OPTIONS', path: p, headers: origin });
      expectError(pre, 401, 'unauthorized'); // security headers and no CORS: checked by request()
      const auth = await request(demo.port, { method: 'OPTIONS', path: p, headers: { ...origin, ...bearer(T) } });
      expectError(auth, 405, 'method_not_allowed');
    }
    const get = await request(demo.port, { path: '/api/v1/status',
      headers: { Origin: 'http://evil.example', ...bearer(T) } });
    equal(get.status, 200, `${get.what} with Origin: status`);
  });
}

async function routeChecks(demo, ids) {
  const T = demo.token;
  const assets = [['/', /^text\/html/, /<html|<!doctype html/i], ['/main.js', /^(text|application)\/javascript/, /./],
    ['/viewer.css', /^text\/css/, /./], ['/favicon.svg', /^image\/svg\+xml/, /<svg/]];
  const sizes = {};
  await check('GET /, /main.js, /viewer.css, /favicon.svg: 200 with their content types', async () => {
    for (const [p, type, content] of assets) {
      const res = await request(demo.port, { path: p, headers: bearer(T) });
      equal(res.status, 200, `${res.what}: status`);
      expect(type.test(res.headers['content-type'] || ''), `${res.what}: Content-Type ${res.headers['content-type']}`);
      expect(content.test(res.body), `${res.what}: unexpected body ${res.body.slice(0, 100)}`);
      equal(Number(res.headers['content-length']), Buffer.byteLength(res.body), `${res.what}: Content-Length`);
      sizes[p] = Buffer.byteLength(res.body);
    }
  });

  // HEAD by hand: Node's client would hide a body sent after a HEAD answer.
  await check('HEAD: the GET answer\'s headers and no body', async () => {
    for (const p of ['/', '/main.js', '/api/v1/status', '/api/v1/hangs', `/api/v1/hangs/${ids[0]}`]) {
      const ex = await rawExchange(demo.port, `HEAD ${p} HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${T}\r\n` +
        'Connection: close\r\n\r\n');
      const head = parseRaw(ex.raw);
      expect(head, `HEAD ${p}: no HTTP answer (${JSON.stringify(ex.raw.slice(0, 100))})`);
      head.what = `HEAD ${p}`;
      equal(head.status, 200, `HEAD ${p}: status`);
      expectSecurityHeaders(head);
      expect(Number(head.headers['content-length']) > 0, `HEAD ${p}: Content-Length ${head.headers['content-length']}`);
      if (sizes[p] !== undefined) equal(Number(head.headers['content-length']), sizes[p], `HEAD ${p}: Content-Length`);
      equal(head.rest.length, 0, `HEAD ${p}: bytes of body after the headers`);
    }
  });

  await check('GET /api/v1/status: app.pid, config.server_port, the documented fields', async () => {
    const s = await status(demo);
    equal(s.app.pid, demo.pid, 'app.pid');
    equal(s.app.name, 'lagscope-demo', 'app.name');
    equal(s.config.server_port, demo.port, 'config.server_port');
    equal(s.config.server_bind, HOST, 'config.server_bind');
    equal(s.config.report_dir, demo.reportDir, 'config.report_dir');
    equal(Object.keys(s.config).sort().join(' '), Object.keys(documentedStatus().config).sort().join(' '),
      'config\'s fields, as docs/viewer-api.md shows them');
    for (const k of ['lagscope_version', 'launch_wall_ms', 'now_wall_ms', 'uptime_ms', 'hangs', 'hang_in_progress'])
      expect(k in s, `status lacks ${k}`);
    for (const k of ['requests', 'clients', 'clients_rejected', 'stream_clients', 'stream_clients_dropped',
      'stream_events_sent', 'stream_events_dropped'])
      expect(Number.isInteger(s.server[k]), `status lacks server.${k}`);
    equal(s.hangs, 3, 'hangs (three stalls so far)');
    equal(s.hang_in_progress, false, 'hang_in_progress');
  });

  // Bound to 127.0.0.1, the viewer is reached there only: eth0's address is no URL a browser
  // can use (issue 31, item 10).
  await check('GET /api/v1/status bound to 127.0.0.1: addresses is that address alone', async () => {
    const s = await status(demo);
    equal(JSON.stringify(s.addresses), JSON.stringify([{ interface: 'lo', address: HOST }]), 'addresses');
  });

  await check('GET /api/v1/metrics: ticks with wall_ms and fps; only the newest with frame times', async () => {
    const m = await waitFor('two metrics ticks', 5000, async () => {
      const { json } = await getJson(demo, '/api/v1/metrics');
      return json.metrics.length > 1 && json;
    });
    const newest = m.metrics[m.metrics.length - 1], older = m.metrics[0];
    expect(Array.isArray(newest.recent_frame_ms) && newest.frame_histogram, 'the newest tick is not whole');
    expect(!('recent_frame_ms' in older) && !('busiest_threads' in older), 'an older tick is whole');
    equal(m.interval_ms, 500, 'interval_ms');
    const wall = m.metrics.map((t) => t.wall_ms);
    expect(wall.every((w, i) => Number.isFinite(w) && (i === 0 || w >= wall[i - 1])), 'ticks not oldest first');
    expect(m.metrics.every((t) => 'fps' in t), 'a tick without fps');
    return `${m.metrics.length} ticks`;
  });

  await check('GET /api/v1/hangs: the three reports, newest first', async () => {
    const { json } = await getJson(demo, '/api/v1/hangs');
    equal(json.total, 3, 'total');
    equal(json.offset, 0, 'offset');
    equal(json.limit, 20, 'limit (default)');
    equal(json.hangs.map((h) => h.id).join(' '), [...ids].reverse().join(' '), 'ids, newest first');
    const starts = json.hangs.map((h) => h.start_wall_ms);
    expect(starts.every((s, i) => i === 0 || s <= starts[i - 1]), `start_wall_ms not newest first: ${starts}`);
    for (const h of json.hangs) {
      equal(h.state, 'ended', `${h.id}: state`);
      equal(h.pid, demo.pid, `${h.id}: pid`);
      expect(h.samples > 0 && h.duration_ms > 250, `${h.id}: samples ${h.samples}, duration ${h.duration_ms}`);
      expect(h.function === null || typeof h.function === 'string', `${h.id}: function ${h.function}`);
    }
    // The label is the report's own, word for word: one rule, computed once.
    const report = (await getJson(demo, `/api/v1/hangs/${json.hangs[0].id}`)).json;
    equal(json.hangs[0].label, report.cause.label, 'the newest summary\'s label is its report\'s cause.label');
    expect(/^cpu · demo_/.test(json.hangs[0].label), `label ${json.hangs[0].label}`);
    return `function of the newest: ${json.hangs[0].function}, label ${json.hangs[0].label}`;
  });

  await check('GET /api/v1/hangs?limit=1&offset=1: the second newest only', async () => {
    const { json } = await getJson(demo, '/api/v1/hangs?limit=1&offset=1');
    equal(json.total, 3, 'total');
    equal(json.limit, 1, 'limit');
    equal(json.offset, 1, 'offset');
    equal(json.hangs.length, 1, 'hangs on the page');
    equal(json.hangs[0].id, ids[1], 'id of the second newest');
    const past = await getJson(demo, '/api/v1/hangs?offset=3&limit=100');
    equal(past.json.hangs.length, 0, 'hangs past the end');
  });

  await check('GET /api/v1/hangs/{id}: the stored report, with demo_busy_spin', async () => {
    const { json } = await getJson(demo, `/api/v1/hangs/${ids[2]}`);
    expect(json.call_tree && Array.isArray(json.heaviest_stack), 'no call_tree / heaviest_stack');
    expect(hasFunction(json.call_tree, 'demo_busy_spin') || hasFunction(json.heaviest_stack, 'demo_busy_spin'),
      'demo_busy_spin in neither call_tree nor heaviest_stack');
    expect(hasFunction(json.heaviest_stack, 'demo_busy_spin'), 'demo_busy_spin not in heaviest_stack');
  });

  await check('GET /api/v1/hangs/{id}/speedscope and /trace: JSON attachments', async () => {
    for (const [suffix, key] of [['speedscope', 'profiles'], ['trace', 'traceEvents']]) {
      const { res, json } = await getJson(demo, `/api/v1/hangs/${ids[0]}/${suffix}`);
      const cd = res.headers['content-disposition'] || '';
      expect(/^attachment;\s*filename="[^"/\\]+\.json"$/.test(cd), `${res.what}: Content-Disposition ${cd}`);
      expect(cd.includes(ids[0]), `${res.what}: the file name lacks the id: ${cd}`);
      expect(Array.isArray(json[key]) && json[key].length > 0, `${res.what}: no ${key}`);
      expect(hasFunction(json, 'demo_busy_spin') || res.body.includes('demo_busy_spin'),
        `${res.what}: demo_busy_spin not in the export`);
    }
  });

  await check('POST /api/v1/capture: every thread, the main one with main(); again at once: 429', async () => {
    const res = await request(demo.port, { method: 'POST', path: '/api/v1/capture', headers: bearer(T) });
    equal(res.status, 200, `${res.what}: status (${res.body.slice(0, 200)})`);
    const c = parseJson(res);
    equal(c.thread_count, c.threads.length, 'thread_count');
    const mains = c.threads.filter((t) => t.is_main);
    equal(mains.length, 1, 'threads with is_main');
    equal(mains[0].tid, demo.pid, 'main thread tid');
    equal(c.main_thread_tid, demo.pid, 'main_thread_tid');
    expect(hasFunction(mains[0].stack, 'main'), 'the main thread\'s stack has no main()');
    // lagscope's own threads (civetweb's among them) are left out: the rest are the app's.
    const tids = c.threads.map((t) => t.tid);
    equal(new Set(tids).size, tids.length, 'distinct tids');
    const taskDir = `/proc/${demo.pid}/task`;
    if (fs.existsSync(taskDir)) {
      const tasks = new Set(fs.readdirSync(taskDir).map(Number));
      const strangers = tids.filter((t) => !tasks.has(t));
      expect(strangers.length === 0, `tids not of the demo: ${strangers.join(', ')}`);
      expect(tids.length < tasks.size, `all ${tasks.size} threads listed: lagscope's own were not left out`);
    }
    // Within a second of the first one's start: 429. If the first took most of that second (a
    // sanitizer build), two at once: one of them is within a second of the other.
    const post = () => request(demo.port, { method: 'POST', path: '/api/v1/capture', headers: bearer(T) });
    let again = await post();
    if (again.status === 200 && res.ms > 800) {
      const pair = await Promise.all([post(), post()]);
      again = pair.find((r) => r.status !== 200) || again;
    }
    const json = expectError(again, 429, 'rate_limited');
    expect(/^[1-9]\d*$/.test(again.headers['retry-after'] || ''), `429 Retry-After ${again.headers['retry-after']}`);
    expect(Number.isInteger(json.retry_after_ms) && json.retry_after_ms > 0 && json.retry_after_ms <= 1000,
      `429 retry_after_ms ${json.retry_after_ms}`);
    return `${c.thread_count} threads, retry after ${json.retry_after_ms} ms`;
  });
}

async function errorChecks(demo, ids) {
  const T = demo.token;
  const get = (p, extra = {}) => request(demo.port, { path: p, headers: bearer(T), ...extra });

  await check('404: unknown routes, unknown ids, ids not of the id\'s form, paths out of the folder', async () => {
    const paths = ['/nope', '/api/v1/nope', '/api/v1/status/', '/api/v1/hangs/', '/index.html',
      '/api/v1/hangs/doesnotexist', '/api/v1/hangs/doesnotexist/trace', `/api/v1/hangs/${ids[0]}/nope`,
      '/api/v1/hangs/..%2f..%2fetc', '/api/v1/hangs/..%2F..%2F..%2Fetc%2Fpasswd', '/api/v1/hangs/../../../etc/passwd',
      '/api/v1/hangs/bad!id', '/api/v1/hangs/.hidden', '/api/v1/hangs/a..b', '/api/v1/hangs/a%20b',
      '/api/v1/hangs/viewer-token', `/api/v1/hangs/${'a'.repeat(64)}`, '/etc/passwd', '/main.js/'];
    for (const p of paths) {
      const res = await get(p);
      expectError(res, 404, 'not_found');
      expect(!/root:|\[\s*\{|"threads"|[0-9a-f]{32}/.test(res.body), `${res.what}: the 404 body leaks: ${res.body}`);
    }
  });

  await check('400: malformed parameters', async () => {
    const paths = ['/api/v1/hangs?limit=abc', '/api/v1/hangs?limit=0', '/api/v1/hangs?limit=101',
      '/api/v1/hangs?offset=-1', '/api/v1/hangs?limit=', '/api/v1/hangs?limit=1.5', '/api/v1/hangs?foo=1',
      '/api/v1/hangs?limit=1&limit=2', '/api/v1/hangs?offset=1&offset=1', '/api/v1/hangs?limit=1&&offset=1',
      '/api/v1/status?foo=1', '/api/v1/metrics?limit=1'];
    for (const p of paths) expectError(await get(p), 400, 'bad_request');
  });

  await check('405 with Allow: POST /api/v1/status, GET /api/v1/capture, DELETE /, PUT /api/v1/hangs', async () => {
    const cases = [['POST', '/api/v1/status', 'GET, HEAD'], ['GET', '/api/v1/capture', 'POST'],
      ['HEAD', '/api/v1/capture', 'POST'], ['DELETE', '/', 'GET, HEAD'], ['PUT', '/api/v1/hangs', 'GET, HEAD'],
      ['POST', `/api/v1/hangs/${ids[0]}`, 'GET, HEAD']];
    for (const [method, p, allow] of cases) {
      const res = await get(p, { method });
      if (method === 'HEAD') {
        equal(res.status, 405, `${res.what}: status`);
      } else {
        expectError(res, 405, 'method_not_allowed');
      }
      equal(res.headers.allow, allow, `${res.what}: Allow`);
    }
  });

  // Raw sockets: the body is written whole with the headers, so that the answer is read even
  // if the server closes without reading the body.
  await check('413: a body over 4 KiB to POST /api/v1/capture (with a length, and chunked)', async () => {
    const body = 'x'.repeat(5000);
    const sized = await rawExchange(demo.port, `POST /api/v1/capture HTTP/1.1\r\nHost: ${HOST}\r\n` +
      `Authorization: Bearer ${T}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    const chunked = await rawExchange(demo.port, `POST /api/v1/capture HTTP/1.1\r\nHost: ${HOST}\r\n` +
      `Authorization: Bearer ${T}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
      `${(2500).toString(16)}\r\n${'y'.repeat(2500)}\r\n${(2500).toString(16)}\r\n${'y'.repeat(2500)}\r\n0\r\n\r\n`);
    for (const [what, ex] of [['Content-Length 5000', sized], ['chunked 5000', chunked]]) {
      const head = parseRaw(ex.raw);
      expect(head, `POST /api/v1/capture (${what}): no HTTP answer (${ex.error || 'closed'})`);
      Object.assign(head, { what: `POST /api/v1/capture (${what})`, body: head.rest });
      expectSecurityHeaders(head);
      expectError(head, 413, 'too_large');
    }
  });

  await check('413: a URI over 2 KiB', async () => {
    expectError(await get(`/api/v1/hangs?limit=1&${'a'.repeat(2100)}=1`), 413, 'too_large');
    expectError(await get(`/${'b'.repeat(2100)}`), 413, 'too_large');
  });

  await check('headers over 16 KiB: refused (400, 413 or 431) and closed; never served', async () => {
    const ex = await rawExchange(demo.port, `GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\n` +
      `Authorization: Bearer ${T}\r\nX-Padding: ${'p'.repeat(17 * 1024)}\r\n\r\n`);
    expect(ex.closed, 'the connection was left open');
    const head = parseRaw(ex.raw);
    if (head === null) {
      equal(ex.raw.length, 0, 'bytes received before the close');
      return 'closed without an answer';
    }
    expect(head.status === 400 || head.status === 413 || head.status === 431,
      `answered ${JSON.stringify(head.statusLine)} (docs: 400): ${JSON.stringify(ex.raw.slice(0, 400))}`);
    return head.statusLine;
  });

  // docs/viewer-api.md "Access": the query parameter proves the token like the header does, on
  // every route; an error that is not about access (404, 405) must not turn into a 401.
  await check('the token by ?token= on routes that answer an error: their error, not 401', async () => {
    const cases = [['GET', '/nope', 404], ['GET', '/api/v1/hangs/bad!id', 404],
      ['GET', '/api/v1/hangs/doesnotexist', 404], ['POST', '/api/v1/status', 405], ['GET', '/api/v1/capture', 405],
      ['GET', '/api/v1/hangs?limit=0', 400]];
    for (const [method, p, code] of cases) {
      const sep = p.includes('?') ? '&' : '?';
      const res = await request(demo.port, { method, path: `${p}${sep}token=${T}` });
      equal(res.status, code, `${res.what}: status (body ${res.body})`);
    }
  });
}

// Checks made before any route, token or not (docs/viewer-api.md "Request checks").
async function requestChecks(demo) {
  const T = demo.token;
  const withHost = (host) => request(demo.port, { path: '/api/v1/status', headers: { Host: host, ...bearer(T) } });
  await check('Host: this device\'s addresses and names are served, any other name or address 403', async () => {
    const own = [`${HOST}:${demo.port}`, HOST, `localhost:${demo.port}`, `LOCALHOST.:${demo.port}`,
      `127.0.0.2:${demo.port}`, `[::1]:${demo.port}`, `${os.hostname()}:${demo.port}`];
    for (const host of own) {
      const res = await withHost(host);
      equal(res.status, 200, `Host ${host}: status (body ${res.body.slice(0, 200)})`);
    }
    const foreign = [`evil.example:${demo.port}`, 'evil.example', `${HOST}.evil.example:${demo.port}`,
      `192.0.2.1:${demo.port}`, `${os.hostname()}.evil.example`, `${HOST}:${demo.port}@evil.example`,
      `[::2]:${demo.port}`, `${HOST}:port`];
    for (const host of foreign) {
      const res = await withHost(host);
      res.what += ` (Host ${JSON.stringify(host)})`;
      expectError(res, 403, 'forbidden');
    }
    const noToken = await request(demo.port, { path: '/', headers: { Host: 'evil.example' } });
    expectError(noToken, 403, 'forbidden');
  });

  await check('POST /api/v1/capture with another site\'s Origin: 403, token or not', async () => {
    for (const origin of ['http://evil.example', 'null', `https://${HOST}:${demo.port}`,
      `http://${HOST}:${demo.port + 1}`, `http://localhost:${demo.port}`]) {
      const res = await request(demo.port, { method: 'POST', path: '/api/v1/capture',
        headers: { Origin: origin, ...bearer(T) } });
      res.what += ` (Origin ${origin})`;
      expectError(res, 403, 'forbidden');
    }
    // Its own origin is served (200, or 429 when a capture ran less than a second ago).
    const own = await request(demo.port, { method: 'POST', path: '/api/v1/capture',
      headers: { Origin: `http://${HOST}:${demo.port}`, ...bearer(T) } });
    expect(own.status === 200 || own.status === 429, `own Origin: status ${own.status} ${own.body.slice(0, 200)}`);
  });

  await check('an encoded NUL or a malformed escape in the path: 404; other escapes decoded', async () => {
    for (const p of ['/api/v1/status%00', '/main.js%00.html', '/api/v1/status%00?x=1', '/%00',
      '/api/v1/status%2', '/api/v1/status%zz']) {
      const res = await request(demo.port, { path: p, headers: bearer(T) });
      expectError(res, 404, 'not_found');
    }
    const res = await request(demo.port, { path: '/api/v1/stat%75s', headers: bearer(T) });
    equal(res.status, 200, `${res.what}: status`);
  });

  // Which Host, Origin or token is meant, where the body ends: never guessed (issue 31, item
  // 10). Each request alone on its connection, written whole; the answer must be 400.
  const raw400 = async (what, text) => {
    const ex = await rawExchange(demo.port, text);
    const head = parseRaw(ex.raw);
    expect(head, `${what}: no HTTP answer (${ex.error || 'closed'}): ${JSON.stringify(ex.raw.slice(0, 200))}`);
    Object.assign(head, { what, body: head.rest.slice(0, head.headers['content-length'] ? Number(head.headers['content-length']) : undefined) });
    expectSecurityHeaders(head);
    expectError(head, 400, 'bad_request');
    return head;
  };
  await check('a repeated Host, Origin, Authorization or Cookie header: 400, token or not', async () => {
    const auth = `Authorization: Bearer ${T}\r\n`;
    const cases = [
      ['two Host (first ours)', `GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\nHost: evil.example\r\n${auth}Connection: close\r\n\r\n`],
      ['two Host (first foreign)', `GET /api/v1/status HTTP/1.1\r\nHost: evil.example\r\nHost: ${HOST}\r\n${auth}Connection: close\r\n\r\n`],
      ['two equal Host', `GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\nhost: ${HOST}\r\n${auth}Connection: close\r\n\r\n`],
      ['two Origin (first ours)', `POST /api/v1/capture HTTP/1.1\r\nHost: ${HOST}:${demo.port}\r\nOrigin: http://${HOST}:${demo.port}\r\n` +
        `Origin: http://evil.example\r\n${auth}Content-Length: 0\r\nConnection: close\r\n\r\n`],
      ['two Authorization', `GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\n${auth}Authorization: Bearer ${wrongToken(T)}\r\nConnection: close\r\n\r\n`],
      ['two Cookie', `GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\nCookie: lagscope_token=${T}\r\nCookie: a=b\r\nConnection: close\r\n\r\n`],
      ['two Host, no token', `GET / HTTP/1.1\r\nHost: ${HOST}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`],
    ];
    for (const [what, text] of cases) await raw400(what, text);
    // What follows a refused request on its connection may be its body: never served.
    const ex = await rawExchange(demo.port, `GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\nHost: evil.example\r\n${auth}\r\n` +
      `GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\n${auth}\r\n`);
    expect(ex.closed, 'the connection was left open after a refused request');
    equal((ex.raw.match(/^HTTP\/1\.[01] /gm) || []).length, 1, 'answers on the connection of a refused request');
  });

  await check('Content-Length 5, 0, +5, -1 (and a length with chunked, two Transfer-Encoding): 400', async () => {
    const post = `POST /api/v1/capture HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${T}\r\nConnection: close\r\n`;
    const cases = [
      ['Content-Length: 5, 0', `${post}Content-Length: 5, 0\r\n\r\nabcde`],
      ['Content-Length: +5', `${post}Content-Length: +5\r\n\r\nabcde`],
      ['Content-Length: -1', `${post}Content-Length: -1\r\n\r\nabcde`], // civetweb's own 411 before
      ['Content-Length with Transfer-Encoding: chunked', `${post}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
      ['Transfer-Encoding: gzip, chunked', `${post}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`],
      ['two Transfer-Encoding: chunked', `${post}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
    ];
    for (const [what, text] of cases) {
      const head = await raw400(`POST /api/v1/capture (${what})`, text);
      equal(head.headers.connection, 'close', `${what}: Connection`);
    }
  });

  // A chunked body is refused unread, at once: its size is known only as civetweb reads it,
  // and a chunk size of 7fffffffffffffff with nothing after held a worker for the whole 10 s
  // request timeout. The connection is closed (what follows is the body).
  await check('a chunked body (7fffffffffffffff, -1, zz, a well-formed one): 413 at once', async () => {
    const head = (method, p) => `${method} ${p} HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${T}\r\n` +
      'Transfer-Encoding: chunked\r\n\r\n';
    const cases = [
      ['chunk size 7fffffffffffffff, then nothing', `${head('POST', '/api/v1/capture')}7fffffffffffffff\r\n`],
      ['chunk size ffffffffffffffffff, then nothing', `${head('POST', '/api/v1/capture')}ffffffffffffffffff\r\n`],
      ['chunk size -1', `${head('POST', '/api/v1/capture')}-1\r\nabcde\r\n0\r\n\r\n`],
      ['chunk size zz', `${head('POST', '/api/v1/capture')}zz\r\nabcde\r\n0\r\n\r\n`],
      ['a well-formed chunked POST', `${head('POST', '/api/v1/capture')}5\r\nabcde\r\n0\r\n\r\n`],
      ['a GET with a well-formed chunked body', `${head('GET', '/api/v1/status')}3\r\nabc\r\n0\r\n\r\n`],
    ];
    for (const [what, text] of cases) {
      const ex = await rawExchange(demo.port, text, 12000);
      const h = parseRaw(ex.raw);
      expect(h, `${what}: no HTTP answer within ${ex.ms} ms (${ex.error || (ex.closed ? 'closed' : 'open')})`);
      Object.assign(h, { what, body: h.rest.slice(0, h.headers['content-length'] ? Number(h.headers['content-length']) : undefined) });
      expectSecurityHeaders(h);
      expectError(h, 413, 'too_large');
      expect(ex.closed, `${what}: the connection was left open`);
      expect(ex.ms < 2000, `${what}: answered and closed after ${ex.ms} ms, not at once`);
    }
  });

  await check('Content-Length headers that disagree: 400', async () => {
    const ex = await rawExchange(demo.port, `POST /api/v1/capture HTTP/1.1\r\nHost: ${HOST}\r\n` +
      `Authorization: Bearer ${T}\r\nContent-Length: 0\r\nContent-Length: 4\r\nConnection: close\r\n\r\nabcd`);
    const head = parseRaw(ex.raw);
    expect(head, `no HTTP answer (${ex.error || 'closed'})`);
    Object.assign(head, { what: 'POST with two Content-Length', body: head.rest });
    expectError(head, 400, 'bad_request');
  });
}

// ---- phase A2: a report folder the store refuses, a file it would never keep --------------------------

// docs/viewer-api.md "Errors" (issue 31, item 10): a 4 GiB file named as a report is not one
// (404, as a link or another document is), and a report folder the store's checks refuse (here
// writable by every user) answers 503 "unavailable" saying why, never 500.
async function phaseFolder() {
  const dir = tempDir('folder');
  const demo = await Demo.start(dir);
  const T = demo.token;
  const get = (p) => request(demo.port, { path: p, headers: bearer(T) });
  try {
    let id;
    await check('folder: a stall gives a report', async () => {
      id = (await demo.stall()).report_id;
      expect(id, 'no report id');
      return id;
    });
    await check('a 4 GiB (sparse) file named as a report: 404 on each of its routes; the list still served', async () => {
      const big = '20000101T000000.000Z-1-1';
      const fd = fs.openSync(path.join(dir, `${big}.json`), 'w', 0o600);
      try {
        fs.writeSync(fd, '{"format":"lagscope-hang-report"');
        fs.ftruncateSync(fd, 4 * 1024 * 1024 * 1024);
      } finally {
        fs.closeSync(fd);
      }
      try {
        for (const suffix of ['', '/speedscope', '/trace']) expectError(await get(`/api/v1/hangs/${big}${suffix}`), 404, 'not_found');
        const { json } = await getJson(demo, '/api/v1/hangs');
        expect(json.hangs.some((h) => h.id === id), `the real report ${id} is not listed`);
        expect(!json.hangs.some((h) => h.id === big), 'the 4 GiB file is listed');
      } finally {
        fs.rmSync(path.join(dir, `${big}.json`), { force: true });
      }
    });
    await check('a report folder writable by every user: 503 unavailable on the report routes, saying why', async () => {
      fs.chmodSync(dir, 0o777);
      try {
        for (const p of ['/api/v1/hangs', `/api/v1/hangs/${id}`, `/api/v1/hangs/${id}/trace`]) {
          const res = await get(p);
          const json = expectError(res, 503, 'unavailable');
          expect(/written by other users|mode/.test(json.message), `${res.what}: the message does not say why: ${json.message}`);
          expect(!res.headers['retry-after'], `${res.what}: Retry-After ${res.headers['retry-after']} (nothing to retry until the folder is fixed)`);
        }
        equal((await get('/api/v1/status')).status, 200, 'status, meanwhile');
      } finally {
        fs.chmodSync(dir, 0o700);
      }
      const { json } = await getJson(demo, '/api/v1/hangs');
      expect(json.hangs.some((h) => h.id === id), 'the report is not listed once the folder is 0700 again');
    });
  } finally {
    await demo.stop('folder');
    removeDir(dir);
  }
}

// ---- phase B: the token across restarts -----------------------------------------------------------------

// Stalls of 120 ms, under the threshold: hitches, kept in memory and listed.
async function phaseHitches() {
  const dir = tempDir('hitches');
  const demo = await Demo.start(dir, ['--stall-every', '0.4', '--stall-ms', '120']);
  try {
    await check('GET /api/v1/hitches: the 120 ms stalls, oldest first, each with demo_busy_spin', async () => {
      const list = await waitFor('two hitches', 10000, async () => {
        const { json } = await getJson(demo, '/api/v1/hitches');
        return json.hitches.length >= 2 && json.hitches;
      });
      for (const h of list) {
        equal(h.type, 'hitch', 'an entry\'s type');
        expect(h.duration_ms >= 50 && h.duration_ms < 250, `a hitch of ${h.duration_ms} ms`);
        expect(h.heaviest_stack.some((f) => f.function === 'demo_busy_spin'), 'a hitch without demo_busy_spin');
        expect(h.cause && h.cause.kind === 'cpu', `a hitch's cause: ${JSON.stringify(h.cause)}`);
      }
      expect(list.every((h, i) => i === 0 || h.start_ns > list[i - 1].start_ns), 'not oldest first');
      const { json } = await getJson(demo, '/api/v1/hangs');
      equal(json.total, 0, 'hangs listed for stalls under the threshold');
      return `${list.length} hitches, ${list.map((h) => h.duration_ms.toFixed(0)).join(', ')} ms`;
    });
  } finally {
    await demo.stop('hitches');
  }
}

async function phaseRollover(prev) {
  const dir = prev.dir;
  const T1 = prev.token;
  let T2;
  await check('second launch, same report folder: a new token; the previous one in the cookie gets the new cookie', async () => {
    const demo = await Demo.start(dir);
    try {
      T2 = demo.token;
      expect(T2 !== T1, 'the second launch printed the same token');
      const saved = fs.readdirSync(dir).map((f) => path.join(dir, f))
        .filter((f) => fs.statSync(f).isFile() && fs.readFileSync(f, 'utf8').trim() === T2);
      equal(saved.length, 1, 'files in the report folder holding the new token');
      equal(fs.statSync(saved[0]).mode & 0o777, 0o600, `mode of ${saved[0]}`);
      const res = await request(demo.port, { path: '/api/v1/status', headers: { Cookie: `lagscope_token=${T1}` } });
      equal(res.status, 200, `${res.what} with the previous token's cookie: status`);
      expectTokenCookie(res, T2);
      // Anywhere else it is no token: the previous launch's only swaps the cookie.
      for (const t of [{ headers: bearer(T1) }, { path: `/api/v1/status?token=${T1}` }, { path: `/?token=${T1}` }]) {
        const refused = await request(demo.port, { path: '/api/v1/status', ...t });
        refused.what += ` with the previous token (${JSON.stringify(t)})`;
        expectError(refused, 401, 'unauthorized');
        expect(!refused.headers['set-cookie'], `${refused.what}: sets a cookie`);
      }
      const page = await request(demo.port, { path: '/', headers: { Cookie: `lagscope_token=${T1}` } });
      equal(page.status, 200, 'GET / with the previous token\'s cookie: status');
      expectTokenCookie(page, T2);
      const { json } = await getJson(demo, '/api/v1/hangs');
      for (const id of prev.ids)
        expect(json.hangs.some((h) => h.id === id), `the earlier launch's report ${id} is not listed`);
    } finally {
      await demo.stop('rollover 2');
    }
  });
  await check('third launch: the launch-before-previous token is refused, the previous one accepted', async () => {
    const demo = await Demo.start(dir);
    try {
      const T3 = demo.token;
      expect(T3 !== T1 && T3 !== T2, 'the third launch reused a token');
      for (const t of [{ headers: bearer(T1) }, { headers: { Cookie: `lagscope_token=${T1}` } },
        { path: `/api/v1/status?token=${T1}` }, { path: `/?token=${T1}` }]) {
        const res = await request(demo.port, { path: '/api/v1/status', ...t });
        res.what += ' with the token of two launches ago';
        expectError(res, 401, 'unauthorized');
        expect(!res.headers['set-cookie'], `${res.what}: sets a cookie`);
      }
      const res = await request(demo.port, { path: '/api/v1/status', headers: { Cookie: `lagscope_token=${T2}` } });
      equal(res.status, 200, 'the previous launch\'s cookie: status');
      expectTokenCookie(res, T3);
    } finally {
      await demo.stop('rollover 3');
    }
  });
  removeDir(dir);
}

// ---- phase C: too many clients, too many streams -----------------------------------------------------

// A connection that sends the start of a request and never finishes it: it holds one of the
// server's workers until the request timeout.
function partialRequest(port, localAddress = HOST) {
  const sock = net.connect({ port, host: HOST, localAddress }, () => sock.write(`GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\n`));
  sock.on('error', () => {});
  return sock;
}

// The status from 127.0.0.2: while the server has not yet closed connections that 127.0.0.1's
// client already let go of (a refused stream, closed streams: the client is done before the
// server sees it), 127.0.0.1 may still hold its bound of 3, and a fourth connection from it
// would be shut down at once ("socket hang up").
async function statusFromAside(demo) {
  const res = await request(demo.port, { path: '/api/v1/status', headers: bearer(demo.token), localAddress: '127.0.0.2' });
  equal(res.status, 200, 'status from 127.0.0.2');
  return parseJson(res);
}

async function phaseLimits() {
  const dir = tempDir('limits');
  const demo = await Demo.start(dir, ['--max-clients', '4', '--max-streams', '2']);
  const T = demo.token;
  const streams = [];
  try {
    await check('--max-streams 2: two streams served, a third gets 503 busy', async () => {
      for (let i = 0; i < 2; i++) {
        const s = new Stream(demo.port, bearer(T));
        streams.push(s);
        equal((await s.opened()).status, 200, `stream ${i + 1}: status`);
        await s.waitEvent('hello', 3000, (e) => e.event === 'hello');
      }
      const third = await request(demo.port, { path: '/api/v1/stream', headers: bearer(T) });
      expectError(third, 503, 'busy');
      expect(third.headers['retry-after'], '503 without Retry-After');
      const s = await statusFromAside(demo);
      equal(s.server.stream_clients, 2, 'server.stream_clients');
      expect(s.server.stream_clients_rejected >= 1, `stream_clients_rejected ${s.server.stream_clients_rejected}`);
      equal(s.config.server_max_clients, 4, 'config.server_max_clients');
      equal(s.config.server_max_stream_clients, 2, 'config.server_max_stream_clients');
    });
    await check('streams closed by the client: stream_clients and clients go back down', async () => {
      for (const s of streams) s.close();
      await waitFor('stream_clients 0 and clients 1 (this request)', 5000, async () => {
        const s = await statusFromAside(demo);
        return s.server.stream_clients === 0 && s.server.clients === 1;
      });
    });

    // What the server does (measured): a connection is counted from accept; past
    // server_max_clients open connections a complete request is answered 503 at once, even
    // while the others are idle half-requests. (With all max_clients + 2 workers taken, a further
    // connection waits unaccepted until a worker frees at the request timeout.) One address
    // holds at most max(max_clients / 2, max_streams + 1) = 3: the four come from two others.
    const holders = [];
    await check('--max-clients 4: four half-sent requests held, a further request gets 503 busy at once', async () => {
      for (let i = 0; i < 4; i++) holders.push(partialRequest(demo.port, i < 2 ? '127.0.0.2' : '127.0.0.3'));
      const res = await waitFor('a 503 with four connections held', 3000, async () => {
        const r = await request(demo.port, { path: '/api/v1/status', headers: bearer(T) });
        return r.status === 503 ? r : null;
      });
      expectError(res, 503, 'busy');
      expect(res.headers['retry-after'], '503 without Retry-After');
      expect(res.ms < 1000, `the 503 took ${res.ms} ms`);
      return `503 in ${res.ms} ms`;
    });
    await check('the held connections closed: clients back down, the rejection counted', async () => {
      for (const h of holders) h.destroy();
      const s = await waitFor('clients back to 1', 5000, async () => {
        const r = await request(demo.port, { path: '/api/v1/status', headers: bearer(T) });
        if (r.status !== 200) return null;
        const j = parseJson(r);
        return j.server.clients === 1 && j;
      });
      expect(s.server.clients_rejected >= 1, `clients_rejected ${s.server.clients_rejected}`);
    });
  } finally {
    for (const s of streams) s.close();
    await demo.stop('limits');
    removeDir(dir);
  }
}

// ---- phase E: a denial of service from one address ---------------------------------------------------

// Keeps `count` connections from localAddress open: silent ones (text ''), or slowloris ones
// that send text one byte a second; one that the server closes is opened again, as an attacker
// would. stop() ends them all.
function attackers(port, localAddress, count, text = '') {
  const state = { opened: 0, closedByServer: 0, socks: new Set(), stopped: false };
  const open = () => {
    if (state.stopped) return;
    let sent = 0;
    const sock = net.connect({ port, host: HOST, localAddress }, () => { state.opened++; });
    const timer = text ? setInterval(() => { if (sent < text.length) sock.write(text[sent++]); }, 1000) : null;
    sock.on('close', () => { if (timer) clearInterval(timer); });
    state.socks.add(sock);
    sock.on('error', () => {});
    sock.on('data', () => {});
    sock.on('close', () => {
      state.socks.delete(sock);
      if (state.stopped) return;
      state.closedByServer++;
      setTimeout(open, 50);
    });
  };
  for (let i = 0; i < count; i++) open();
  state.stop = () => {
    state.stopped = true;
    for (const s of state.socks) s.destroy();
  };
  return state;
}

// 60 silent and 20 slowloris connections from one address (the demo's default bounds: 16
// clients, 8 streams): the silent ones wait in the kernel until they send a byte
// (TCP_DEFER_ACCEPT), and one address holds at most max(16 / 2, 8 + 1) = 9 connections, so
// that a client on another address finds a worker. Watched for 25 s: with a short deferral
// (10 s) the kernel hands the silent ones over after ~15 s and they take every worker.
async function phaseDenialOfService() {
  const dir = tempDir('dos');
  const demo = await Demo.start(dir);
  const T = demo.token;
  const idle = attackers(demo.port, '127.0.0.2', 60);
  const loris = attackers(demo.port, '127.0.0.2', 20,
    `GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${T}\r\n${'x'.repeat(40)}`);
  try {
    await check('60 idle and 20 slowloris connections from 127.0.0.2 are open', async () => {
      await waitFor('the attacker\'s 80 connections', 10000, async () => idle.opened >= 60 && loris.opened >= 20);
      return `${idle.socks.size} idle, ${loris.socks.size} slowloris open`;
    });
    const times = [];
    await check('meanwhile a client on 127.0.0.1 is answered 200 within 3 s, for 25 s', async () => {
      const until = Date.now() + 25000;
      while (Date.now() < until) {
        const res = await request(demo.port, { path: '/api/v1/status', headers: bearer(T), timeout: 3000 });
        equal(res.status, 200, `${res.what} during the attack: status (body ${res.body.slice(0, 200)})`);
        expect(res.ms < 3000, `answered in ${res.ms} ms`);
        times.push(res.ms);
        await sleep(250);
      }
      return `${times.length} requests, slowest ${Math.max(...times)} ms; the server closed ` +
        `${idle.closedByServer} idle and ${loris.closedByServer} slowloris connections`;
    });
    await check('the slowloris connections past the bound were closed, the silent ones never taken', async () => {
      expect(loris.closedByServer >= 20 - 9, `only ${loris.closedByServer} slowloris connections closed`);
      equal(idle.closedByServer, 0, 'silent connections closed by the server');
    });
  } finally {
    idle.stop();
    loris.stop();
    await demo.stop('denial of service');
    removeDir(dir);
  }
}

// ---- phase D: slow clients --------------------------------------------------------------------------------

// A slowloris: a valid request sent one byte a second; the request timeout (10 s) must cut it.
function slowloris(port, token) {
  const text = `GET /api/v1/status HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${token}\r\n` +
    `X-Slow: ${'s'.repeat(60)}\r\n\r\n`;
  const state = { start: Date.now(), sent: 0, received: '', closedAt: null };
  const sock = net.connect(port, HOST);
  const timer = setInterval(() => {
    if (state.sent < text.length && !sock.destroyed) sock.write(text[state.sent++]);
  }, 1000);
  sock.on('data', (c) => { state.received += c.toString('latin1'); });
  sock.on('close', () => {
    state.closedAt = Date.now();
    clearInterval(timer);
  });
  sock.on('error', () => {});
  state.stop = () => {
    clearInterval(timer);
    sock.destroy();
  };
  return state;
}

// A stream client that never reads its socket: the server must drop it once it falls the
// whole backlog (256 events) behind. No 'data' listener: Node then never reads the socket.
function stuckStream(port, token) {
  const sock = net.connect(port, HOST, () => sock.write(`GET /api/v1/stream HTTP/1.1\r\nHost: ${HOST}\r\n` +
    `Authorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`));
  sock.pause();
  sock.on('error', () => {});
  return sock;
}

async function phaseSlowClients() {
  const dir = tempDir('slow');
  // Stalls every 0.5 s: hang_began/hang_sample(every 100 ms)/hang_ended besides metrics.
  const demo = await Demo.start(dir, ['--stall-every', '0.5', '--stall-ms', '300']);
  const T = demo.token;
  const normal = new Stream(demo.port, bearer(T));
  const stuck = stuckStream(demo.port, T);
  let loris;
  const latencies = [];
  let gap = 0; // the longest time the normal stream went without data, while watched
  try {
    await check('slow-client setup: a normal and a never-reading stream connected', async () => {
      equal((await normal.opened()).status, 200, 'normal stream status');
      await waitFor('stream_clients 2', 5000, async () => (await status(demo)).server.stream_clients === 2);
    });
    loris = slowloris(demo.port, T);

    // Watch everything together for up to 60 s: the API answers fast, the normal stream flows,
    // the slowloris is cut off, and the stuck stream is dropped and counted.
    let dropped = null;
    await check('watching the slow clients, the API and the normal stream (at most 60 s)', async () => {
      const until = Date.now() + 60000;
      while (Date.now() < until) {
        let t = Date.now();
        const s = await status(demo);
        latencies.push(Date.now() - t);
        t = Date.now();
        await getJson(demo, '/api/v1/hangs?limit=5'); // reads reports from disk
        latencies.push(Date.now() - t);
        gap = Math.max(gap, Date.now() - normal.lastData);
        if (s.server.stream_clients_dropped >= 1) dropped = s.server;
        if (dropped && loris.closedAt) break;
        await sleep(500);
      }
      return `${latencies.length} API requests`;
    });
    const lorisS = loris.closedAt && (loris.closedAt - loris.start) / 1000;

    await check('a slowloris (one header byte a second) is cut off by the request timeout, never served', async () => {
      const open = ((Date.now() - loris.start) / 1000).toFixed(1);
      expect(loris.closedAt, `still open after ${open} s (${loris.sent} bytes sent)`);
      expect(lorisS >= 5 && lorisS <= 15, `closed after ${lorisS.toFixed(1)} s, expected about 10 s`);
      expect(!/^HTTP\/1\.[01] 200/.test(loris.received), `it was served: ${loris.received.slice(0, 100)}`);
      const answer = JSON.stringify(loris.received.split('\r\n')[0]);
      return `closed after ${lorisS.toFixed(1)} s, ${loris.sent} bytes sent, answer ${answer}`;
    });
    await check('meanwhile every API request answered in under a second', async () => {
      const max = Math.max(...latencies);
      expect(max < 1000, `the slowest API request took ${max} ms`);
      return `${latencies.length} requests, slowest ${max} ms`;
    });
    await check('meanwhile the normal stream kept receiving events', async () => {
      expect(!normal.closed, 'the normal stream was closed');
      expect(gap < 5000, `it went ${gap} ms without data`);
      const types = new Set(normal.events.map((e) => e.event));
      for (const t of ['metrics', 'hang_began', 'hang_sample', 'hang_ended']) expect(types.has(t), `no ${t} event`);
      return `${normal.events.length} events, ${normal.bytes} bytes, longest gap ${gap} ms`;
    });
    await check('a stream client that never reads is dropped and counted within 60 s', async () => {
      const s = (await status(demo)).server;
      expect(dropped, `not dropped after 60 s: ${JSON.stringify(s)}`);
      expect(dropped.stream_events_dropped >= 1, `stream_events_dropped ${dropped.stream_events_dropped}`);
      return JSON.stringify(dropped);
    });
  } finally {
    normal.close();
    stuck.destroy();
    if (loris) loris.stop();
    await demo.stop('slow clients');
    removeDir(dir);
  }
}

// ---- phase: counts past the store's bound ----------------------------------------------------------------

// More hangs than the store keeps (--max-reports 4): the lists count every hang, the evicted
// ones too, and say how many they list (docs/viewer-api.md, "Counts past the store's bound").
async function phaseCounts() {
  const dir = tempDir('counts');
  const KEEP = 4, HANGS = 10;
  const demo = await Demo.start(dir, ['--threshold-ms', '60', '--stall-ms', '120',
    '--max-reports', String(KEEP)]);
  try {
    const ended = [];
    for (let i = 0; i < HANGS; i++) ended.push(await demo.stall());
    const endedMs = ended.reduce((sum, l) => sum + l.duration_ms, 0);
    await check(`GET /api/v1/signatures: ${HANGS} hangs counted, ${KEEP} reports kept`, async () => {
      const { json } = await getJson(demo, '/api/v1/signatures');
      const counted = json.signatures.reduce((sum, g) => sum + g.count, 0) + json.unsigned;
      equal(counted, HANGS, `the groups' counts (${JSON.stringify(json).slice(0, 600)})`);
      equal(json.hangs, HANGS, 'signatures: hangs');
      equal(json.reports, KEEP, 'signatures: reports (kept)');
      equal(json.evicted, HANGS - KEEP, 'signatures: evicted');
      const totalMs = json.signatures.reduce((sum, g) => sum + g.total_ms, 0);
      expect(Math.abs(totalMs - endedMs) < 0.01 * HANGS,
        `the groups' total_ms ${totalMs}, the hang_ended lines' ${endedMs}`);
      for (const g of json.signatures) {
        equal(g.count, g.reports + g.evicted, `group ${g.signature}: count = reports + evicted`);
        equal(g.ids.length, g.reports, `group ${g.signature}: ids listed`);
      }
      return `${json.signatures.length} group(s), ${totalMs.toFixed(1)} ms`;
    });
    await check(`GET /api/v1/hangs: total ${KEEP} kept, evicted ${HANGS - KEEP} said`, async () => {
      const { json } = await getJson(demo, '/api/v1/hangs');
      equal(json.total, KEEP, 'hangs: total (the reports kept)');
      equal(json.evicted, HANGS - KEEP, 'hangs: evicted');
      equal((await status(demo)).hangs, HANGS, 'status: hangs');
      return `total ${json.total}, evicted ${json.evicted}`;
    });
  } finally {
    await demo.stop('counts');
    removeDir(dir);
  }
}

// ---- the run ---------------------------------------------------------------------------------------------

async function main() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 18) {
    console.log(`api.test.js: skipped: Node ${process.versions.node} is too old (18 or later needed)`);
    process.exit(SKIP);
  }
  log(`lagscope viewer API test: ${options.demo}`);
  const phases = { routes: async () => {
    const routes = await phaseRoutes();
    if (routes) await phaseRollover(routes);
  }, folder: phaseFolder, hitches: phaseHitches, limits: phaseLimits, dos: phaseDenialOfService,
  slow: phaseSlowClients, counts: phaseCounts };
  if (options.only && !phases[options.only]) usage(`unknown phase ${options.only}`);
  for (const [name, phase] of Object.entries(phases))
    if (!options.only || options.only === name) await phase();
  await check('every demo exited 0 on SIGINT', async () => {
    const bad = exits.filter((e) => e.code !== 0);
    expect(bad.length === 0, bad.map((e) => `${e.label}: exit ${e.code} signal ${e.signal}; ` +
      `stderr: ${e.stderr.trim().split('\n').slice(-2).join(' | ')}`).join('\n'));
    return `${exits.length} runs`;
  });
  if (failures) {
    log(`${failures} check(s) failed`);
    finish(1);
  }
  log('every check passed');
  finish(0);
}

main();
