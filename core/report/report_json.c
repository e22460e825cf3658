/* Hang reports as JSON: one hang's data (main-thread samples, every thread's stack, metrics
 * around it) symbolicated and merged into a call tree (call_tree.c), judged (the verdict,
 * verdict.c), and written out. Field by field in docs/hang-report.md.
 *
 * Contents:
 *   1. frames, the call tree, the heaviest stack, threads
 *   2. the report: metrics, the timeline, samples, the whole; the entry points
 *   3. the telling frame of a stack (the hang list, hitches, the HUD)
 *
 * Memory: the frame cache and the call tree come from lagscope__alloc and are freed before
 * returning; every text is written as it goes (core/base/json_writer.c), never built as a
 * cJSON tree first, into lagscope's heap, and freed with lagscope__dealloc. */
#define _POSIX_C_SOURCE 200809L

#include "report/verdict.h"
#include "report/call_tree.h"

#include <stdio.h>
#include <string.h>

/* Frames written for all threads' stacks together; past it a thread's stack is left out and
 * says so. With the tree's bound this keeps a report well below the store's 16 MiB per file
 * even with 1024 threads of 128 frames. */
#define REPORT_MAX_THREAD_FRAMES 24576u

/* ---- 1. frames, the call tree, threads -------------------------------------------------- */

static void entry_fields(lagscope__json_writer *w, const lagscope__stack_frame *f) {
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
  if (f->inlined[0] != NULL) {
    lagscope__jw_begin_array(w, "inlined");
    for (int i = 0; i < LAGSCOPE__FRAME_INLINED && f->inlined[i] != NULL; i++)
      lagscope__jw_string(w, NULL, f->inlined[i]);
    lagscope__jw_end_array(w);
  }
  if (f->tail_called != NULL) lagscope__jw_string(w, "tail_called", f->tail_called);
  static const char *const codes[] = {"system", "app", "lagscope"};
  lagscope__jw_string(w, "code", codes[f->code <= LAGSCOPE__CODE_LAGSCOPE ? f->code : 0]);
}

static void entry_write(lagscope__json_writer *w, const lagscope__report_ctx *c, uint32_t frame) {
  lagscope__jw_begin_object(w, NULL);
  entry_fields(w, lagscope__report_ctx_entry(c, frame));
  lagscope__jw_end_object(w);
}

static void children_write(lagscope__json_writer *w, const lagscope__call_tree *t,
                           const lagscope__report_ctx *c, uint32_t index) {
  lagscope__jw_begin_array(w, "children");
  for (uint32_t ch = t->nodes[index].first_child; ch != LAGSCOPE__TREE_NONE;
       ch = t->nodes[ch].next_sibling) {
    const lagscope__tree_node *child = &t->nodes[ch];
    lagscope__jw_begin_object(w, NULL);
    entry_fields(w, lagscope__report_ctx_entry(c, child->entry));
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
  entry_write(w, c, t->nodes[best].entry);
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

/* A stack's frames as the array named key, innermost first (verdict.c writes lock owners'
 * stacks with it). */
int lagscope__report_stack_write(lagscope__json_writer *w, const char *key,
                                 lagscope__report_ctx *c, const lagscope__stack *stack) {
  lagscope__jw_begin_array(w, key);
  uint32_t depth = lagscope__stack_depth(stack);
  for (uint32_t k = 0; k < depth; k++) {
    uint32_t frame;
    if (lagscope__report_ctx_resolve(c, stack->frames[k], k > 0, &frame) != 0)
      return LAGSCOPE_ENOMEM;
    entry_write(w, c, frame);
  }
  lagscope__jw_end_array(w);
  return 0;
}

/* A Swift task's logical callers (stack->async_frames), where a frame was async: resume
 * functions, each an entry point, not a return address. */
static int async_stack_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                             const lagscope__stack *stack) {
  uint32_t depth = stack->async_depth < LAGSCOPE__MAX_ASYNC_FRAMES ? stack->async_depth
                                                                   : LAGSCOPE__MAX_ASYNC_FRAMES;
  if (depth == 0) return 0;
  lagscope__jw_begin_array(w, "async_stack");
  for (uint32_t k = 0; k < depth; k++) {
    uint32_t frame;
    if (lagscope__report_ctx_resolve(c, stack->async_frames[k], 0, &frame) != 0)
      return LAGSCOPE_ENOMEM;
    entry_write(w, c, frame);
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
      if (lagscope__report_stack_write(w, "stack", c, stack) != 0) return LAGSCOPE_ENOMEM;
    }
    if (async_stack_write(w, c, stack) != 0) return LAGSCOPE_ENOMEM;
    lagscope__jw_end_object(w);
  }
  lagscope__jw_end_array(w);
  return 0;
}

