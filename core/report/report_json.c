/* Hang reports as JSON: one hang's data (main-thread samples, every thread's stack, metrics
 * around it) symbolicated and merged into a call tree (call_tree.c), then written out. Field
 * by field in docs/hang-report.md.
 *
 * Contents:
 *   1. frames, the call tree, the heaviest stack, threads
 *   2. the verdict: why the main thread did not answer (cause), with the lock owners' chain
 *   3. the report: metrics, the timeline, samples, the whole; the entry points
 *   4. the telling frame of a stack (the hang list, hitches, the HUD)
 *
 * Memory: the frame cache and the call tree come from lagscope__alloc and are freed before
 * returning; every text is written as it goes (core/base/json_writer.c), never built as a
 * cJSON tree first, into lagscope's heap, and freed with lagscope__dealloc. */
#define _POSIX_C_SOURCE 200809L

#include "report/call_tree.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frames written for all threads' stacks together; past it a thread's stack is left out and
 * says so. With the tree's bound this keeps a report well below the store's 16 MiB per file
 * even with 1024 threads of 128 frames. */
#define REPORT_MAX_THREAD_FRAMES 24576u

/* ---- 1. frames, the call tree, threads -------------------------------------------------- */

static void frame_fields(lagscope__json_writer *w, const lagscope__stack_frame *f) {
  lagscope__jw_hex(w, "address", f->address);
  lagscope__jw_string(w, "function", f->function);
  if (f->function != NULL) lagscope__jw_u64(w, "offset", f->function_offset);
  lagscope__jw_string(w, "module", f->module);
  if (f->module != NULL) {
    lagscope__jw_string(w, "build_id", f->build_id != NULL ? f->build_id : "");
    lagscope__jw_hex(w, "load_address", f->load_address);
    lagscope__jw_hex(w, "module_offset", f->module_offset);
  }
  if (f->file != NULL) lagscope__jw_string(w, "file", f->file);
  if (f->line != 0) lagscope__jw_u64(w, "line", f->line);
}

static void frame_write(lagscope__json_writer *w, const lagscope__report_ctx *c, uint32_t frame) {
  lagscope__jw_begin_object(w, NULL);
  frame_fields(w, lagscope__report_ctx_frame(c, frame));
  lagscope__jw_end_object(w);
}

static void children_write(lagscope__json_writer *w, const lagscope__call_tree *t,
                           const lagscope__report_ctx *c, uint32_t index) {
  lagscope__jw_begin_array(w, "children");
  for (uint32_t ch = t->nodes[index].first_child; ch != LAGSCOPE__TREE_NONE;
       ch = t->nodes[ch].next_sibling) {
    const lagscope__tree_node *child = &t->nodes[ch];
    lagscope__jw_begin_object(w, NULL);
    frame_fields(w, lagscope__report_ctx_frame(c, child->frame));
    lagscope__jw_u64(w, "id", t->written_id[ch]);
    lagscope__jw_u64(w, "count", child->count);
    lagscope__jw_u64(w, "self", child->self);
    children_write(w, t, c, ch);
    lagscope__jw_end_object(w);
  }
  lagscope__jw_end_array(w);
}

/* The call tree, ordered by lagscope__call_tree_order. */
static void tree_write(lagscope__json_writer *w, const lagscope__call_tree *t,
                       const lagscope__report_ctx *c) {
  lagscope__jw_begin_object(w, "call_tree");
  lagscope__jw_string(w, "function", "(all samples)");
  lagscope__jw_u64(w, "id", t->written_id[0]);
  lagscope__jw_u64(w, "count", t->nodes[0].count);
  lagscope__jw_u64(w, "self", t->nodes[0].self);
  if (t->truncated_samples > 0) {
    lagscope__jw_bool(w, "truncated", 1);
    lagscope__jw_u64(w, "truncated_samples", t->truncated_samples);
  }
  children_write(w, t, c, 0);
  lagscope__jw_end_object(w);
}
/* The frames of the heaviest path below node at, innermost first (written on the way back). */
static void heaviest_frames(lagscope__json_writer *w, const lagscope__call_tree *t,
                            const lagscope__report_ctx *c, uint32_t at) {
  uint32_t best = lagscope__call_tree_heaviest_child(t, at);
  if (best == LAGSCOPE__TREE_NONE) return;
  heaviest_frames(w, t, c, best);
  frame_write(w, c, t->nodes[best].frame);
}

/* From the root, the heaviest child at each level: the heaviest stack, as a text of its own
 * (the hang_ended event carries it too). A */
static char *heaviest_text(const lagscope__call_tree *t, const lagscope__report_ctx *c) {
  lagscope__json_writer w = {0};
  lagscope__jw_begin_array(&w, NULL);
  heaviest_frames(&w, t, c, 0);
  lagscope__jw_end_array(&w);
  return lagscope__jw_finish(&w);
}

/* How a stack was taken, and what its thread was doing: method, frames_scanned, and when it
 * was blocked in a system call, syscall and its raw args. */
static void capture_fields(lagscope__json_writer *w, lagscope__report_ctx *c,
                           const lagscope__stack *stack) {
  lagscope__jw_string(w, "method", lagscope__method_name(stack->method));
  lagscope__jw_u64(w, "frames_scanned", stack->frames_scanned);
  if (stack->run_state != LAGSCOPE__RUN_SYSCALL) return;
  char buf[128];
  lagscope__jw_string(w, "syscall", lagscope__report_run_state(c, stack, buf, sizeof(buf)));
  if (stack->syscall < 0) return; /* Darwin: the trap's arguments are not known */
  lagscope__jw_begin_array(w, "args");
  for (int i = 0; i < 6; i++) lagscope__jw_hex(w, NULL, stack->args[i]);
  lagscope__jw_end_array(w);
}

