// The map checks itself (docs/hacking.md, "Layout", "Glossary"; docs/design.md, "Threads"):
//   map_layout         every source file is on docs/hacking.md's Layout block, and every file the
//                      block names is there (the rule: hacking.md, "How a file counts as on the map")
//   map_threads        every thread lagscope names in its code is in docs/design.md's threads section
//   map_readme_length  README.md is at most 200 lines and opens with the demo and the test command
//   map_glossary       every code name the glossary cites in backticks (a file, an identifier, a
//                      thread's name) is in the tree
//   map_file_length    no .c file of core/ hud/ web/ attach/ is over 700 lines (a file has one job)
// Each prints what is missing and exits 1; 0 when the map holds.
// Usage: node tests/map/map.mjs CHECK SOURCE_DIR
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [check, rootArg] = process.argv.slice(2);
const root = path.resolve(rootArg ?? path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..'));
const problems = [];
const fail = (text) => problems.push(`${check}: ${text}`);

// ---- the tree --------------------------------------------------------------------------------

// The repository's files: git's (tracked, and new ones not ignored) in a clone, else a walk that
// leaves out what a build or npm makes.
function repoFiles() {
  try {
    const out = execFileSync('git', ['-C', root, 'ls-files', '--cached', '--others', '--exclude-standard', '-z'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 });
    return [...new Set(out.split('\0').filter((f) => f && fs.existsSync(path.join(root, f))))].sort();
  } catch {
    const files = [];
    const skip = new Set(['.git', 'build', 'node_modules']);
    const walk = (dir) => {
      for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
        const rel = dir ? `${dir}/${e.name}` : e.name;
        if (e.isDirectory()) { if (!skip.has(e.name) && !e.name.startsWith('build')) walk(rel); }
        else files.push(rel);
      }
    };
    walk('');
    return files.sort();
  }
}

const read = (rel) => fs.readFileSync(path.join(root, rel), 'utf8');

// A Markdown section: from the heading that starts with `title` to the next heading of its level.
function section(text, level, title) {
  const lines = text.split('\n');
  const marks = '#'.repeat(level) + ' ';
  const start = lines.findIndex((l) => l.startsWith(marks + title));
  if (start < 0) return null;
  let end = lines.findIndex((l, i) => i > start && l.startsWith(marks));
  if (end < 0) end = lines.length;
  return lines.slice(start, end).join('\n');
}

// ---- map_layout ------------------------------------------------------------------------------

// The folders whose every file must be on the map, and the one name that needs no line.
const SOURCE_FOLDERS = ['core/', 'hud/', 'web/', 'attach/', 'assets/', 'examples/', 'cmake/', 'scripts/', '.ci/'];
const NO_LINE = new Set(['CMakeLists.txt']); // each folder's build, beside what it builds
// tests/ is mapped by folder: these kinds have a folder per module (tests/unit/store/).
const TEST_KINDS = new Set(['unit', 'integration', 'builds']);
// A name the Layout gives for a file must end like one.
const FILE_NAME = /\.(c|h|m|cpp|js|mjs|css|html|svg|json|cmake|in)$/;

// `a_{b,c}.c` is `a_b.c a_c.c`, so that a line can name a family of files briefly.
function expandBraces(text) {
  const brace = /([A-Za-z0-9_.\-/]*)\{([^{}]*)\}([A-Za-z0-9_.\-/]*)/;
  for (let m; (m = brace.exec(text));)
    text = text.slice(0, m.index) + m[2].split(',').map((p) => m[1] + p.trim() + m[3]).join(' ') +
      text.slice(m.index + m[0].length);
  return text;
}
const tokens = (text) => (expandBraces(text).match(/[A-Za-z0-9_.\-/+]+/g) ?? [])
  .map((t) => t.replace(/\.+$/, '')).filter(Boolean);
const stem = (name) => name.replace(/\.[A-Za-z0-9]+$/, '');

