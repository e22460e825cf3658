/*
 * What the main thread's samples wait on (the call and its first argument: an fd, a path, a
 * futex), named when first sampled, since an fd may be closed and its number reused by the
 * time the report is written; and the samples past a hang's end dropped with the targets only
 * they named. Moved out of the hang recorder, which keeps them in its report data.
 */
#include "internal.h"

/* The target in targets (count of them) that s waits on, or NULL. F */
const lagscope__report_target *lagscope__report_target_find(const lagscope__report_target *targets,
                                                           uint32_t count,
                                                           const lagscope__stack *s) {
  for (uint32_t i = 0; i < count; i++)
    if (targets[i].syscall == s->syscall && targets[i].arg == s->args[0]) return &targets[i];
  return NULL;
}

/* What a sample of the main thread waits on, named when first met (as it is now: an fd may be
 * closed and its number reused later) into targets, while there is room (a call met later is
 * named when the report is written). known: named already, elsewhere (NULL: none). */
void lagscope__report_target_note(lagscope__report_target *targets, uint32_t *count,
                                  const lagscope__stack *s, const lagscope__report_target *known) {
  if (s->run_state != LAGSCOPE__RUN_SYSCALL || s->syscall < 0) return;
  if (lagscope__report_target_find(targets, *count, s) != NULL || *count == LAGSCOPE__REPORT_TARGETS) return;
  lagscope__report_target *t = &targets[(*count)++];
  if (known != NULL) {
    *t = *known;
    return;
  }
  t->syscall = s->syscall;
  t->arg = s->args[0];
  lagscope__describe_wait_target(s, t->text, sizeof(t->text));
}

/* Samples taken at or after end_ns are of the main thread after the hang: the stand-in's,
 * while the monitor was busy as the hang ended (the first symbol lookups, which outlasted the
 * demo's first hang under TSan by 300 ms). Dropped, and the targets only they named. F */
void lagscope__report_drop_samples_after(lagscope__report_data *r, uint64_t end_ns) {
  while (r->sample_count > 0 && r->samples[r->sample_count - 1].time_ns >= end_ns)
    r->sample_count--;
  uint32_t named = 0; /* the targets of the samples kept, in their order */
  for (uint32_t t = 0; t < r->sample_target_count; t++)
    for (uint32_t i = 0; i < r->sample_count; i++)
      if (r->samples[i].syscall == r->sample_targets[t].syscall &&
          r->samples[i].args[0] == r->sample_targets[t].arg) {
        r->sample_targets[named++] = r->sample_targets[t];
        break;
      }
  r->sample_target_count = named;
}