/* A stack's frames as the array named key, innermost first. */
static int stack_write(lagscope__json_writer *w, const char *key, lagscope__report_ctx *c,
                       const lagscope__stack *stack) {
  lagscope__jw_begin_array(w, key);
  uint32_t depth = lagscope__stack_depth(stack);
  for (uint32_t k = 0; k < depth; k++) {
    uint32_t frame;
    if (lagscope__report_ctx_resolve(c, stack->frames[k], k > 0, &frame) != 0)
      return LAGSCOPE_ENOMEM;
    frame_write(w, c, frame);
  }
  lagscope__jw_end_array(w);
  return 0;
}

static const lagscope__thread_usage *find_before(const lagscope__report_data *r, int32_t tid) {
  if (r->thread_info_before == NULL) return NULL;
  for (uint32_t i = 0; i < r->thread_count_before; i++)
    if (r->thread_info_before[i].tid == tid) return &r->thread_info_before[i];
  return NULL;
}

static int threads_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                         const lagscope__report_data *r) {
  lagscope__jw_begin_array(w, "threads");
  uint32_t written = 0;
  for (uint32_t i = 0; i < r->thread_count; i++) {
    const lagscope__stack *stack = &r->threads[i];
    const lagscope__thread_usage *info = r->thread_info != NULL ? &r->thread_info[i] : NULL;
    lagscope__jw_begin_object(w, NULL);
    int32_t tid = info != NULL ? info->tid : stack->tid;
    lagscope__jw_i64(w, "tid", tid);
    if (info != NULL) {
      char name[LAGSCOPE_THREAD_NAME_MAX];
      size_t len = strnlen(info->name, sizeof(name) - 1);
      memcpy(name, info->name, len);
      name[len] = '\0';
      lagscope__jw_string(w, "name", name);
      if (info->state != '\0') {
        char state[2] = {info->state, '\0'};
        lagscope__jw_string(w, "state", state);
      }
    }
    lagscope__jw_bool(w, "is_main", tid == r->main_tid);
    const lagscope__thread_usage *before = info != NULL ? find_before(r, tid) : NULL;
    if (before != NULL && r->thread_cpu_window_ns > 0 && info->cpu_ns >= before->cpu_ns)
      lagscope__jw_measure(w, "cpu_percent", 100.0 * (double)(info->cpu_ns - before->cpu_ns) /
                                                 (double)r->thread_cpu_window_ns);
    lagscope__jw_string(w, "walk", lagscope__walk_name(stack->walk));
    capture_fields(w, c, stack);
    if (written + lagscope__stack_depth(stack) > REPORT_MAX_THREAD_FRAMES) {
      lagscope__jw_begin_array(w, "stack");
      lagscope__jw_end_array(w);
      lagscope__jw_bool(w, "stack_omitted", 1);
    } else {
      written += lagscope__stack_depth(stack);
      if (stack_write(w, "stack", c, stack) != 0) return LAGSCOPE_ENOMEM;
    }
    lagscope__jw_end_object(w);
  }
  lagscope__jw_end_array(w);
  return 0;
}

/* ---- 2. the verdict -------------------------------------------------------------------- */

/* snprintf for sentences that may be cut at size: a cut sentence is expected, not a bug. */
__attribute__((format(printf, 3, 4))) static void put(char *out, size_t size,
                                                      const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(out, size, format, args);
  va_end(args);
}

#define CAUSE_NAMES 8      /* innermost frames whose names the classifier reads */
#define CHAIN_MAX 8        /* lock owners followed, at most */
#define PHRASE_MAX 512
#define LABEL_MAX LAGSCOPE__LABEL_MAX

/* The function names of a stack's innermost frames. */
static size_t innermost_names(lagscope__report_ctx *c, const lagscope__stack *s,
                              const char **names) {
  uint32_t n = lagscope__stack_depth(s) < CAUSE_NAMES ? lagscope__stack_depth(s) : CAUSE_NAMES;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t frame;
    names[k] = lagscope__report_ctx_resolve(c, s->frames[k], k > 0, &frame) == 0
                   ? lagscope__report_ctx_frame(c, frame)->function
                   : NULL;
  }
  return n;
}

static lagscope__cause_kind classify(lagscope__report_ctx *c, const lagscope__stack *s) {
  const char *names[CAUSE_NAMES];
  size_t n = innermost_names(c, s, names);
  return lagscope__classify_stack(s, names, n);
}

