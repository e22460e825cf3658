/* A hang's verdict: why the main thread did not answer. Its samples classified one by one
 * (cause.c), the dominant kind with what it waited on, and for a lock the chain of owners from
 * the capture of every thread at the hang's start, a chain that comes back on itself being a
 * deadlock; said as a sentence (summary), a few words (label) and the report's "cause" member.
 * Shared with report_json.c through verdict.h; the phases are found and written in phases.c.
 *
 * Contents:
 *   1. a stack's kind and where it was
 *   2. threads: names, what they wait on, lock owners and chains
 *   3. sentences and labels
 *   4. the verdict (its phases: phases.c)
 *   5. the report's "cause"
 *
 * Memory: nothing of its own; the frame cache it resolves through may grow (lagscope__alloc).
 * Sentences and labels are cut to the verdict's fixed buffers. */
#define _POSIX_C_SOURCE 200809L

#include "report/verdict.h"
#include "report/call_tree.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* snprintf for sentences that may be cut at size: a cut sentence is expected, not a bug. */
__attribute__((format(printf, 3, 4))) static void put(char *out, size_t size,
                                                      const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(out, size, format, args);
  va_end(args);
}

#define CAUSE_NAMES 8      /* innermost frames whose names the classifier reads */
#define CHAIN_MAX LAGSCOPE__VERDICT_CHAIN_MAX
#define PHRASE_MAX 512

/* ---- 1. a stack's kind and where it was ----------------------------------------------------- */

/* The function names of a stack's innermost frames, and the images they are in (modules may
 * be NULL: not wanted). */
static size_t innermost_frames(lagscope__report_ctx *c, const lagscope__stack *s,
                               const char **names, const char **modules) {
  uint32_t n = lagscope__stack_depth(s) < CAUSE_NAMES ? lagscope__stack_depth(s) : CAUSE_NAMES;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t frame;
    const lagscope__stack_frame *f = lagscope__report_ctx_resolve(c, s->frames[k], k > 0, &frame) == 0
                                         ? lagscope__report_ctx_entry(c, frame)
                                         : NULL;
    names[k] = f != NULL ? f->function : NULL;
    if (modules != NULL) modules[k] = f != NULL ? f->module : NULL;
  }
  return n;
}

static size_t innermost_names(lagscope__report_ctx *c, const lagscope__stack *s,
                              const char **names) {
  return innermost_frames(c, s, names, NULL);
}

/* Darwin's trap: the innermost frame's name; NULL on Linux (a number) or when nameless. */
static const char *darwin_trap(lagscope__report_ctx *c, const lagscope__stack *s) {
  const char *names[CAUSE_NAMES];
  return s->syscall < 0 && innermost_names(c, s, names) > 0 ? names[0] : NULL;
}

lagscope__cause_kind lagscope__verdict_classify(lagscope__report_ctx *c, const lagscope__stack *s) {
  const char *names[CAUSE_NAMES], *modules[CAUSE_NAMES];
  lagscope__frame_names f = {names, modules, innermost_frames(c, s, names, modules)};
  return lagscope__classify_stack(s, &f);
}

/* Where a stack was in the app's code, by the rule every place that names "your code" shares
 * (port.h's lagscope__code; the report's telling frame): its innermost frame of the app's
 * code, by name, or as "module+0xoffset" when the app is stripped (never skipped for an outer
 * named frame); else its innermost named frame that is not lagscope's. buf holds a made name. */
#define FUNCTION_TEXT_MAX 256
const char *lagscope__verdict_app_function(lagscope__report_ctx *c, const lagscope__stack *s,
                                           char *buf, size_t size) {
  const char *any = NULL;
  for (uint32_t k = 0; k < lagscope__stack_depth(s); k++) {
    uint32_t frame;
    if (lagscope__report_ctx_resolve(c, s->frames[k], k > 0, &frame) != 0) break;
    const lagscope__stack_frame *f = lagscope__report_ctx_entry(c, frame);
    if (f->code == LAGSCOPE__CODE_APP && f->function != NULL) return f->function;
    if (f->code == LAGSCOPE__CODE_APP && f->module != NULL) {
      const char *slash = strrchr(f->module, '/');
      put(buf, size, "%s+0x%" PRIxPTR, slash != NULL ? slash + 1 : f->module, f->module_offset);
      return buf;
    }
    if (any == NULL && f->function != NULL && f->code != LAGSCOPE__CODE_LAGSCOPE) any = f->function;
  }
  return any != NULL ? any : "an unknown function";
}

