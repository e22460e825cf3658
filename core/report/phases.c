/* A hang's phases: runs of its samples that waited in the same call on the same thing, or ran
 * on the CPU (verdict.h's lagscope__verdict_phase), found in one walk of the samples, the
 * longest of the dominant kind picked, a CPU phase named by its function, and the phases told
 * written as the report's cause.phases. Split from verdict.c, which tells them in its sentences
 * and shares with this file what verdict.h declares.
 *
 * Memory: nothing of its own; the frame cache it resolves through may grow (lagscope__alloc). */
#define _POSIX_C_SOURCE 200809L

#include "report/verdict.h"
#include "report/call_tree.h"

#include <stdio.h>
#include <string.h>

/* A sample's call for its phase: the blocking call, or -1 on the CPU. */
static int32_t phase_call(const lagscope__stack *s) {
  return s->run_state == LAGSCOPE__RUN_SYSCALL ? s->syscall : -1;
}

/* What tells two waits in one call apart: the argument naming its target (the fd, or the path:
 * two opens of other files are two phases even in one folder), else its first (a futex's
 * word). F */
static uintptr_t phase_arg(const lagscope__stack *s, int32_t call) {
  if (call < 0) return 0;
  int i = lagscope__syscall_target_arg(call);
  return s->args[i >= 0 && i < 6 ? i : 0];
}

int lagscope__verdict_same_phase(const lagscope__verdict_phase *p, lagscope__cause_kind kind,
                                 const lagscope__stack *s) {
  int32_t call = phase_call(s);
  return p->kind == (int)kind && p->syscall == call && p->arg == phase_arg(s, call);
}

/* The hang's end: its start and duration (a sum that would wrap stops at the clock's end).
 * The last phase runs to it, samples dropped past the buffer included (the last one kept is
 * taken to last, as a gap in the samples counts in the phase it fell in). F */
static uint64_t hang_end(const lagscope__report_data *r) {
  return r->duration_ns > UINT64_MAX - r->start_ns ? UINT64_MAX : r->start_ns + r->duration_ns;
}

/* The phase after p (p->count 0: the first), samples first to last, with its time: from p's end
 * to the next phase's first sample's time, kept within [p's end, end] whatever the samples'
 * clock says. 0 past the last sample. A (c's cache may grow) */
static int next_phase(lagscope__report_ctx *c, const lagscope__report_data *r, uint64_t end,
                      lagscope__verdict_phase *p) {
  uint32_t first = p->count == 0 ? 0 : p->last + 1;
  uint64_t from = p->count == 0 ? r->start_ns : p->to_ns;
  if (first >= r->sample_count) return 0;
  const lagscope__stack *s = &r->samples[first];
  lagscope__cause_kind kind = lagscope__verdict_classify(c, s);
  int32_t call = phase_call(s);
  *p = (lagscope__verdict_phase){.kind = kind, .syscall = call, .arg = phase_arg(s, call),
                                 .count = 1, .first = first, .last = first, .from_ns = from};
  while (p->last + 1 < r->sample_count &&
         lagscope__verdict_same_phase(p, lagscope__verdict_classify(c, &r->samples[p->last + 1]),
                                      &r->samples[p->last + 1])) {
    p->last++;
    p->count++;
  }
  p->stack = &r->samples[p->last];
  uint64_t to = p->last + 1 < r->sample_count ? r->samples[p->last + 1].time_ns : end;
  p->to_ns = to < from ? from : to > end ? end : to;
  return 1;
}

uint64_t lagscope__verdict_phase_ns(const lagscope__verdict_phase *p) {
  return p->to_ns - p->from_ns;
}

static int same_call(const lagscope__verdict_phase *a, const lagscope__verdict_phase *b) {
  return a->kind == b->kind && a->syscall == b->syscall && a->arg == b->arg;
}

/* A phase on the CPU is named by the function of the app's code (app_function's rule) that
 * most of its samples were in, among the first FUNCTIONS_COUNTED met; a tie goes to the one met
 * first. The label and the sentence of a CPU hang name its longest CPU phase's. A (c's cache
 * may grow) */