/* Is a frame in a system library (libc, the vDSO, Apple's frameworks), not the app's code? */
static int in_system_library(const lagscope__stack_frame *f) {
  static const char *const prefixes[] = {"/lib/", "/lib64/", "/usr/lib/", "linux-vdso",
                                         "/System/", "/usr/lib/system/"};
  if (f->module == NULL) return 0;
  for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
    if (strncmp(f->module, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

/* The innermost named function of the app's own code, else of any code (for "running FUNC",
 * "waiting in ... in FUNC"). */
static const char *first_function(lagscope__report_ctx *c, const lagscope__stack *s) {
  const char *any = NULL;
  for (uint32_t k = 0; k < lagscope__stack_depth(s); k++) {
    uint32_t frame;
    if (lagscope__report_ctx_resolve(c, s->frames[k], k > 0, &frame) != 0) break;
    const lagscope__stack_frame *f = lagscope__report_ctx_frame(c, frame);
    if (f->function == NULL) continue;
    if (!in_system_library(f)) return f->function;
    if (any == NULL) any = f->function;
  }
  return any != NULL ? any : "an unknown function";
}

static int thread_index(const lagscope__report_data *r, int32_t tid) {
  for (uint32_t i = 0; i < r->thread_count; i++)
    if (r->threads[i].tid == tid) return (int)i;
  return -1;
}

static const char *thread_name(const lagscope__report_data *r, int index, char *buf, size_t size) {
  if (r->thread_info == NULL || index < 0) return "?";
  size_t len = strnlen(r->thread_info[index].name, LAGSCOPE_THREAD_NAME_MAX - 1);
  snprintf(buf, size, "%.*s", (int)len, r->thread_info[index].name);
  return buf;
}

/* What a blocked stack waits on: named when it was captured (a thread at the hang's start, or
 * the main thread's last blocked call), else now. */
static void wait_target(const lagscope__report_data *r, const lagscope__stack *s, char *out,
                        size_t size) {
  if (r->thread_targets != NULL && r->threads != NULL && s >= r->threads &&
      s < r->threads + r->thread_count) {
    put(out, size, "%s", r->thread_targets + (size_t)(s - r->threads) * LAGSCOPE__TARGET_MAX);
    return;
  }
  if (s->syscall >= 0 && s->syscall == r->sample_target_syscall &&
      s->args[0] == r->sample_target_arg) {
    put(out, size, "%s", r->sample_target);
    return;
  }
  lagscope__describe_wait_target(s, out, size);
}

/* The index in r of the thread whose system id (the id Darwin's mutexes record) is id. */
static int thread_index_by_system_id(const lagscope__report_data *r, uint64_t id) {
  for (uint32_t i = 0; r->thread_info != NULL && i < r->thread_count; i++)
    if (r->thread_info[i].system_id == id) return (int)i;
  return -1;
}

/* The lock a thread waits for: its address, and the index in r of its owner when that is a
 * thread of this capture (-1 otherwise). Linux: the futex word and the owner glibc's mutex
 * recorded when captured; Darwin: the trap's arguments. */
static int lock_of(lagscope__report_ctx *c, const lagscope__report_data *r,
                   const lagscope__stack *s, uintptr_t *address) {
  if (s->syscall >= 0) {
    *address = s->args[0];
    return s->lock_owner > 0 ? thread_index(r, s->lock_owner) : -1;
  }
  const char *names[CAUSE_NAMES];
  uint64_t owner;
  int is_port;
  if (innermost_names(c, s, names) == 0 ||
      !lagscope__darwin_lock_wait(names[0], s->args, address, &owner, &is_port) || owner == 0)
    return -1;
  return is_port ? thread_index(r, (int32_t)owner) : thread_index_by_system_id(r, owner);
}

static int owner_index(lagscope__report_ctx *c, const lagscope__report_data *r,
                       const lagscope__stack *s) {
  uintptr_t address;
  return lock_of(c, r, s, &address);
}

static uintptr_t lock_address(lagscope__report_ctx *c, const lagscope__report_data *r,
                              const lagscope__stack *s) {
  uintptr_t address = 0;
  lock_of(c, r, s, &address);
  return address;
}

/* What a thread is doing, as the end of a sentence: "blocked in read() on pipe:[8812]"; for a
 * lock, its owner and what the owner does, `left` owners deep. */
static void phrase(lagscope__report_ctx *c, const lagscope__report_data *r,
                   const lagscope__stack *s, int left, char *out, size_t size) {
  char call[128], target[LAGSCOPE__TARGET_MAX];
  lagscope__cause_kind kind = classify(c, s);
  const char *name = lagscope__report_run_state(c, s, call, sizeof(call));
  wait_target(r, s, target, sizeof(target));
  const char *on = target[0] != '\0' ? " on " : "";
  switch (kind) {
    case LAGSCOPE__CAUSE_CPU: put(out, size, "running %s", first_function(c, s)); break;
    case LAGSCOPE__CAUSE_IO: put(out, size, "blocked in %s()%s%s", name, on, target); break;
    case LAGSCOPE__CAUSE_SLEEP: put(out, size, "sleeping in %s()", name); break;
    case LAGSCOPE__CAUSE_LOCK: {
      uintptr_t mutex = 0;
      int owner = lock_of(c, r, s, &mutex);
      if (owner < 0 || left <= 0) {
        put(out, size, "waiting for mutex 0x%" PRIxPTR, mutex);
        break;
      }
      char who[LAGSCOPE_THREAD_NAME_MAX + 8], rest[PHRASE_MAX];
      phrase(c, r, &r->threads[owner], left - 1, rest, sizeof(rest));
      put(out, size, "waiting for mutex 0x%" PRIxPTR " held by %s (tid %d), %s", mutex,
               thread_name(r, owner, who, sizeof(who)), (int)r->threads[owner].tid, rest);
      break;
    }
    case LAGSCOPE__CAUSE_WAIT: put(out, size, "waiting in %s() in %s", name,
                                        first_function(c, s)); break;
    case LAGSCOPE__CAUSE_IDLE: put(out, size, "idle in its event loop (%s)", name); break;
    default: put(out, size, "in an unknown state"); break;
  }
}

/* One thread's cause fields (its kind when with_kind), following the lock owner while there is
 * one, up to `left` more. */
static void thread_cause_fields(lagscope__json_writer *w, lagscope__report_ctx *c,
                                const lagscope__report_data *r, int index, int left,
                                int with_kind) {
  const lagscope__stack *s = &r->threads[index];
  lagscope__cause_kind kind = classify(c, s);
  if (with_kind) lagscope__jw_string(w, "kind", lagscope__cause_kind_name(kind));
  char buf[PHRASE_MAX], call[128];
  if (s->run_state == LAGSCOPE__RUN_SYSCALL)
    lagscope__jw_string(w, "syscall", lagscope__report_run_state(c, s, call, sizeof(call)));
  wait_target(r, s, buf, sizeof(buf));
  if (buf[0] != '\0') lagscope__jw_string(w, "target", buf);
  uintptr_t mutex = 0;
  int owner = kind == LAGSCOPE__CAUSE_LOCK ? lock_of(c, r, s, &mutex) : -1;
  if (kind == LAGSCOPE__CAUSE_LOCK && mutex != 0) lagscope__jw_hex(w, "mutex", mutex);
  if (owner >= 0 && left > 0) {
    lagscope__jw_begin_object(w, "owner");
    lagscope__jw_i64(w, "tid", r->threads[owner].tid);
    lagscope__jw_string(w, "name", thread_name(r, owner, buf, sizeof(buf)));
    stack_write(w, "stack", c, &r->threads[owner]);
    lagscope__jw_begin_object(w, "cause");
    thread_cause_fields(w, c, r, owner, left - 1, 1);
    lagscope__jw_end_object(w);
    lagscope__jw_end_object(w);
  }
}

/* The lock chain from thread `index`: the tids in order, and whether it comes back to one of
 * them (a deadlock: *cycle_from is where the cycle starts). */
static int lock_chain(lagscope__report_ctx *c, const lagscope__report_data *r, int index,
                      int *chain, int *cycle_from) {
  int n = 0;
  *cycle_from = -1;
  while (index >= 0 && n < CHAIN_MAX) {
    for (int i = 0; i < n; i++)
      if (chain[i] == index) {
        *cycle_from = i;
        return n;
      }
    chain[n++] = index;
    if (classify(c, &r->threads[index]) != LAGSCOPE__CAUSE_LOCK) break;
    index = owner_index(c, r, &r->threads[index]);
  }
  return n;
}

typedef struct share {
  int kind;
  uint32_t count;
} share;

static int by_share(const void *a, const void *b) {
  const share *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->kind - y->kind;
}

static void summary_sentence(lagscope__report_ctx *c, const lagscope__report_data *r,
                             int main_index, lagscope__cause_kind kind, double ms,
                             const lagscope__stack *main, char *out, size_t size) {
  char what[PHRASE_MAX], name[LAGSCOPE_THREAD_NAME_MAX + 8];
  int owner = main_index >= 0 ? owner_index(c, r, &r->threads[main_index]) : -1;
  switch (kind) {
    case LAGSCOPE__CAUSE_LOCK:
      if (owner < 0) {
        put(out, size, "Waited %.0f ms for mutex 0x%" PRIxPTR " (its owner is not known)",
                 ms, lock_address(c, r, main));
        return;
      }
      phrase(c, r, &r->threads[owner], 3, what, sizeof(what));
      put(out, size, "Waited %.0f ms for mutex 0x%" PRIxPTR
               " held by thread %s (tid %d), itself %s", ms, lock_address(c, r, main),
               thread_name(r, owner, name, sizeof(name)), (int)r->threads[owner].tid, what);
      return;
    case LAGSCOPE__CAUSE_CPU: put(out, size, "On the CPU for %.0f ms in %s", ms,
                                       first_function(c, main)); return;
    case LAGSCOPE__CAUSE_IO: {
      char call[128], target[LAGSCOPE__TARGET_MAX];
      const char *call_name = lagscope__report_run_state(c, main, call, sizeof(call));
      wait_target(r, main, target, sizeof(target));
      put(out, size, "Blocked %.0f ms in %s()%s%s", ms, call_name,
               target[0] != '\0' ? " on " : "", target);
      return;
    }
    case LAGSCOPE__CAUSE_SLEEP: phrase(c, r, main, 0, what, sizeof(what));
      put(out, size, "Slept %.0f ms (%s)", ms, what); return;
    case LAGSCOPE__CAUSE_WAIT: phrase(c, r, main, 0, what, sizeof(what));
      put(out, size, "Waited %.0f ms, %s", ms, what); return;
    case LAGSCOPE__CAUSE_IDLE: put(out, size, "Idle in its own event loop for %.0f ms: the "
                                        "loop did not run lagscope's ping", ms); return;
    default: put(out, size, "Not known why: no stack of the main thread says (%.0f ms)", ms);
  }
}

static void deadlock_sentence(lagscope__report_ctx *c, const lagscope__report_data *r,
                              const int *chain, int n, int from, char *out, size_t size) {
  put(out, size, "Deadlock:");
  char name[LAGSCOPE_THREAD_NAME_MAX + 8], holder[LAGSCOPE_THREAD_NAME_MAX + 8];
  for (int i = from; i < n; i++) {
    const lagscope__stack *s = &r->threads[chain[i]];
    int next = chain[i + 1 < n ? i + 1 : from];
    size_t len = strlen(out);
    put(out + len, size - len, "%s thread %s (tid %d) waits for mutex 0x%" PRIxPTR
        " held by %s (tid %d)", i > from ? ";" : "", thread_name(r, chain[i], name, sizeof(name)),
        (int)s->tid, lock_address(c, r, s), thread_name(r, next, holder, sizeof(holder)),
        (int)r->threads[next].tid);
  }
}

/* The hang's label: its kind and, in a few words, what it waited for ("lock · keeper",
 * "io · read /data/app.db", "cpu · parse_config"). The one rule for every place that names a
 * hang in a line: the viewer's list, the HUD, lagscope-run's summary. */
static void label_text(lagscope__report_ctx *c, const lagscope__report_data *r, int main_index,
                       lagscope__cause_kind kind, const lagscope__stack *main,
                       const char *telling, char *out, size_t size) {
  /* Where the time went: the heaviest stack's telling function (the list's "function"), else
   * the one stack's innermost function outside the system's libraries. */
  const char *where = telling != NULL ? telling : main != NULL ? first_function(c, main) : "";
  const char *kind_name = lagscope__cause_kind_name(kind);
  char name[LAGSCOPE_THREAD_NAME_MAX + 8], call[128], target[LAGSCOPE__TARGET_MAX];
  int owner = main_index >= 0 ? owner_index(c, r, &r->threads[main_index]) : -1;
  if (main == NULL) {
    put(out, size, "%s", kind_name);
  } else if (kind == LAGSCOPE__CAUSE_LOCK && owner >= 0) {
    put(out, size, "lock · %s", thread_name(r, owner, name, sizeof(name)));
  } else if (kind == LAGSCOPE__CAUSE_LOCK) {
    put(out, size, "lock · mutex 0x%" PRIxPTR, lock_address(c, r, main));
  } else if (kind == LAGSCOPE__CAUSE_IO) {
    wait_target(r, main, target, sizeof(target));
    put(out, size, "io · %s%s%s", lagscope__report_run_state(c, main, call, sizeof(call)),
        target[0] != '\0' ? " " : "", target);
  } else if (kind == LAGSCOPE__CAUSE_IDLE) {
    put(out, size, "idle · event loop");
  } else if (kind == LAGSCOPE__CAUSE_UNKNOWN) {
    put(out, size, "unknown · %s", where);
  } else {
    put(out, size, "%s · %s", kind_name, where);
  }
}

/* A deadlock's label: the threads of its cycle ("deadlock · main, keeper"). */
static void deadlock_label(const lagscope__report_data *r, const int *chain, int n, int from,
                           char *out, size_t size) {
  put(out, size, "deadlock ·");
  char name[LAGSCOPE_THREAD_NAME_MAX + 8];
  for (int i = from; i < n; i++) {
    size_t len = strlen(out);
    put(out + len, size - len, "%s %s", i > from ? "," : "",
        thread_name(r, chain[i], name, sizeof(name)));
  }
}

/* The verdict: the main thread's samples by kind (its share of each), the dominant one with
 * what it waited on and, for a lock, the owners' chain from the capture of every thread at the
 * hang's start; a chain that comes back on itself is a deadlock. */
typedef struct verdict {
  share shares[LAGSCOPE__CAUSE_COUNT]; /* heaviest first */
  uint32_t total;                      /* samples classified */
  lagscope__cause_kind kind;
  double share;                        /* of kind */
  const lagscope__stack *main;         /* the main thread's stack the details come from */
  int main_index;                      /* main's index in r->threads; -1: a sample */
  int chain[CHAIN_MAX], chain_len, cycle_from; /* the lock owners; cycle_from >= 0: deadlock */
  char summary[1024], label[LABEL_MAX];
} verdict;

/* telling: the heaviest stack's telling function (names a cpu, sleep or wait hang in the
 * label); NULL when not known. */
static void verdict_make(lagscope__report_ctx *c, const lagscope__report_data *r,
                         const char *telling, verdict *v) {
  uint32_t counts[LAGSCOPE__CAUSE_COUNT] = {0};
  const lagscope__stack *last_of[LAGSCOPE__CAUSE_COUNT] = {0};
  for (uint32_t i = 0; i < r->sample_count; i++) {
    lagscope__cause_kind k = classify(c, &r->samples[i]);
    counts[k]++;
    last_of[k] = &r->samples[i];
  }
  v->main_index = thread_index(r, r->main_tid);
  const lagscope__stack *at_start = v->main_index >= 0 ? &r->threads[v->main_index] : NULL;
  v->total = r->sample_count;
  if (v->total == 0 && at_start != NULL) { /* no sample yet: the capture at the start says */
    lagscope__cause_kind k = classify(c, at_start);
    counts[k] = v->total = 1;
    last_of[k] = at_start;
  }
  for (int k = 0; k < LAGSCOPE__CAUSE_COUNT; k++) v->shares[k] = (share){k, counts[k]};
  lagscope__sort(v->shares, LAGSCOPE__CAUSE_COUNT, sizeof(share), by_share);
  v->kind = v->total > 0 ? (lagscope__cause_kind)v->shares[0].kind : LAGSCOPE__CAUSE_UNKNOWN;
  v->share = v->total > 0 ? (double)v->shares[0].count / v->total : 0.0;
  /* The details: from the capture at the start when it shows the same (the other threads are
   * of that moment), else from the last sample of the kind. */
  v->main = at_start != NULL && classify(c, at_start) == v->kind ? at_start : last_of[v->kind];
  if (v->main != at_start) v->main_index = -1;
  v->chain_len = 0;
  v->cycle_from = -1;
  if (v->kind == LAGSCOPE__CAUSE_LOCK && v->main_index >= 0)
    v->chain_len = lock_chain(c, r, v->main_index, v->chain, &v->cycle_from);
  double ms = (double)r->duration_ns / 1e6 * v->share;
  if (v->cycle_from >= 0) {
    deadlock_sentence(c, r, v->chain, v->chain_len, v->cycle_from, v->summary,
                      sizeof(v->summary));
    deadlock_label(r, v->chain, v->chain_len, v->cycle_from, v->label, sizeof(v->label));
    return;
  }
  if (v->main != NULL)
    summary_sentence(c, r, v->main_index, v->kind, ms, v->main, v->summary, sizeof(v->summary));
  else
    put(v->summary, sizeof(v->summary), "Not known why: no stack of the main thread says");
  label_text(c, r, v->main_index, v->kind, v->main, telling, v->label, sizeof(v->label));
}

static const char *verdict_kind(const verdict *v) {
  return v->cycle_from >= 0 ? "deadlock" : lagscope__cause_kind_name(v->kind);
}

/* The report's "cause": the verdict and the main thread's details (syscall, target, mutex,
 * owner), the cycle of a deadlock, and every kind's share. */
static void cause_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                        const lagscope__report_data *r, const verdict *v) {
  lagscope__jw_begin_object(w, "cause");
  lagscope__jw_string(w, "kind", verdict_kind(v));
  lagscope__jw_measure(w, "share", v->share);
  lagscope__jw_string(w, "summary", v->summary);
  lagscope__jw_string(w, "label", v->label);
  if (v->main_index >= 0) {
    thread_cause_fields(w, c, r, v->main_index, CHAIN_MAX, 0);
  } else if (v->main != NULL && v->main->run_state == LAGSCOPE__RUN_SYSCALL) {
    char call[128], target[256];
    lagscope__jw_string(w, "syscall", lagscope__report_run_state(c, v->main, call, sizeof(call)));
    wait_target(r, v->main, target, sizeof(target));
    if (target[0] != '\0') lagscope__jw_string(w, "target", target);
  }
  if (v->cycle_from >= 0) {
    lagscope__jw_begin_array(w, "cycle");
    for (int i = v->cycle_from; i < v->chain_len; i++)
      lagscope__jw_i64(w, NULL, r->threads[v->chain[i]].tid);
    lagscope__jw_end_array(w);
  }
  lagscope__jw_begin_array(w, "causes");
  for (int k = 0; k < LAGSCOPE__CAUSE_COUNT && v->shares[k].count > 0; k++) {
    lagscope__jw_begin_object(w, NULL);
    lagscope__jw_string(w, "kind", lagscope__cause_kind_name(v->shares[k].kind));
    lagscope__jw_measure(w, "share", (double)v->shares[k].count / v->total);
    lagscope__jw_end_object(w);
  }
  lagscope__jw_end_array(w);
  lagscope__jw_end_object(w);
}

/* ---- 3. the report ---------------------------------------------------------------------- */

/* The telling function of a heaviest stack's text, copied into out; NULL when none. F */
static const char *telling_of(const char *heaviest_json, char *out, size_t size) {
  return lagscope__report_telling_function(heaviest_json, out, size) ? out : NULL;
}

static void memory_write(lagscope__json_writer *w, const char *key, const lagscope_metrics *m) {
  lagscope__jw_begin_object(w, key);
  lagscope__jw_u64(w, "rss_bytes", m->rss_bytes);
  lagscope__jw_u64(w, "pss_bytes", m->pss_bytes);
  lagscope__jw_end_object(w);
}

static void frames_write(lagscope__json_writer *w, const char *key, const lagscope_metrics *m) {
  lagscope__jw_begin_object(w, key);
  lagscope__jw_measure(w, "fps", m->frames.fps);
  lagscope__jw_measure(w, "hitch_ms_per_s", m->frames.hitch_ms_per_s);
  lagscope__jw_string(w, "hitch_band", lagscope_hitch_band_name(m->frames.band));
  lagscope__jw_u64(w, "dropped", m->frames.dropped);
  lagscope__jw_end_object(w);
}

static void metrics_write(lagscope__json_writer *w, const lagscope__report_data *r) {
  lagscope__jw_begin_object(w, "cpu");
  lagscope__jw_measure(w, "before", r->before.cpu_percent);
  if (r->have_during) lagscope__jw_measure(w, "during", r->during.cpu_percent);
  else lagscope__jw_null(w, "during");
  lagscope__jw_end_object(w);

  lagscope__jw_begin_object(w, "memory");
  memory_write(w, "before", &r->before);
  if (r->have_during) memory_write(w, "during", &r->during);
  else lagscope__jw_null(w, "during");
  lagscope__jw_end_object(w);

  lagscope__jw_begin_object(w, "frames");
  frames_write(w, "before", &r->before);
  if (r->have_during) frames_write(w, "during", &r->during);
  else lagscope__jw_null(w, "during");
  lagscope__jw_end_object(w);
}

/* The samples in time order: when each was taken (ms since the hang's start), the call tree
 * node its stack ended at, so that exports can replay the stacks over time, and what the
 * main thread was doing ("cpu" or the system call it waited in). */
static void timeline_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                           const lagscope__call_tree *t, const lagscope__report_data *r) {
  lagscope__jw_begin_object(w, "timeline");
  lagscope__jw_begin_array(w, "t_ms");
  for (uint32_t s = 0; s < r->sample_count; s++) {
    uint64_t at = r->samples[s].time_ns, start = r->start_ns;
    lagscope__jw_measure(w, NULL, at > start ? (double)(at - start) / 1e6 : 0.0);
  }
  lagscope__jw_end_array(w);
  lagscope__jw_begin_array(w, "node");
  for (uint32_t s = 0; s < r->sample_count; s++)
    lagscope__jw_u64(w, NULL, t->written_id[t->sample_end[s]]);
  lagscope__jw_end_array(w);
  lagscope__jw_begin_array(w, "state");
  for (uint32_t s = 0; s < r->sample_count; s++) {
    char buf[128];
    lagscope__jw_string(w, NULL, lagscope__report_run_state(c, &r->samples[s], buf, sizeof(buf)));
  }
  lagscope__jw_end_array(w);
  lagscope__jw_end_object(w);
}

static void samples_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                          const lagscope__call_tree *t, const lagscope__report_data *r) {
  lagscope__jw_begin_object(w, "samples");
  lagscope__jw_u64(w, "count", r->sample_count);
  lagscope__jw_u64(w, "dropped", r->samples_dropped);
  uint32_t walks[LAGSCOPE__WALK_COUNT] = {0};
  for (uint32_t s = 0; s < r->sample_count; s++)
    if ((unsigned)r->samples[s].walk < LAGSCOPE__WALK_COUNT) walks[r->samples[s].walk]++;
  lagscope__jw_begin_object(w, "walks");
  for (int k = 0; k < LAGSCOPE__WALK_COUNT; k++)
    if (walks[k] > 0) lagscope__jw_u64(w, lagscope__walk_name(k), walks[k]);
  lagscope__jw_end_object(w);
  uint32_t methods[LAGSCOPE__METHOD_COUNT] = {0};
  uint64_t scanned = 0;
  for (uint32_t s = 0; s < r->sample_count; s++) {
    if (r->samples[s].method < LAGSCOPE__METHOD_COUNT) methods[r->samples[s].method]++;
    scanned += r->samples[s].frames_scanned;
  }
  lagscope__jw_begin_object(w, "methods");
  for (int m = 0; m < LAGSCOPE__METHOD_COUNT; m++)
    if (methods[m] > 0) lagscope__jw_u64(w, lagscope__method_name(m), methods[m]);
  lagscope__jw_end_object(w);
  lagscope__jw_u64(w, "frames_scanned", scanned);
  timeline_write(w, c, t, r);
  lagscope__jw_end_object(w);
}