/* ---- 2. the report ---------------------------------------------------------------------- */

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
  lagscope__jw_u64(w, "unseen", r->samples_unseen);
  if (r->signal_blocked) lagscope__jw_bool(w, "signal_blocked", 1);
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

/* The hang's signature beside its cause (signature.c). The struct is 1.3 KiB: on the heap,
 * as the verdict is. A */
static void signature_write(lagscope__json_writer *w, const char *kind, const char *heaviest) {
  lagscope__signature *s = lagscope__alloc(sizeof(*s));
  if (s == NULL) return; /* the writer's own allocations fail too: the report is not written */
  lagscope__signature_of(kind, heaviest, s);
  lagscope__signature_write(w, s);
  lagscope__dealloc(s);
}

/* The hang's first sample, right after its start, where the head of a report cut short by the
 * process's death while it was written still holds it: the next start tells it (hang_lost,
 * store_recover.c). null when no sample was taken. */
static int first_sample_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                              const lagscope__report_data *r) {
  if (r->sample_count == 0) {
    lagscope__jw_null(w, "first_sample");
    return 0;
  }
  const lagscope__stack *s = &r->samples[0];
  char buf[128];
  lagscope__jw_begin_object(w, "first_sample");
  lagscope__jw_measure(w, "t_ms",
                       s->time_ns > r->start_ns ? (double)(s->time_ns - r->start_ns) / 1e6 : 0.0);
  lagscope__jw_string(w, "state", lagscope__report_run_state(c, s, buf, sizeof(buf)));
  int rc = lagscope__report_stack_write(w, "stack", c, s);
  lagscope__jw_end_object(w);
  return rc;
}