#define FUNCTIONS_COUNTED 8
static void phase_function(lagscope__report_ctx *c, const lagscope__report_data *r,
                           lagscope__verdict_phase *p) {
  struct {
    char name[LAGSCOPE__VERDICT_FUNCTION_MAX];
    uint32_t count;
  } seen[FUNCTIONS_COUNTED];
  int n = 0, best = 0;
  p->function[0] = '\0';
  if (p->kind != LAGSCOPE__CAUSE_CPU) return;
  for (uint32_t i = p->first; i <= p->last && i < r->sample_count; i++) {
    char buf[LAGSCOPE__VERDICT_FUNCTION_MAX];
    const char *name = lagscope__verdict_app_function(c, &r->samples[i], buf, sizeof(buf));
    int k = 0;
    while (k < n && strcmp(seen[k].name, name) != 0) k++;
    if (k == n && n == FUNCTIONS_COUNTED) continue;
    if (k == n) {
      snprintf(seen[k].name, sizeof(seen[k].name), "%s", name);
      seen[n++].count = 0;
    }
    seen[k].count++;
  }
  for (int k = 1; k < n; k++)
    if (seen[k].count > seen[best].count) best = k;
  if (n > 0) snprintf(p->function, sizeof(p->function), "%s", seen[best].name);
}

/* The phases, in one walk of the samples: those told (a fifth of the hang's time or more each:
 * at most five, so never past the bound) in time order, and the longest of the dominant kind
 * (ties: the first). A hang that reads a file in small reads between bits of work has many
 * short phases and none told: its sentence names its call alone. A (c's cache may grow) */
void lagscope__verdict_make_phases(lagscope__report_ctx *c, const lagscope__report_data *r,
                                   lagscope__verdict *v) {
  uint64_t end = hang_end(r);
  lagscope__verdict_phase p = {0};
  v->phase_count = 0;
  v->top.count = 0;
  while (next_phase(c, r, end, &p)) {
    uint64_t ns = lagscope__verdict_phase_ns(&p);
    if (p.kind == (int)v->kind && (v->top.count == 0 || ns > lagscope__verdict_phase_ns(&v->top)))
      v->top = p;
    if (ns == 0 || (double)ns * 5 < (double)r->duration_ns) continue;
    if (v->phase_count == LAGSCOPE__VERDICT_PHASES) continue; /* time elsewhere */
    v->phases[v->phase_count] = p;
    phase_function(c, r, &v->phases[v->phase_count++]);
  }
  if (v->top.count > 0) phase_function(c, r, &v->top);
}

/* The time of every phase in the same call on the same thing as `like` (or on the CPU): the
 * time a sentence of one phase tells, a call that came back counted with it. A (c's cache may
 * grow) */
uint64_t lagscope__verdict_call_ns(lagscope__report_ctx *c, const lagscope__report_data *r,
                                   const lagscope__verdict_phase *like) {
  uint64_t end = hang_end(r), ns = 0;
  lagscope__verdict_phase p = {0};
  while (next_phase(c, r, end, &p))
    if (same_call(&p, like)) ns += lagscope__verdict_phase_ns(&p);
  return ns;
}

/* The phases told, in time order: kind, share of the hang's time, when (from_ms, to_ms from the
 * hang's start) and ms, the call and what it waited on, or the function on the CPU. */
void lagscope__verdict_write_phases(lagscope__json_writer *w, lagscope__report_ctx *c,
                                    const lagscope__report_data *r, const lagscope__verdict *v) {
  lagscope__jw_begin_array(w, "phases");
  for (int i = 0; i < v->phase_count; i++) {
    const lagscope__verdict_phase *p = &v->phases[i];
    char call[128], target[LAGSCOPE__TARGET_MAX];
    lagscope__jw_begin_object(w, NULL);
    lagscope__jw_string(w, "kind", lagscope__cause_kind_name((lagscope__cause_kind)p->kind));
    lagscope__jw_measure(w, "share",
                         r->duration_ns > 0 ? (double)lagscope__verdict_phase_ns(p) / r->duration_ns : 0);
    lagscope__jw_measure(w, "from_ms", (double)(p->from_ns - r->start_ns) / 1e6);
    lagscope__jw_measure(w, "to_ms", (double)(p->to_ns - r->start_ns) / 1e6);
    lagscope__jw_measure(w, "ms", (double)lagscope__verdict_phase_ns(p) / 1e6);
    lagscope__jw_u64(w, "samples", p->count);
    if (p->syscall >= 0) {
      lagscope__jw_string(w, "syscall",
                          lagscope__report_run_state(c, p->stack, call, sizeof(call)));
      lagscope__verdict_wait_target(c, r, p->stack, target, sizeof(target));
      if (target[0] != '\0') lagscope__jw_string(w, "target", target);
    } else if (p->kind == LAGSCOPE__CAUSE_CPU) {
      lagscope__jw_string(w, "function", p->function);
    }
    lagscope__jw_end_object(w);
  }
  lagscope__jw_end_array(w);
}