static void report_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                         const lagscope__call_tree *t, const lagscope__report_data *r,
                         const char *heaviest, const verdict *v, int *rc) {
  /* Whether the hang counts goes third, after the id, where the store reads it with the
   * header (to evict idle hangs' reports first). */
  int idle = v->cycle_from < 0 && v->kind == LAGSCOPE__CAUSE_IDLE;
  lagscope__jw_begin_object(w, NULL);
  lagscope__jw_u64(w, "schema_version", LAGSCOPE__REPORT_SCHEMA_VERSION);
  char id[sizeof(r->id)];
  size_t id_len = strnlen(r->id, sizeof(id) - 1);
  memcpy(id, r->id, id_len);
  id[id_len] = '\0';
  lagscope__jw_string(w, "id", id);
  lagscope__jw_bool(w, "counted", !idle || r->count_idle);
  lagscope__jw_u64(w, "hang_id", r->hang_id);
  lagscope__jw_string(w, "state", lagscope__report_state_name((int)r->state));
  lagscope__jw_string(w, "lagscope_version", LAGSCOPE_VERSION_STRING);
  lagscope__jw_begin_object(w, "app");
  lagscope__jw_string(w, "name", r->app_name);
  lagscope__jw_i64(w, "pid", r->pid);
  lagscope__jw_end_object(w);
  lagscope__jw_begin_object(w, "start");
  lagscope__jw_i64(w, "wall_ms", r->start_wall_ms);
  lagscope__jw_u64(w, "monotonic_ns", r->start_ns);
  lagscope__jw_end_object(w);
  lagscope__jw_measure(w, "duration_ms", (double)r->duration_ns / 1e6);
  lagscope__jw_u64(w, "duration_ns", r->duration_ns);
  lagscope__jw_u64(w, "threshold_ms", r->threshold_ms);
  lagscope__jw_u64(w, "sample_interval_ms", r->sample_interval_ms);
  samples_write(w, c, t, r);
  tree_write(w, t, c);
  lagscope__jw_raw(w, "heaviest_stack", heaviest);
  cause_write(w, c, r, v);
  lagscope__jw_i64(w, "main_thread_tid", r->main_tid);
  lagscope__jw_u64(w, "thread_count", r->thread_count);
  *rc = threads_write(w, c, r);
  metrics_write(w, r);
  lagscope__jw_end_object(w);
}