// The Layout block's entries: a line that starts in column 0 opens one; its left column (before
// two spaces) holds its keys, comma-separated (`tests/browser/, fuzz/`: fuzz/ beside browser/).
function layoutEntries(block) {
  const entries = [];
  for (const line of block.split('\n')) {
    if (line.trim() === '') continue;
    if (/^\S/.test(line)) {
      const m = /^(\S.*?)(?: {2,}(.*))?$/.exec(line);
      const keys = m[1].split(',').map((k) => k.trim()).filter(Boolean);
      const parent = keys[0].includes('/') ? keys[0].replace(/[^/]*\/?$/, '') : '';
      entries.push({
        line,
        keys: keys.map((k, i) => (i === 0 || k.startsWith(parent) ? k : parent + k)),
        text: m[2] ?? '',
      });
    } else if (entries.length > 0) {
      entries[entries.length - 1].text += '\n' + line;
    }
  }
  for (const e of entries) e.words = tokens(e.text);
  return entries;
}

// The entry of a path's folder: the one whose folder key is the longest prefix of it.
function folderEntry(entries, rel) {
  let best = null, bestKey = '';
  for (const e of entries)
    for (const k of e.keys)
      if (k.endsWith('/') && rel.startsWith(k) && k.length > bestKey.length) { best = e; bestKey = k; }
  return best ? { entry: best, key: bestKey } : null;
}

// A file is on the map when the block has its path, or its folder's entry has its path from
// that folder (`linux/x11_overlay.c` in hud/'s), or its name or stem alone (`cfi_fde`,
// `x11_refresh.c`; a header and its .c share a stem).
function onMap(rel, allWords, entries) {
  if (allWords.has(rel) || allWords.has(rel + '/')) return true;
  const found = folderEntry(entries, rel);
  if (!found) return false;
  const sub = rel.slice(found.key.length), name = path.posix.basename(rel);
  return found.entry.words.some((w) => w === sub || stem(w) === stem(sub) ||
    (!w.includes('/') && (w === name || stem(w) === stem(name))));
}

function checkLayout() {
  const doc = read('docs/hacking.md');
  const sec = section(doc, 2, 'Layout');
  const block = sec && /\n```\n([\s\S]*?)\n```/.exec(sec);
  if (!block) return fail('docs/hacking.md has no "## Layout" section with a ``` block');
  const entries = layoutEntries(block[1]);
  const allWords = new Set(tokens(block[1]));
  const files = repoFiles();

  for (const rel of files) {
    if (!SOURCE_FOLDERS.some((f) => rel.startsWith(f)) || NO_LINE.has(path.posix.basename(rel))) continue;
    if (onMap(rel, allWords, entries)) continue;
    const found = folderEntry(entries, rel);
    const name = path.posix.basename(rel);
    const ways = [...new Set([rel.slice(found?.key.length ?? 0), name, stem(name)])].map((w) => `"${w}"`);
    fail(`${rel} is not on the map: docs/hacking.md's Layout block names neither its path nor, ` +
      (found ? `in the line of ${found.key}, ${ways.join(' or ')}` : `any line for its folder (${path.posix.dirname(rel)}/)`));
  }

  // tests/: each module's folder, and the files at the top of tests/.
  const testFolders = new Set();
  for (const rel of files) {
    const parts = rel.split('/');
    if (parts[0] !== 'tests') continue;
    if (parts.length === 2) {
      if (!NO_LINE.has(parts[1]) && !onMap(rel, allWords, entries))
        fail(`${rel} is not on the map: no line of docs/hacking.md's Layout names it (a line for tests/)`);
      continue;
    }
    const depth = TEST_KINDS.has(parts[1]) && parts.length > 3 ? 3 : 2;
    testFolders.add(parts.slice(0, depth).join('/'));
  }
  for (const dir of testFolders) {
    if (entries.some((e) => e.keys.includes(dir + '/')) || allWords.has(dir + '/') || allWords.has(dir)) continue;
    const found = folderEntry(entries, dir + '/');
    const name = path.posix.basename(dir);
    if (found && found.key !== dir + '/' && found.entry.words.some((w) => w === name || w === name + '/')) continue;
    fail(`the tests' folder ${dir}/ is not on the map: docs/hacking.md's Layout block has no line ` +
      `${dir}/ and ${found ? `the line of ${found.key} does not say "${name}"` : 'no line for its parent'}`);
  }

  // The other way: each file the block names is there (a moved file's line moves with it).
  const have = new Set(files);
  for (const e of entries) {
    const folders = e.keys.filter((k) => k.endsWith('/'));
    for (const w of e.words) {
      if (!FILE_NAME.test(w)) continue;
      const known = have.has(w) ||
        folders.some((k) => have.has(k + w)) ||
        (!w.includes('/') && folders.some((k) => files.some((f) => f.startsWith(k) && path.posix.basename(f) === w)));
      if (!known)
        fail(`docs/hacking.md's Layout names ${w} in the line of ${e.keys.join(', ')}, and there is no such file` +
          (folders.length ? ` under ${folders.join(', ')}` : ''));
    }
  }
  if (problems.length === 0)
    console.log(`${check}: ok: every file of ${SOURCE_FOLDERS.join(' ')} and every tests/ folder is on the map`);
}