static void report_write(lagscope__json_writer *w, lagscope__report_ctx *c,
                         const lagscope__call_tree *t, const lagscope__report_data *r,
                         const char *heaviest, const lagscope__verdict *v, int *rc) {
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
  lagscope__jw_string(w, "app_state", r->startup ? "startup" : "running");
  lagscope__jw_string(w, "lagscope_version", LAGSCOPE_VERSION_STRING);
  lagscope__jw_begin_object(w, "app");
  lagscope__jw_string(w, "name", r->app_name);
  lagscope__jw_i64(w, "pid", r->pid);
  lagscope__jw_end_object(w);
  lagscope__jw_begin_object(w, "start");
  lagscope__jw_i64(w, "wall_ms", r->start_wall_ms);
  lagscope__jw_u64(w, "monotonic_ns", r->start_ns);
  lagscope__jw_end_object(w);
  int first_rc = first_sample_write(w, c, r);
  lagscope__jw_measure(w, "duration_ms", (double)r->duration_ns / 1e6);
  lagscope__jw_u64(w, "duration_ns", r->duration_ns);
  lagscope__jw_u64(w, "threshold_ms", r->threshold_ms);
  lagscope__jw_u64(w, "sample_interval_ms", r->sample_interval_ms);
  samples_write(w, c, t, r);
  tree_write(w, t, c);
  lagscope__jw_raw(w, "heaviest_stack", heaviest);
  lagscope__verdict_write(w, c, r, v);
  signature_write(w, lagscope__verdict_kind(v), heaviest);
  lagscope__jw_i64(w, "main_thread_tid", r->main_tid);
  lagscope__jw_u64(w, "thread_count", r->thread_count);
  *rc = threads_write(w, c, r);
  if (*rc == 0) *rc = first_rc;
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
    lagscope__verdict *v = lagscope__alloc(sizeof(*v));
    char telling[256];
    lagscope__json_writer w = {0};
    rc = LAGSCOPE_ENOMEM;
    if (v != NULL) {
      lagscope__verdict_make(c, r, telling_of(heaviest, telling, sizeof(telling)), v);
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
  if (rc == 0) rc = lagscope__report_stack_write(&w, NULL, &c, stack);
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
  lagscope__verdict *v = lagscope__alloc(sizeof(*v));
  int rc = v != NULL ? lagscope__report_ctx_init(&c, resolve, ctx) : LAGSCOPE_ENOMEM;
  if (rc == 0) {
    char telling[256];
    lagscope__verdict_make(&c, r, telling_of(heaviest_json, telling, sizeof(telling)), v);
    lagscope__jw_begin_object(&w, NULL);
    lagscope__jw_string(&w, "kind", lagscope__verdict_kind(v));
    lagscope__jw_string(&w, "summary", v->summary);
    lagscope__jw_string(&w, "label", v->label);
    lagscope__jw_end_object(&w);
    lagscope__report_ctx_free(&c);
  }
  lagscope__dealloc(v);
  return finish(&w, rc, out);
}

/* ---- 3. the telling frame of a stack (the hang list, hitches, the HUD) ------------------ */

static int is_string(const char *s, lagscope__json_span v) {
  return v.end > v.start && s[v.start] == '"';
}

static int same_bytes(const char *s, lagscope__json_span a, lagscope__json_span b) {
  return a.end - a.start == b.end - b.start && memcmp(s + a.start, s + b.start, a.end - a.start) == 0;
}

static int has_text(const char *s, lagscope__json_span v, const char *text) {
  size_t n = strlen(text);
  return v.end - v.start == n + 2 && s[v.start] == '"' && memcmp(s + v.start + 1, text, n) == 0;
}

/* The telling frame: the innermost frame of the app's code (its "code", named or not: a
 * stripped program's frame is told by its offset, never skipped for an outer named one). A
 * report without "code" (written before it was): the innermost named frame in the module of
 * the outermost main. Else the innermost named frame that is not lagscope's; else the first.
 * Names are compared as they were written: lagscope's writer puts the same name in the same
 * bytes. */
int lagscope__report_telling_entry(const char *stack, size_t n, lagscope__json_span *frame) {
  lagscope__json_span element, first = {0, 0}, named = {0, 0}, app = {0, 0};
  size_t at = 0;
  while (lagscope__json_next_element(stack, n, &at, &element)) {
    if (first.end == 0) first = element;
    lagscope__json_span code = lagscope__json_member_span(stack, element, "code");
    if (has_text(stack, code, "app")) {
      *frame = element;
      return 1;
    }
    lagscope__json_span function = lagscope__json_member_span(stack, element, "function");
    if (!is_string(stack, function) || has_text(stack, code, "lagscope")) continue;
    if (named.end == 0) named = element;
    if (code.end == 0 && has_text(stack, function, "main"))
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

int lagscope__report_entry_name(const char *frame, size_t n, char *out, size_t size) {
  out[0] = '\0';
  if (lagscope__json_member_text(frame, n, "function", out, size)) return 1;
  char module[512], offset[32];
  if (!lagscope__json_member_text(frame, n, "module", module, sizeof(module)) ||
      !lagscope__json_member_text(frame, n, "module_offset", offset, sizeof(offset))) {
    out[0] = '\0';
    return 0;
  }
  const char *slash = strrchr(module, '/');
  snprintf(out, size, "%s+%s", slash != NULL ? slash + 1 : module, offset);
  return 1;
}

int lagscope__report_telling_function(const char *stack, char *out, size_t size) {
  out[0] = '\0';
  lagscope__json_span frame;
  if (stack == NULL || !lagscope__report_telling_entry(stack, strlen(stack), &frame)) return 0;
  return lagscope__report_entry_name(stack + frame.start, frame.end - frame.start, out, size);
}