static int report_build(const lagscope__report_data *r, lagscope__report_ctx *c,
                        lagscope__call_tree *t, char **report_json, char **heaviest_stack_json) {
  int rc = lagscope__call_tree_build(t, c, r);
  if (rc == 0) rc = lagscope__call_tree_order(t);
  if (rc != 0) return rc;
  char *heaviest = heaviest_text(t, c);
  if (heaviest == NULL) return LAGSCOPE_ENOMEM;
  if (report_json != NULL) {
    verdict *v = lagscope__alloc(sizeof(*v));
    char telling[256];
    lagscope__json_writer w = {0};
    rc = LAGSCOPE_ENOMEM;
    if (v != NULL) {
      verdict_make(c, r, telling_of(heaviest, telling, sizeof(telling)), v);
      report_write(&w, c, t, r, heaviest, v, &rc);
    }
    lagscope__dealloc(v);
    *report_json = rc == 0 ? lagscope__jw_finish(&w) : NULL;
    lagscope__jw_discard(&w);
    if (rc == 0 && *report_json == NULL) rc = LAGSCOPE_ENOMEM;
  }
  if (rc == 0 && heaviest_stack_json != NULL) *heaviest_stack_json = heaviest;
  else lagscope__dealloc(heaviest);
  return rc;
}