// ---- map_threads -----------------------------------------------------------------------------

const CODE_FOLDERS = ['core/', 'hud/', 'web/', 'attach/'];
const CODE_FILE = /\.(c|h|m|cpp)$/;
const THREADS_FILE = 'core/base/threads.c'; // where lagscope's threads are made, named and adopted

// The arguments of each call to a function whose name matches `fn`, balanced parentheses.
function calls(text, fn) {
  const out = [];
  const re = new RegExp(`\\b(\\w*(?:${fn})\\w*)\\s*\\(`, 'g');
  for (let m; (m = re.exec(text));) {
    let depth = 1, i = re.lastIndex;
    for (; i < text.length && depth > 0; i++) depth += text[i] === '(' ? 1 : text[i] === ')' ? -1 : 0;
    out.push({ name: m[1], args: text.slice(re.lastIndex, i - 1), at: m.index });
  }
  return out;
}
const lineOf = (text, at) => text.slice(0, at).split('\n').length;

function checkThreads() {
  const design = read('docs/design.md');
  const sec = section(design, 2, 'Threads');
  if (!sec) return fail('docs/design.md has no "## Threads…" section');
  const files = repoFiles().filter((f) => CODE_FOLDERS.some((d) => f.startsWith(d)) && CODE_FILE.test(f));
  const names = new Map();
  for (const rel of files) {
    if (rel === THREADS_FILE) continue;
    const text = read(rel);
    let named = 0;
    for (const c of calls(text, 'thread_start|thread_name|setname_np')) {
      for (const lit of c.args.matchAll(/"([^"\\]+)"/g)) {
        named++;
        if (!names.has(lit[1])) names.set(lit[1], `${rel}:${lineOf(text, c.at)}`);
      }
    }
    // A thread made or adopted here without a name in the code: the map must find it another way.
    if (named || rel.endsWith('.h')) continue; // a header declares; the .c files make them
    if (/\bpthread_create\s*\(/.test(text))
      fail(`${rel} starts a thread with pthread_create and names none: name it ` +
        '(lagscope__thread_start, lagscope__thread_name_self) so that the threads section can list it');
    if (/\blagscope__thread_adopt\s*\(/.test(text) && !sec.includes(rel))
      fail(`${rel} adopts threads it does not name (lagscope__thread_adopt), and docs/design.md's ` +
        `threads section does not say which (name ${rel} in their row)`);
  }
  if (names.size === 0)
    return fail(`no thread name found in ${CODE_FOLDERS.join(' ')}: the calls that name threads ` +
      '(lagscope__thread_start, lagscope__thread_name_self) changed; change this check with them');
  for (const [name, where] of names) {
    const re = new RegExp(`(^|[^A-Za-z0-9_-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_-])`);
    if (!re.test(sec))
      fail(`the thread "${name}" (${where}) is not in docs/design.md's threads section ` +
        '("Threads, the bus and subscribers"): add its row, who starts it and what it may wait on');
  }
  if (problems.length === 0)
    console.log(`${check}: ok: ${names.size} threads, each in docs/design.md: ${[...names.keys()].join(', ')}`);
}

// ---- map_readme_length -----------------------------------------------------------------------

const README_MAX_LINES = 200;
const README_COMMANDS = ['bash examples/run-demo', 'bash tests/run'];

function checkReadme() {
  const text = read('README.md');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > README_MAX_LINES)
    fail(`README.md has ${lines} lines, more than ${README_MAX_LINES}: move the detail to docs/ ` +
      '(guide.md, design.md, viewer-api.md) and link it in a line');
  const first = /```\S*\n([\s\S]*?)\n```/.exec(text);
  for (const cmd of README_COMMANDS)
    if (!first || !first[1].split('\n').some((l) => l.trim().startsWith(cmd)))
      fail(`README.md's first code block does not give "${cmd}" (it must open with the demo and the whole suite)`);
  if (problems.length === 0) console.log(`${check}: ok: README.md has ${lines} lines (at most ${README_MAX_LINES})`);
}

