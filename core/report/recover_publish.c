/*
 * Reports of earlier runs, published: at start, store recovery (store_recover.c) reads the
 * folder on a thread of its own (checking up to 32 MiB of reports would leave the app
 * unwatched if the monitor did it), and each report it finds becomes a hang_recovered event,
 * each file that is no report an error, each hang whose first write the process's death cut
 * short a hang_lost event. Moved out of the hang recorder, which starts it and joins it.
 */
#include "internal.h"

#include <string.h>

static void publish_recovered(void *ctx, const char *id, const char *path, const char *json) {
  (void)ctx;
  char *copy = lagscope__strdup(json); /* the report's: freed with lagscope__dealloc */
  if (copy == NULL) return;
  lagscope_hang_report *report = lagscope__hang_report_new(id, 0, path, copy, NULL);
  if (report == NULL) return;
  lagscope__hang_report_read_parts(report); /* its stack and cause, as hang_ended tells them */
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_RECOVERED};
  e.payload.report = report;
  lagscope__publish(&e);
}

static void publish_corrupt(void *ctx, const char *path, const char *why) {
  (void)ctx;
  lagscope__publish_error(LAGSCOPE_EPARSE, "report store: skipped %s: %s", path, why);
}

/* A hang whose first report the process's death cut short: what is known, in one payload
 * (the sentence, then the id, the path and the first sample, as.hang_lost pointing into it). */
static void publish_lost(void *ctx, const lagscope__store_lost *l) {
  (void)ctx;
  char start[LAGSCOPE__UTC_STAMP_SIZE] = "an unknown time", sentence[512];
  if (l->start_wall_ms >= 0) lagscope__utc_stamp(l->start_wall_ms, start);
  lagscope__explain(sentence, sizeof(sentence),
                    "hang %llu of process %lld (began %s) is lost: the process died while its "
                    "first report was being written (%llu bytes of it were, in %s); its id%s "
                    "are all that is known",
                    (unsigned long long)l->hang_id, (long long)l->pid, start,
                    (unsigned long long)l->bytes, l->path,
                    l->first_sample != NULL ? ", its start and its first sample" : " and its start");
  lagscope__log("%s", sentence);
  const char *first = l->first_sample != NULL ? l->first_sample : "";
  size_t sizes[4] = {strlen(sentence) + 1, strlen(l->id) + 1, strlen(l->path) + 1,
                     strlen(first) + 1};
  char *payload = lagscope__payload_new(sizes[0] + sizes[1] + sizes[2] + sizes[3], NULL);
  if (payload == NULL) return;
  char *at = payload;
  const char *parts[4] = {sentence, l->id, l->path, first};
  char *placed[4];
  for (int i = 0; i < 4; i++) {
    memcpy(at, parts[i], sizes[i]);
    placed[i] = at;
    at += sizes[i];
  }
  lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_LOST};
  e.as.hang_lost.hang_id = l->hang_id;
  e.as.hang_lost.pid = l->pid;
  e.as.hang_lost.start_wall_ms = l->start_wall_ms;
  e.as.hang_lost.bytes = l->bytes;
  e.as.hang_lost.report_id = placed[1];
  e.as.hang_lost.path = placed[2];
  e.as.hang_lost.first_sample = l->first_sample != NULL ? placed[3] : NULL;
  e.payload.message = payload;
  lagscope__publish(&e);
}

static void recovery_main(void *arg) {
  lagscope__recovery *r = arg;
  int rc = lagscope__store_recover(r->store, publish_recovered, publish_corrupt, publish_lost, r,
                                   &r->stop);
  /* A report that could not be marked (a full disk) is still published; it stays in progress
   * on disk and is published again at the next start. */
  if (rc == LAGSCOPE_ESYS)
    lagscope__publish_error(rc, "report store: a recovered report in %s could not be marked as "
                            "ended by termination", r->dir);
  else if (rc != LAGSCOPE_OK)
    lagscope__publish_error(rc, "report store: the reports in %s could not all be recovered: "
                            "%s", r->dir, lagscope_strerror(rc));
  atomic_store_explicit(&r->done, 1, memory_order_release);
}

void lagscope__recovery_start(lagscope__recovery *r, lagscope__store *store, const char *dir) {
  r->store = store;
  r->dir = dir;
  if (lagscope__thread_start(&r->thread, "lagscope-recov", recovery_main, r) != LAGSCOPE_OK)
    recovery_main(r); /* no thread to be had (the process is at its limit): here, then */
}

void lagscope__recovery_tidy(lagscope__recovery *r) {
  /* Its thread, once its work is done, is joined now (it has returned: no wait), not at stop:
   * an app that exits without stopping leaves no finished thread unjoined. */
  if (r->thread != NULL && atomic_load_explicit(&r->done, memory_order_acquire)) {
    lagscope__thread_join(r->thread);
    r->thread = NULL;
  }
}

void lagscope__recovery_stop(lagscope__recovery *r) {
  atomic_store_explicit(&r->stop, 1, memory_order_relaxed);
  lagscope__thread_join(r->thread); /* done with the file it reads, if any */
  r->thread = NULL;
}