int lagscope__report_json(const lagscope__report_data *r, lagscope__resolve_fn resolve,
                          void *ctx, char **report_json, char **heaviest_stack_json) {
  if (report_json != NULL) *report_json = NULL;
  if (heaviest_stack_json != NULL) *heaviest_stack_json = NULL;
  if (r == NULL || lagscope__report_state_name((int)r->state) == NULL) return LAGSCOPE_EINVAL;
  if ((r->samples == NULL && r->sample_count > 0) || (r->threads == NULL && r->thread_count > 0))
    return LAGSCOPE_EINVAL;
  if (report_json == NULL && heaviest_stack_json == NULL) return 0;

  lagscope__report_ctx c;
  lagscope__call_tree t = {0};
  int rc = lagscope__report_ctx_init(&c, resolve, ctx);
  if (rc == 0) rc = report_build(r, &c, &t, report_json, heaviest_stack_json);
  lagscope__call_tree_free(&t);
  lagscope__report_ctx_free(&c);
  return rc;
}

/* The writer's text into *out when rc is 0 and nothing failed; the code. A */
static int finish(lagscope__json_writer *w, int rc, char **out) {
  *out = rc == 0 ? lagscope__jw_finish(w) : NULL;
  lagscope__jw_discard(w);
  return rc != 0 ? rc : *out != NULL ? LAGSCOPE_OK : LAGSCOPE_ENOMEM;
}