// ---- map_glossary ----------------------------------------------------------------------------

const NAME_FOLDERS = ['core/', 'hud/', 'web/', 'attach/', 'assets/', 'examples/'];
const NAME_FILE = /\.(c|h|m|cpp|js|css|html)$/;

function checkGlossary() {
  const doc = read('docs/hacking.md');
  const sec = section(doc, 2, 'Glossary');
  if (!sec) return fail('docs/hacking.md has no "## Glossary" section');
  const files = repoFiles();
  const have = new Set(files);
  const code = files.filter((f) => NAME_FOLDERS.some((d) => f.startsWith(d)) && NAME_FILE.test(f))
    .map(read).join('\n');
  const words = new Set(code.match(/[A-Za-z_][A-Za-z0-9_]*/g));
  let checked = 0, entry = '(before the first entry)';
  for (const line of sec.split('\n')) {
    const term = /^- \*\*([^*]+)\*\*/.exec(line);
    if (term) entry = term[1];
    for (const span of line.matchAll(/`([^`]+)`/g)) {
      const s = span[1].trim().replace(/\(\)$/, '');
      let missing = null;
      if (/^[\w.\-/*]+$/.test(s) && (s.includes('/') || /\.(c|h|md|js|css|cmake)$/.test(s))) {
        const re = new RegExp('^' + s.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*') + '$');
        const exists = s.includes('*') ? files.some((f) => re.test(f))
          : s.endsWith('/') ? files.some((f) => f.startsWith(s)) : have.has(s) || have.has('docs/' + s);
        if (!exists) missing = 'no such file in the tree';
      } else if (/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/.test(s)) {
        const absent = s.split('.').filter((w) => !words.has(w));
        if (absent.length) missing = `${absent.join(', ')} found nowhere in ${NAME_FOLDERS.join(' ')}`;
      } else if (/^[a-z]+(-[a-z0-9]+)+$/.test(s)) {
        if (!code.includes(`"${s}"`)) missing = `no string "${s}" in ${NAME_FOLDERS.join(' ')}`;
      } else {
        continue; // prose in backticks (`lock · keeper`): nothing to look up
      }
      checked++;
      if (missing) fail(`the glossary's "${entry}" cites \`${span[1]}\`: ${missing}`);
    }
  }
  if (checked === 0) fail('the glossary cites no code name in backticks: nothing could be checked');
  if (problems.length === 0) console.log(`${check}: ok: the glossary's ${checked} code names are all in the tree`);
}

// ---- map_file_length -------------------------------------------------------------------------

const FILE_MAX_LINES = 700;
const FILE_FOLDERS = ['core/', 'hud/', 'web/', 'attach/'];

function checkFileLength() {
  let longest = { rel: '', lines: 0 };
  for (const rel of repoFiles().filter((f) => FILE_FOLDERS.some((d) => f.startsWith(d)) && f.endsWith('.c'))) {
    const text = read(rel);
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > longest.lines) longest = { rel, lines };
    if (lines > FILE_MAX_LINES)
      fail(`${rel} has ${lines} lines, more than ${FILE_MAX_LINES}: cut it by job (hacking.md, "Layout")`);
  }
  if (problems.length === 0)
    console.log(`${check}: ok: the longest is ${longest.rel}, ${longest.lines} lines (at most ${FILE_MAX_LINES})`);
}

// ----------------------------------------------------------------------------------------------

const CHECKS = { map_layout: checkLayout, map_threads: checkThreads, map_readme_length: checkReadme,
  map_glossary: checkGlossary, map_file_length: checkFileLength };
if (!CHECKS[check]) {
  console.error(`usage: node map.mjs ${Object.keys(CHECKS).join('|')} SOURCE_DIR`);
  process.exit(2);
}
CHECKS[check]();
for (const p of problems) console.error(p);
process.exit(problems.length ? 1 : 0);