/* ---- 2. threads: names, what they wait on, lock owners and chains --------------------------- */

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
 * a blocked call of the main thread's samples), else now; on Darwin, the fd its trap's
 * arguments name. */
void lagscope__verdict_wait_target(lagscope__report_ctx *c, const lagscope__report_data *r,
                                   const lagscope__stack *s, char *out, size_t size) {
  if (r->thread_targets != NULL && r->threads != NULL && s >= r->threads &&
      s < r->threads + r->thread_count) {
    put(out, size, "%s", r->thread_targets + (size_t)(s - r->threads) * LAGSCOPE__TARGET_MAX);
    if (out[0] != '\0' || s->syscall >= 0) return; /* never described again later */
  }
  for (uint32_t i = 0; s->syscall >= 0 && i < r->sample_target_count; i++) {
    const lagscope__report_target *t = &r->sample_targets[i];
    if (t->syscall == s->syscall && t->arg == s->args[0]) {
      put(out, size, "%s", t->text);
      return;
    }
  }
  if (s->syscall < 0 && s->run_state == LAGSCOPE__RUN_SYSCALL) {
    lagscope__darwin_io_target(darwin_trap(c, s), s->args, out, size);
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

/* Darwin: a dispatch_sync on a workloop-based queue, its queue (kevent_id's first argument)
 * and the index in r of the thread draining it (the capture read it from the workloop's
 * kevent: lock_owner, a port); -1 when not such a wait or not known. */
static int queue_owner(lagscope__report_ctx *c, const lagscope__report_data *r,
                       const lagscope__stack *s, uintptr_t *queue) {
  *queue = 0;
  if (s->run_state != LAGSCOPE__RUN_SYSCALL || !lagscope__darwin_queue_wait(darwin_trap(c, s)))
    return -1;
  *queue = s->args[0];
  return s->lock_owner != 0 ? thread_index(r, s->lock_owner) : -1;
}

/* "mutex", or Darwin's "rwlock". */
static const char *lock_noun(lagscope__report_ctx *c, const lagscope__stack *s) {
  return lagscope__darwin_lock_noun(darwin_trap(c, s));
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
    if (lagscope__verdict_classify(c, &r->threads[index]) != LAGSCOPE__CAUSE_LOCK) break;
    index = owner_index(c, r, &r->threads[index]);
  }
  return n;
}

/* ---- 3. sentences and labels ---------------------------------------------------------------- */

static void phrase(lagscope__report_ctx *c, const lagscope__report_data *r,
                   const lagscope__stack *s, int left, char *out, size_t size);

/* "waiting in __ulock_wait() in load_feed", and what for where its frames say (Darwin); a
 * workloop queue's sync wait with the queue and, `left` deep, the thread draining it. */
static void wait_phrase(lagscope__report_ctx *c, const lagscope__report_data *r,
                        const lagscope__stack *s, const char *call, int left, char *out,
                        size_t size) {
  char fn[FUNCTION_TEXT_MAX], queue_text[64] = "";
  const char *names[CAUSE_NAMES];
  size_t n = s->syscall < 0 ? innermost_names(c, s, names) : 0;
  const char *what = n > 0 ? lagscope__darwin_wait_for(names, n) : NULL;
  uintptr_t queue;
  int owner = queue_owner(c, r, s, &queue);
  if (queue != 0) put(queue_text, sizeof(queue_text), ", queue 0x%" PRIxPTR, queue);
  put(out, size, "waiting in %s() in %s%s%s%s", call,
      lagscope__verdict_app_function(c, s, fn, sizeof(fn)),
      what != NULL ? " for " : "", what != NULL ? what : "", queue_text);
  if (owner < 0 || left <= 0) return;
  char who[LAGSCOPE_THREAD_NAME_MAX + 8], rest[PHRASE_MAX];
  phrase(c, r, &r->threads[owner], left - 1, rest, sizeof(rest));
  size_t len = strlen(out);
  put(out + len, size - len, ", run by thread %s (tid %d), itself %s",
      thread_name(r, owner, who, sizeof(who)), (int)r->threads[owner].tid, rest);
}

/* What a thread is doing, as the end of a sentence: "blocked in read() on pipe:[8812]"; for a
 * lock, its owner and what the owner does, `left` owners deep. */
static void phrase(lagscope__report_ctx *c, const lagscope__report_data *r,
                   const lagscope__stack *s, int left, char *out, size_t size) {
  char call[128], target[LAGSCOPE__TARGET_MAX], fn[FUNCTION_TEXT_MAX];
  lagscope__cause_kind kind = lagscope__verdict_classify(c, s);
  const char *name = lagscope__report_run_state(c, s, call, sizeof(call));
  lagscope__verdict_wait_target(c, r, s, target, sizeof(target));
  const char *on = target[0] != '\0' ? " on " : "";
  switch (kind) {
    case LAGSCOPE__CAUSE_CPU:
      put(out, size, "running %s", lagscope__verdict_app_function(c, s, fn, sizeof(fn)));
      break;
    case LAGSCOPE__CAUSE_IO: put(out, size, "blocked in %s()%s%s", name, on, target); break;
    case LAGSCOPE__CAUSE_SLEEP: put(out, size, "sleeping in %s()", name); break;
    case LAGSCOPE__CAUSE_LOCK: {
      uintptr_t mutex = 0;
      int owner = lock_of(c, r, s, &mutex);
      if (owner < 0 || left <= 0) {
        put(out, size, "waiting for %s 0x%" PRIxPTR, lock_noun(c, s), mutex);
        break;
      }
      char who[LAGSCOPE_THREAD_NAME_MAX + 8], rest[PHRASE_MAX];
      phrase(c, r, &r->threads[owner], left - 1, rest, sizeof(rest));
      put(out, size, "waiting for %s 0x%" PRIxPTR " held by %s (tid %d), %s", lock_noun(c, s),
          mutex, thread_name(r, owner, who, sizeof(who)), (int)r->threads[owner].tid, rest);
      break;
    }
    case LAGSCOPE__CAUSE_WAIT: wait_phrase(c, r, s, name, left, out, size); break;
    case LAGSCOPE__CAUSE_IDLE: put(out, size, "idle in its event loop (%s)", name); break;
    default: put(out, size, "in an unknown state"); break;
  }
}

static void summary_sentence(lagscope__report_ctx *c, const lagscope__report_data *r,
                             int main_index, lagscope__cause_kind kind, double ms,
                             const lagscope__stack *main, const char *telling, char *out,
                             size_t size) {
  char what[PHRASE_MAX], name[LAGSCOPE_THREAD_NAME_MAX + 8], fn[FUNCTION_TEXT_MAX];
  /* "in FUNCTION": the function the label says (a CPU hang's: its longest CPU phase's). */
  const char *where =
      telling != NULL ? telling : lagscope__verdict_app_function(c, main, fn, sizeof(fn));
  int owner = main_index >= 0 ? owner_index(c, r, &r->threads[main_index]) : -1;
  switch (kind) {
    case LAGSCOPE__CAUSE_LOCK:
      if (owner < 0) {
        put(out, size, "Waited %.0f ms for %s 0x%" PRIxPTR " (its owner is not known)",
            ms, lock_noun(c, main), lock_address(c, r, main));
        return;
      }
      phrase(c, r, &r->threads[owner], 3, what, sizeof(what));
      put(out, size, "Waited %.0f ms for %s 0x%" PRIxPTR
               " held by thread %s (tid %d), itself %s", ms, lock_noun(c, main),
               lock_address(c, r, main),
               thread_name(r, owner, name, sizeof(name)), (int)r->threads[owner].tid, what);
      return;
    case LAGSCOPE__CAUSE_CPU: put(out, size, "On the CPU for %.0f ms in %s", ms, where); return;
    case LAGSCOPE__CAUSE_IO: {
      char call[128], target[LAGSCOPE__TARGET_MAX];
      const char *call_name = lagscope__report_run_state(c, main, call, sizeof(call));
      lagscope__verdict_wait_target(c, r, main, target, sizeof(target));
      put(out, size, "Blocked %.0f ms in %s()%s%s", ms, call_name,
               target[0] != '\0' ? " on " : "", target);
      return;
    }
    case LAGSCOPE__CAUSE_SLEEP: phrase(c, r, main, 0, what, sizeof(what));
      put(out, size, "Slept %.0f ms (%s)", ms, what); return;
    case LAGSCOPE__CAUSE_WAIT: phrase(c, r, main, 3, what, sizeof(what));
      put(out, size, "Waited %.0f ms, %s", ms, what); return;
    case LAGSCOPE__CAUSE_IDLE:
      if (main->syscall < 0) { /* Darwin's run loop: idle, yet the main queue not served */
        put(out, size, "Idle in its run loop for %.0f ms, in a mode that does not serve the "
            "main queue (a modal or tracking loop of its own: CoreFoundation serves the main "
            "queue only in the common modes), so work sent to the main queue waited", ms);
        return;
      }
      put(out, size, "Idle in its own event loop for %.0f ms: the loop did not run lagscope's "
          "ping", ms);
      return;
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
  /* Where the time went: telling (a CPU hang's longest CPU phase's function, else the heaviest
   * stack's telling function, the list's "function"), else the one stack's innermost function
   * outside the system's libraries. */
  char fn[FUNCTION_TEXT_MAX];
  const char *where = telling != NULL   ? telling
                      : main != NULL    ? lagscope__verdict_app_function(c, main, fn, sizeof(fn))
                                        : "";
  const char *kind_name = lagscope__cause_kind_name(kind);
  char name[LAGSCOPE_THREAD_NAME_MAX + 8], call[128], target[LAGSCOPE__TARGET_MAX];
  int owner = main_index >= 0 ? owner_index(c, r, &r->threads[main_index]) : -1;
  uintptr_t queue;
  if (main == NULL) {
    put(out, size, "%s", kind_name);
  } else if (kind == LAGSCOPE__CAUSE_LOCK && owner >= 0) {
    put(out, size, "lock · %s", thread_name(r, owner, name, sizeof(name)));
  } else if (kind == LAGSCOPE__CAUSE_LOCK) {
    put(out, size, "lock · %s 0x%" PRIxPTR, lock_noun(c, main), lock_address(c, r, main));
  } else if (kind == LAGSCOPE__CAUSE_IO) {
    lagscope__verdict_wait_target(c, r, main, target, sizeof(target));
    put(out, size, "io · %s%s%s", lagscope__report_run_state(c, main, call, sizeof(call)),
        target[0] != '\0' ? " " : "", target);
  } else if (kind == LAGSCOPE__CAUSE_IDLE) {
    put(out, size, "idle · %s", main->syscall < 0 ? "run loop, private mode" : "event loop");
  } else if (kind == LAGSCOPE__CAUSE_WAIT && queue_owner(c, r, main, &queue) >= 0) {
    put(out, size, "wait · queue run by %s",
        thread_name(r, queue_owner(c, r, main, &queue), name, sizeof(name)));
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

/* ---- 4. the verdict ------------------------------------------------------------------------- */

/* One phase in a few words, for a hang told in phases. */
static void phase_phrase(lagscope__report_ctx *c, const lagscope__report_data *r,
                         const lagscope__verdict_phase *p, char *out, size_t size) {
  char call[128], target[LAGSCOPE__TARGET_MAX];
  const char *name = lagscope__report_run_state(c, p->stack, call, sizeof(call));
  double ms = (double)lagscope__verdict_phase_ns(p) / 1e6;
  switch ((lagscope__cause_kind)p->kind) {
    case LAGSCOPE__CAUSE_CPU: put(out, size, "on the CPU for %.0f ms in %s", ms, p->function); break;
    case LAGSCOPE__CAUSE_IO:
      lagscope__verdict_wait_target(c, r, p->stack, target, sizeof(target));
      put(out, size, "blocked %.0f ms in %s()%s%s", ms, name, target[0] != '\0' ? " on " : "",
          target);
      break;
    case LAGSCOPE__CAUSE_SLEEP: put(out, size, "slept %.0f ms in %s()", ms, name); break;
    case LAGSCOPE__CAUSE_LOCK:
      put(out, size, "waited %.0f ms for %s 0x%" PRIxPTR, ms, lock_noun(c, p->stack),
          lock_address(c, r, p->stack));
      break;
    case LAGSCOPE__CAUSE_WAIT: put(out, size, "waited %.0f ms in %s()", ms, name); break;
    case LAGSCOPE__CAUSE_IDLE: put(out, size, "idle %.0f ms in its event loop", ms); break;
    default: put(out, size, "%.0f ms in an unknown state", ms); break;
  }
}

/* A sentence's end: the hang's time it did not tell (in phases too short to tell, or in other
 * calls), " (and 300 ms elsewhere)", when a millisecond or more. */
static void elsewhere(double ms, char *out, size_t size) {
  size_t len = strlen(out);
  if (ms >= 0.5) put(out + len, size - len, " (and %.0f ms elsewhere)", ms);
}

/* A hang told in phases: "Blocked 1500 ms in read() on …, then blocked 1000 ms in openat() on
 * …", each phase's time its span by the samples' clock. */
static void phases_sentence(lagscope__report_ctx *c, const lagscope__report_data *r,
                            const lagscope__verdict *v, char *out, size_t size) {
  out[0] = '\0';
  uint64_t told = 0;
  for (int i = 0; i < v->phase_count; i++) {
    char one[PHRASE_MAX];
    phase_phrase(c, r, &v->phases[i], one, sizeof(one));
    told += lagscope__verdict_phase_ns(&v->phases[i]);
    size_t len = strlen(out);
    put(out + len, size - len, "%s%s", i > 0 ? ", then " : "", one);
  }
  if (out[0] >= 'a' && out[0] <= 'z') out[0] = (char)(out[0] - 'a' + 'A');
  elsewhere((double)(r->duration_ns - (told < r->duration_ns ? told : r->duration_ns)) / 1e6, out,
            size);
}

static int by_share(const void *a, const void *b) {
  const lagscope__verdict_share *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->kind - y->kind;
}

/* The sentence and label of a hang lagscope mostly could not see: how much of it, and why
 * when it knows (the capture signal blocked in the main thread). */
static void unseen_sentence(const lagscope__report_data *r, const lagscope__verdict *v,
                            char *summary, size_t summary_size, char *label, size_t label_size) {
  double percent = v->total > 0 ? 100.0 * r->samples_unseen / v->total : 0.0;
  if (r->signal_blocked) {
    put(summary, summary_size, "Not known why: the main thread blocks lagscope's capture "
             "signal, so %u of %u samples (%.0f%%) could not be taken while it ran",
             r->samples_unseen, v->total, percent);
    put(label, label_size, "unknown · capture signal blocked");
  } else {
    put(summary, summary_size, "Not known why: the main thread did not answer %u of %u "
             "samples (%.0f%%)", r->samples_unseen, v->total, percent);
    put(label, label_size, "unknown · not sampled");
  }
}

/* A hang told by one phase: its sentence, its time that of its call (every phase in the same
 * call on the same thing), the rest said as time elsewhere. */
static void one_phase_sentence(lagscope__report_ctx *c, const lagscope__report_data *r,
                               lagscope__verdict *v, const char *where) {
  if (v->top.count == 0) { /* no sample of the kind: the capture at the start, its share */
    summary_sentence(c, r, v->main_index, v->kind, (double)r->duration_ns / 1e6 * v->share,
                     v->main, where, v->summary, sizeof(v->summary));
    return;
  }
  uint64_t ns = lagscope__verdict_call_ns(c, r, &v->top);
  summary_sentence(c, r, v->main_index, v->kind, (double)ns / 1e6, v->main, where, v->summary,
                   sizeof(v->summary));
  elsewhere((double)(r->duration_ns - (ns < r->duration_ns ? ns : r->duration_ns)) / 1e6,
            v->summary, sizeof(v->summary));
}

void lagscope__verdict_make(lagscope__report_ctx *c, const lagscope__report_data *r,
                            const char *telling, lagscope__verdict *v) {
  uint32_t counts[LAGSCOPE__CAUSE_COUNT] = {0};
  const lagscope__stack *last_of[LAGSCOPE__CAUSE_COUNT] = {0};
  for (uint32_t i = 0; i < r->sample_count; i++) {
    lagscope__cause_kind k = lagscope__verdict_classify(c, &r->samples[i]);
    counts[k]++;
    last_of[k] = &r->samples[i];
  }
  counts[LAGSCOPE__CAUSE_UNKNOWN] += r->samples_unseen; /* no stack: not known, never guessed */
  v->main_index = thread_index(r, r->main_tid);
  const lagscope__stack *at_start = v->main_index >= 0 ? &r->threads[v->main_index] : NULL;
  v->total = r->sample_count + r->samples_unseen;
  if (v->total == 0 && at_start != NULL) { /* no sample yet: the capture at the start says */
    lagscope__cause_kind k = lagscope__verdict_classify(c, at_start);
    counts[k] = v->total = 1;
    last_of[k] = at_start;
  }
  for (int k = 0; k < LAGSCOPE__CAUSE_COUNT; k++)
    v->shares[k] = (lagscope__verdict_share){k, counts[k]};
  lagscope__sort(v->shares, LAGSCOPE__CAUSE_COUNT, sizeof(v->shares[0]), by_share);
  v->kind = v->total > 0 ? (lagscope__cause_kind)v->shares[0].kind : LAGSCOPE__CAUSE_UNKNOWN;
  v->share = v->total > 0 ? (double)v->shares[0].count / v->total : 0.0;
  lagscope__verdict_make_phases(c, r, v);
  /* The details: from the capture at the start when it shows the same (the other threads are
   * of that moment), else from the last sample of the longest phase of the kind (a hang that
   * read for 1.5 s and then waited 382 s in openat is told by the openat, not by the read it
   * began with). */
  const lagscope__verdict_phase *top = v->top.count > 0 ? &v->top : NULL;
  int start_same = at_start != NULL && lagscope__verdict_classify(c, at_start) == v->kind &&
                   (top == NULL || lagscope__verdict_same_phase(top, v->kind, at_start));
  v->main = start_same ? at_start : top != NULL ? top->stack : last_of[v->kind];
  if (v->main != at_start) v->main_index = -1;
  v->chain_len = 0;
  v->cycle_from = -1;
  if (v->kind == LAGSCOPE__CAUSE_LOCK && v->main_index >= 0)
    v->chain_len = lock_chain(c, r, v->main_index, v->chain, &v->cycle_from);
  if (v->cycle_from >= 0) {
    deadlock_sentence(c, r, v->chain, v->chain_len, v->cycle_from, v->summary,
                      sizeof(v->summary));
    deadlock_label(r, v->chain, v->chain_len, v->cycle_from, v->label, sizeof(v->label));
    return;
  }
  if (v->kind == LAGSCOPE__CAUSE_UNKNOWN && r->samples_unseen > 0) {
    unseen_sentence(r, v, v->summary, sizeof(v->summary), v->label, sizeof(v->label));
    return;
  }
  /* A CPU hang is named by its longest CPU phase's function, in the label and the sentence
   * as in its phase; other kinds by the heaviest stack's telling function. */
  const char *where = v->kind == LAGSCOPE__CAUSE_CPU && top != NULL && top->function[0] != '\0'
                          ? top->function
                          : telling;
  if (v->phase_count >= 2)
    phases_sentence(c, r, v, v->summary, sizeof(v->summary));
  else if (v->main != NULL)
    one_phase_sentence(c, r, v, where);
  else
    put(v->summary, sizeof(v->summary), "Not known why: no stack of the main thread says");
  label_text(c, r, v->main_index, v->kind, v->main, where, v->label, sizeof(v->label));
}

const char *lagscope__verdict_kind(const lagscope__verdict *v) {
  return v->cycle_from >= 0 ? "deadlock" : lagscope__cause_kind_name(v->kind);
}

/* ---- 5. the report's "cause" ---------------------------------------------------------------- */

/* One thread's cause fields (its kind when with_kind), following the lock owner while there is
 * one, up to `left` more. */
static void thread_cause_fields(lagscope__json_writer *w, lagscope__report_ctx *c,
                                const lagscope__report_data *r, int index, int left,
                                int with_kind) {
  const lagscope__stack *s = &r->threads[index];
  lagscope__cause_kind kind = lagscope__verdict_classify(c, s);
  if (with_kind) lagscope__jw_string(w, "kind", lagscope__cause_kind_name(kind));
  char buf[PHRASE_MAX], call[128];
  if (s->run_state == LAGSCOPE__RUN_SYSCALL)
    lagscope__jw_string(w, "syscall", lagscope__report_run_state(c, s, call, sizeof(call)));
  lagscope__verdict_wait_target(c, r, s, buf, sizeof(buf));
  if (buf[0] != '\0') lagscope__jw_string(w, "target", buf);
  uintptr_t mutex = 0, queue = 0;
  int owner = kind == LAGSCOPE__CAUSE_LOCK   ? lock_of(c, r, s, &mutex)
              : kind == LAGSCOPE__CAUSE_WAIT ? queue_owner(c, r, s, &queue)
                                             : -1;
  if (kind == LAGSCOPE__CAUSE_LOCK && mutex != 0) lagscope__jw_hex(w, "mutex", mutex);
  if (queue != 0) lagscope__jw_hex(w, "queue", queue);
  if (owner >= 0 && left > 0) {
    lagscope__jw_begin_object(w, "owner");
    lagscope__jw_i64(w, "tid", r->threads[owner].tid);
    lagscope__jw_string(w, "name", thread_name(r, owner, buf, sizeof(buf)));
    lagscope__report_stack_write(w, "stack", c, &r->threads[owner]);
    lagscope__jw_begin_object(w, "cause");
    thread_cause_fields(w, c, r, owner, left - 1, 1);
    lagscope__jw_end_object(w);
    lagscope__jw_end_object(w);
  }
}

void lagscope__verdict_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                             const lagscope__report_data *r, const lagscope__verdict *v) {
  lagscope__jw_begin_object(w, "cause");
  lagscope__jw_string(w, "kind", lagscope__verdict_kind(v));
  lagscope__jw_measure(w, "share", v->share);
  lagscope__jw_string(w, "summary", v->summary);
  lagscope__jw_string(w, "label", v->label);
  if (v->main_index >= 0) {
    thread_cause_fields(w, c, r, v->main_index, CHAIN_MAX, 0);
  } else if (v->main != NULL && v->main->run_state == LAGSCOPE__RUN_SYSCALL) {
    char call[128], target[256];
    lagscope__jw_string(w, "syscall",
                        lagscope__report_run_state(c, v->main, call, sizeof(call)));
    lagscope__verdict_wait_target(c, r, v->main, target, sizeof(target));
    if (target[0] != '\0') lagscope__jw_string(w, "target", target);
  }
  if (v->cycle_from >= 0) {
    lagscope__jw_begin_array(w, "cycle");
    for (int i = v->cycle_from; i < v->chain_len; i++)
      lagscope__jw_i64(w, NULL, r->threads[v->chain[i]].tid);
    lagscope__jw_end_array(w);
  }
  lagscope__verdict_write_phases(w, c, r, v);
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