int lagscope__report_threads_json(const lagscope__report_data *r, lagscope__resolve_fn resolve,
                                  void *ctx, char **out) {
  *out = NULL;
  if (r == NULL || (r->threads == NULL && r->thread_count > 0)) return LAGSCOPE_EINVAL;
  lagscope__report_ctx c;
  lagscope__json_writer w = {0};
  int rc = lagscope__report_ctx_init(&c, resolve, ctx);
  if (rc == 0) {
    lagscope__jw_begin_object(&w, NULL);
    lagscope__jw_i64(&w, "wall_ms", r->start_wall_ms);
    lagscope__jw_measure(&w, "duration_ms", (double)r->duration_ns / 1e6);
    lagscope__jw_i64(&w, "main_thread_tid", r->main_tid);
    lagscope__jw_u64(&w, "thread_count", r->thread_count);
    rc = threads_write(&w, &c, r);
    lagscope__jw_end_object(&w);
  }
  lagscope__report_ctx_free(&c);
  return finish(&w, rc, out);
}

int lagscope__report_stack_json(const lagscope__stack *stack, lagscope__resolve_fn resolve,
                                void *ctx, char **out) {
  *out = NULL;
  lagscope__report_ctx c;
  lagscope__json_writer w = {0};
  int rc = lagscope__report_ctx_init(&c, resolve, ctx);
  if (rc == 0) rc = stack_write(&w, NULL, &c, stack);
  lagscope__report_ctx_free(&c);
  return finish(&w, rc, out);
}

int lagscope__report_cause_json(const lagscope__report_data *r, const char *heaviest_json,
                                lagscope__resolve_fn resolve, void *ctx, char **out) {
  *out = NULL;
  if (r == NULL || (r->samples == NULL && r->sample_count > 0) ||
      (r->threads == NULL && r->thread_count > 0))
    return LAGSCOPE_EINVAL;
  lagscope__report_ctx c;
  lagscope__json_writer w = {0};
  verdict *v = lagscope__alloc(sizeof(*v));
  int rc = v != NULL ? lagscope__report_ctx_init(&c, resolve, ctx) : LAGSCOPE_ENOMEM;
  if (rc == 0) {
    char telling[256];
    verdict_make(&c, r, telling_of(heaviest_json, telling, sizeof(telling)), v);
    lagscope__jw_begin_object(&w, NULL);
    lagscope__jw_string(&w, "kind", verdict_kind(v));
    lagscope__jw_string(&w, "summary", v->summary);
    lagscope__jw_string(&w, "label", v->label);
    lagscope__jw_end_object(&w);
    lagscope__report_ctx_free(&c);
  }
  lagscope__dealloc(v);
  return finish(&w, rc, out);
}

/* ---- 4. the telling frame of a stack (the hang list, hitches, the HUD) ------------------ */

static int is_string(const char *s, lagscope__json_span v) {
  return v.end > v.start && s[v.start] == '"';
}

static int same_bytes(const char *s, lagscope__json_span a, lagscope__json_span b) {
  return a.end - a.start == b.end - b.start && memcmp(s + a.start, s + b.start, a.end - a.start) == 0;
}

/* Names are compared as they were written: lagscope's writer puts the same name in the same
 * bytes. */
int lagscope__report_telling_frame(const char *stack, size_t n, lagscope__json_span *frame) {
  lagscope__json_span element, first = {0, 0}, named = {0, 0}, app = {0, 0};
  size_t at = 0;
  while (lagscope__json_next_element(stack, n, &at, &element)) {
    if (first.end == 0) first = element;
    lagscope__json_span function = lagscope__json_member_span(stack, element, "function");
    if (!is_string(stack, function)) continue;
    if (named.end == 0) named = element;
    if (function.end - function.start == 6 && memcmp(stack + function.start, "\"main\"", 6) == 0)
      app = lagscope__json_member_span(stack, element, "module"); /* the outermost main's */
  }
  if (is_string(stack, app)) {
    at = 0;
    while (lagscope__json_next_element(stack, n, &at, &element))
      if (is_string(stack, lagscope__json_member_span(stack, element, "function")) &&
          same_bytes(stack, lagscope__json_member_span(stack, element, "module"), app)) {
        *frame = element;
        return 1;
      }
  }
  *frame = named.end != 0 ? named : first;
  return frame->end != 0;
}

int lagscope__report_telling_function(const char *stack, char *out, size_t size) {
  out[0] = '\0';
  lagscope__json_span frame;
  if (stack == NULL || !lagscope__report_telling_frame(stack, strlen(stack), &frame)) return 0;
  return lagscope__json_member_text(stack + frame.start, frame.end - frame.start, "function", out,
                                    size);
}
