/*
 * One hang, recorded: all threads captured once when it begins, the main thread sampled every
 * hang_sample_interval_ms while it lasts (by the stand-in while the monitor is busy: standin.c),
 * the report written to disk as soon as the first capture is done, again while the hang lasts
 * (so a hang that ends with the app killed is there at the next start, up to the last write)
 * and when it ends. Runs on the monitor thread only.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLES_INITIAL 64
#define SAMPLES_MAX 6000            /* 60 s at 10 ms; later samples are counted, not kept */
/* A thread that blocks the signal, or gets no CPU, costs this. */
#define THREAD_ANSWER_NS (20u * 1000u * 1000u)
#define MAIN_ANSWER_NS (50u * 1000u * 1000u)
#define RETRY_EVERY_NS (5000ull * 1000u * 1000u) /* final reports the folder did not take */
/* Final reports kept in memory while the folder does not take them (a full disk, a read-only
 * spell), written again in order once it does: at most this many, and this many bytes (a
 * report is tens of KiB, a few MiB for a thousand threads). Past either, a hang's report is
 * not kept, and an error event says so (its hang_ended event carried it all the same). */
#define UNSAVED_MAX 16
#define UNSAVED_BYTES_MAX (8u * 1024u * 1024u)
/* The symbol index (libdw's DWARF readers and lagscope's tables: megabytes in a large app)
 * and the unwinder's cache are let go this long after their last use: a burst of stalls
 * (hitches every second) keeps them, an app gone idle gets its memory back soon. The next
 * stall indexes again, each object as its addresses come (tens of milliseconds, on the
 * monitor thread). */
#define SYMBOLS_KEEP_NS (5000ull * 1000u * 1000u)

struct lagscope__hang_recorder {
  lagscope_config config;
  char app_name[64];
  char report_dir[512];
  lagscope__store *store;
  lagscope__symbols *symbols; /* made at the first report; let go when unused for a while */
  uint64_t symbols_used_ns;
  uint64_t captured_ns; /* the last capture: the unwinder and its page cache are in use */
  int unwinder_held;    /* made by a capture and not let go since */
  int signal_lost_reported; /* the app took the capture signal over: said once */
  int signal_blocked_reported; /* the main thread blocks the capture signal: said once */
  uint32_t store_reopened_said; /* the store's folder opened anew so often, said */
  lagscope__recovery recovery; /* earlier runs' reports: recover_publish.c */

  /* Samples the main thread while the monitor does slow work during a hang (standin.c). */
  lagscope__standin_switch standin;

  /* The main thread's samples while it was late, before a hang began: a ring. */
  lagscope__stack *early;
  uint32_t early_next, early_count;
  lagscope__report_target early_targets[LAGSCOPE__REPORT_TARGETS]; /* named when sampled */
  uint32_t early_target_count;

  /* The hang in progress. */
  int active;
  lagscope__report_data data; /* what its report is made from */
  lagscope__stack *samples;
  size_t samples_capacity;
  lagscope__stack *threads;
  char *thread_targets;                         /* LAGSCOPE__TARGET_MAX per thread */
  lagscope__usage *thread_info;        /* at the hang's start */
  lagscope__usage *thread_info_before; /* the usage reader's last, before it */
  char path[512];

  /* The final reports of hangs whose end could not be written (a full disk, a read-only
   * folder), oldest first: each file is marked ended meanwhile where it can be, and the writes
   * are tried again, in order, until the folder takes them. */
  struct unsaved_report {
    char *json;
    char id[64];
    uint64_t hang_id;
  } unsaved[UNSAVED_MAX];
  uint32_t unsaved_count;
  size_t unsaved_bytes;
  uint64_t unsaved_retry_ns;
};

/* ---- set-up ---- */

static void open_store(lagscope__hang_recorder *h) {
  char why[512];
  if (lagscope__store_open(h->report_dir, h->config.report_max_count, h->config.report_max_bytes,
                           &h->store, why, sizeof(why)) != LAGSCOPE_OK) {
    h->store = NULL;
    lagscope__publish_error(LAGSCOPE_ESYS, "report store: %s; hang reports are not kept", why);
  }
}

static void report_capture_init(uint32_t wanted, int rc);

lagscope__hang_recorder *lagscope__hang_recorder_new(const lagscope_config *config) {
  lagscope__hang_recorder *h = lagscope__alloc(sizeof(*h));
  if (h == NULL) return NULL;
  h->config = *config;
  lagscope__app_name(config, h->app_name, sizeof(h->app_name));
  lagscope__report_dir(config, h->app_name, h->report_dir, sizeof(h->report_dir));
  open_store(h);
  report_capture_init(config->capture_signal, lagscope__capture_init(config->capture_signal));
  return h;
}

/* Why threads on the CPU will not be captured, said once at start. */
static void report_capture_init(uint32_t wanted, int rc) {
  if (rc == LAGSCOPE_OK) return;
  if (rc == LAGSCOPE_ESIGNAL && wanted != 0)
    lagscope__publish_error(rc, "capture signal %u (config.capture_signal) is handled by the "
                            "app: threads on the CPU are not captured, blocked ones still are; "
                            "choose a free real-time signal, or 0 for the first free one",
                            wanted);
  else if (rc == LAGSCOPE_ESIGNAL)
    lagscope__publish_error(rc, "no free real-time signal from SIGRTMIN+3 up (the app handles "
                            "them all): threads on the CPU are not captured, blocked ones "
                            "still are");
  else if (rc == LAGSCOPE_EINVAL)
    lagscope__publish_error(rc, "config.capture_signal = %u is not a real-time signal "
                            "(SIGRTMIN..SIGRTMAX): threads on the CPU are not captured", wanted);
  else
    lagscope__publish_error(rc, "capture of running threads unavailable (%s): only threads "
                            "blocked in the kernel have stacks in hang reports",
                            lagscope_strerror(rc));
}

/* After a capture of stack s: the unwinder is in use; a capture signal taken over by the app,
 * or blocked by the main thread, said once; such a stack says no_reply or signal_blocked.
 * Another thread that blocks the signal says so in its stack alone: glibc blocks every signal
 * in a thread while it starts and while it exits, so a busy pool always has some. */
static void note_capture(lagscope__hang_recorder *h, int rc, const lagscope__stack *s,
                         int main_thread) {
  h->captured_ns = lagscope__now_ns();
  h->unwinder_held = 1;
  if (rc == LAGSCOPE_ESIGNAL && s->walk == LAGSCOPE__WALK_SIGNAL_BLOCKED) {
    if (!main_thread || h->signal_blocked_reported) return;
    h->signal_blocked_reported = 1;
    lagscope__publish_error(rc, "the main thread blocks lagscope's capture signal %d (as an "
                            "app that reads signals with signalfd does): while it runs on the "
                            "CPU its stack cannot be taken, and hangs say so (unknown) rather "
                            "than guess; set config.capture_signal to a signal it leaves "
                            "unblocked", lagscope__capture_signal());
    return;
  }
  if (rc != LAGSCOPE_ESIGNAL || h->signal_lost_reported) return;
  h->signal_lost_reported = 1;
  lagscope__publish_error(rc, "the app installed its own handler on lagscope's capture signal "
                          "%d after start: threads on the CPU are no longer captured (their "
                          "stacks say no_reply), blocked ones still are; set "
                          "config.capture_signal to a signal the app does not use",
                          lagscope__capture_signal());
}

static void release_hang_buffers(lagscope__hang_recorder *h) {
  lagscope__dealloc(h->samples);
  lagscope__dealloc(h->threads);
  lagscope__dealloc(h->thread_targets);
  h->thread_targets = NULL;
  lagscope__dealloc(h->thread_info);
  lagscope__dealloc(h->thread_info_before);
  h->samples = h->threads = NULL;
  h->thread_info = h->thread_info_before = NULL;
  h->samples_capacity = 0;
  h->active = 0;
}

void lagscope__hang_recorder_free(lagscope__hang_recorder *h) {
  if (h == NULL) return;
  lagscope__recovery_stop(&h->recovery);
  h->unsaved_retry_ns = 0;
  lagscope__hang_recorder_retry(h); /* a last try: the files are marked ended either way */
  for (uint32_t i = 0; i < h->unsaved_count; i++) lagscope__dealloc(h->unsaved[i].json);
  release_hang_buffers(h);
  lagscope__dealloc(h->early);
  lagscope__standin_switch_free(&h->standin);
  lagscope__symbols_free(h->symbols);
  /* A stop soon after a capture: its objects list, page cache and unwinder go now, not with a
   * tidy that will not come (the monitor that captured has been joined). */
  if (h->unwinder_held) lagscope__capture_release_unwinder();
  lagscope__store_close(h->store);
  lagscope__dealloc(h);
}

/* ---- reports ---- */

static int resolve(void *ctx, uintptr_t address, int is_return, lagscope__stack_frame *out) {
  lagscope__hang_recorder *h = ctx;
  if (h->symbols == NULL) h->symbols = lagscope__symbols_new();
  h->symbols_used_ns = lagscope__now_ns();
  if (h->symbols == NULL) {
    memset(out, 0, sizeof(*out));
    out->address = address;
    out->build_id = "";
    return LAGSCOPE_ENOMEM;
  }
  return lagscope__symbols_resolve(h->symbols, address, is_return, out);
}

/* The final write failed: the file (of the first write) is marked ended, which needs no room,
 * and the text is kept, after those already waiting, to be written once the folder takes it
 * again. Returns 1 when kept; 0 past the bounds (UNSAVED_MAX, UNSAVED_BYTES_MAX) or without
 * memory, and *why then says why. A */
static int keep_unsaved(lagscope__hang_recorder *h, const char *json, char *why,
                        size_t why_size) {
  int64_t now_ms = lagscope__wall_ms();
  int rc = lagscope__store_mark_ended(h->store, h->data.id, now_ms);
  if (rc != LAGSCOPE_OK && rc != LAGSCOPE_ENOENT) /* ENOENT: no first write either */
    lagscope__publish_error(LAGSCOPE_ESYS, "hang %llu: its report could not be marked as "
                            "ended either: the next start will call it ended by termination",
                            (unsigned long long)h->data.hang_id);
  size_t size = strlen(json) + 1;
  if (h->unsaved_count == UNSAVED_MAX || h->unsaved_bytes + size > UNSAVED_BYTES_MAX) {
    lagscope__explain(why, why_size, "%u reports (%zu KiB) already wait for the folder, the "
                      "most lagscope keeps (%d reports, %u MiB)", h->unsaved_count,
                      h->unsaved_bytes / 1024, UNSAVED_MAX, UNSAVED_BYTES_MAX / (1024u * 1024u));
    return 0;
  }
  char *copy = lagscope__alloc(size);
  if (copy == NULL) {
    lagscope__explain(why, why_size, "no memory to keep it");
    return 0;
  }
  memcpy(copy, json, size);
  struct unsaved_report *u = &h->unsaved[h->unsaved_count++];
  u->json = copy;
  snprintf(u->id, sizeof(u->id), "%s", h->data.id);
  u->hang_id = h->data.hang_id;
  h->unsaved_bytes += size;
  if (h->unsaved_count == 1) h->unsaved_retry_ns = lagscope__now_ns() + RETRY_EVERY_NS;
  return 1;
}

int lagscope__hang_recorder_unsaved(const lagscope__hang_recorder *h) {
  return h != NULL ? (int)h->unsaved_count : 0;
}

/* How long since then, 0 when then is later than now (a use after now was read). */
static uint64_t idle_ns(uint64_t now_ns, uint64_t then_ns) {
  return now_ns > then_ns ? now_ns - then_ns : 0;
}

void lagscope__hang_recorder_tidy(lagscope__hang_recorder *h, uint64_t now_ns) {
  if (h == NULL) return;
  lagscope__recovery_tidy(&h->recovery);
  if (h->active) return;
  /* Early samples of a stall that ended below a hitch use the unwinder but not the index:
   * each is let go on its own clock. */
  lagscope__standin_switch_tidy(&h->standin, now_ns, SYMBOLS_KEEP_NS);
  if (h->symbols != NULL && idle_ns(now_ns, h->symbols_used_ns) >= SYMBOLS_KEEP_NS) {
    lagscope__symbols_free(h->symbols);
    h->symbols = NULL;
  }
  if (h->unwinder_held && idle_ns(now_ns, h->captured_ns) >= SYMBOLS_KEEP_NS) {
    lagscope__capture_release_unwinder(); /* its cache too: it comes back at the next stall */
    lagscope__thread_release_stack();     /* the pages its walks and the index's reads used */
    h->unwinder_held = 0;
  }
  /* The early ring (LAGSCOPE__EARLY_SAMPLES stacks, the pages a stall filled resident) goes with
   * the unwinder: an app whose only stall was at start-up need not keep it. Empty, since the
   * main thread answered. */
  if (h->early != NULL && h->early_count == 0 && !h->unwinder_held) {
    lagscope__dealloc(h->early);
    h->early = NULL;
    h->early_next = 0;
  }
}

void lagscope__hang_recorder_retry(lagscope__hang_recorder *h) {
  if (h == NULL || h->unsaved_count == 0 || h->store == NULL) return;
  uint64_t now = lagscope__now_ns();
  if (now < h->unsaved_retry_ns) return;
  char why[512];
  uint32_t written = 0;
  for (; written < h->unsaved_count; written++) { /* oldest first; the first failure waits */
    struct unsaved_report *u = &h->unsaved[written];
    if (lagscope__store_write(h->store, u->id, u->json, NULL, 0, why, sizeof(why)) != LAGSCOPE_OK)
      break;
    lagscope__log("hang %llu: its final report is stored now that the folder takes it",
                  (unsigned long long)u->hang_id);
    h->unsaved_bytes -= strlen(u->json) + 1;
    lagscope__dealloc(u->json);
  }
  memmove(h->unsaved, h->unsaved + written, (h->unsaved_count - written) * sizeof(h->unsaved[0]));
  h->unsaved_count -= written;
  h->unsaved_retry_ns = now + RETRY_EVERY_NS;
}

/* Builds the report's JSON and writes it; returns the public report for events (or NULL). */
static lagscope_hang_report *write_report(lagscope__hang_recorder *h, int want_payload) {
  char *json = NULL, *heaviest = NULL;
  int rc = lagscope__report_json(&h->data, resolve, h, &json, want_payload ? &heaviest : NULL);
  if (rc != LAGSCOPE_OK) {
    lagscope__publish_error(rc, "hang %llu: the report could not be built",
                            (unsigned long long)h->data.hang_id);
    return NULL;
  }
  char why[512];
  if (h->store != NULL &&
      lagscope__store_write(h->store, h->data.id, json, h->path, sizeof(h->path), why,
                            sizeof(why)) != LAGSCOPE_OK) {
    h->path[0] = '\0';
    char kept_why[200] = "";
    if (h->data.state != LAGSCOPE__REPORT_ENDED) /* the final write comes */
      lagscope__publish_error(LAGSCOPE_ESYS, "hang %llu: report not stored: %s",
                              (unsigned long long)h->data.hang_id, why);
    else if (keep_unsaved(h, json, kept_why, sizeof(kept_why)))
      lagscope__publish_error(LAGSCOPE_ESYS, "hang %llu: report not stored, kept and written "
                              "again when the folder takes it (%u waiting): %s",
                              (unsigned long long)h->data.hang_id, h->unsaved_count, why);
    else /* said first: the sentence may be cut at its end */
      lagscope__publish_error(LAGSCOPE_ESYS, "hang %llu: report not stored and not kept either "
                              "(%s): only its hang_ended event carries it; %s",
                              (unsigned long long)h->data.hang_id, kept_why, why);
  }
  uint32_t reopened = lagscope__store_reopened(h->store);
  if (reopened != h->store_reopened_said) { /* the app took the folder's descriptor */
    h->store_reopened_said = reopened;
    lagscope__publish_error(LAGSCOPE_ESYS, "the app closed or reused the report folder's "
                            "descriptor: lagscope left that number alone and opened %s anew",
                            lagscope__store_dir(h->store));
  }
  if (!want_payload) {
    lagscope__dealloc(json);
    return NULL;
  }
  lagscope_hang_report *report =
      lagscope__hang_report_new(h->data.id, h->data.hang_id, h->path, json, heaviest);
  char *cause = NULL;
  if (report != NULL &&
      lagscope__report_cause_json(&h->data, heaviest, resolve, h, &cause) == LAGSCOPE_OK)
    lagscope__hang_report_set_cause(report, cause);
  return report;
}

/* ---- the hang ---- */

static void make_id(lagscope__hang_recorder *h, int64_t wall_ms, uint64_t hang_id) {
  char when[LAGSCOPE__UTC_STAMP_SIZE];
  lagscope__utc_stamp(wall_ms, when);
  snprintf(h->data.id, sizeof(h->data.id), "%s-%d-%llu", when, (int)lagscope__process_id(),
           (unsigned long long)hang_id);
}

/* Captures every thread of info but lagscope's own, once, and keeps info in step with the
 * stacks (lagscope's threads are dropped from both). NULL when out of memory. */
static lagscope__stack *capture_threads(lagscope__hang_recorder *h, lagscope__usage *info,
                                        int32_t main_tid) {
  char why[256];
  /* the threads, with their states; memory is not wanted */
  lagscope__usage_read(info, NULL, LAGSCOPE__USAGE_DETAIL, why, sizeof(why));
  lagscope__stack *stacks = lagscope__alloc(sizeof(lagscope__stack) * (info->threads_len + 1));
  if (stacks == NULL) return NULL;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < info->threads_len; i++) {
    lagscope__thread_usage *t = &info->threads[i];
    lagscope__stack *s = &stacks[kept];
    uint64_t wait = t->tid == main_tid ? MAIN_ANSWER_NS : THREAD_ANSWER_NS;
    /* Another thread that blocks the signal says so in its stack's walk; only the main
     * thread's is said as an error (its samples make the verdict). */
    note_capture(h, lagscope__capture_stack(t->tid, s, wait), s, t->tid == main_tid);
    if (s->walk == LAGSCOPE__WALK_OWN) continue; /* lagscope's threads are not the app's */
    info->threads[kept++] = *t;
  }
  info->threads_len = kept;
  return stacks;
}

/* Names what each blocked thread waits on now, while its fds are still open. */
static char *describe_targets(const lagscope__stack *stacks, uint32_t count) {
  char *targets = lagscope__alloc((size_t)LAGSCOPE__TARGET_MAX * (count + 1));
  if (targets == NULL) return NULL;
  for (uint32_t i = 0; i < count; i++)
    lagscope__describe_wait_target(&stacks[i], targets + (size_t)i * LAGSCOPE__TARGET_MAX,
                                   LAGSCOPE__TARGET_MAX);
  return targets;
}

static void capture_all_threads(lagscope__hang_recorder *h) {
  h->threads = capture_threads(h, h->thread_info, h->data.main_tid);
  if (h->threads == NULL) return;
  h->data.threads = h->threads;
  h->data.thread_info = h->thread_info->threads;
  h->data.thread_count = h->thread_info->threads_len;
  for (uint32_t i = 0; i < h->data.thread_count; i++)
    if (h->threads[i].tid == h->data.main_tid)
      h->threads[i].loop_wait = (uint8_t)lagscope__loop_wait_is_own(&h->threads[i]);
  h->thread_targets = describe_targets(h->threads, h->data.thread_count);
  h->data.thread_targets = h->thread_targets;
}

static void note_sample_target(lagscope__report_data *r, const lagscope__stack *s) {
  lagscope__report_target_note(r->sample_targets, &r->sample_target_count, s, NULL);
}

static int grow_samples(lagscope__hang_recorder *h) {
  void *samples = h->samples;
  if (lagscope__grow_upto(&samples, &h->samples_capacity, h->data.sample_count,
                          sizeof(lagscope__stack), SAMPLES_INITIAL, SAMPLES_MAX) != LAGSCOPE_OK)
    return 0;
  h->samples = samples;
  h->data.samples = samples;
  return 1;
}

/* A sample of the main thread taken into s (rc: the capture's), noted; 1 when taken. The loop's
 * wait is judged by the fds open now: at once for the monitor's, at the slow work's end for
 * the stand-in's (fds judged from another thread would race with what the monitor learns). */
static int note_main_thread_sample(lagscope__hang_recorder *h, int rc, lagscope__stack *s) {
  note_capture(h, rc, s, 1);
  if (rc == LAGSCOPE_OK) s->loop_wait = (uint8_t)lagscope__loop_wait_is_own(s);
  return rc == LAGSCOPE_OK;
}

/* One sample of the main thread into s; 1 when taken. */
static int capture_main_thread(lagscope__hang_recorder *h, lagscope__stack *s) {
  int rc = lagscope__capture_stack(lagscope__main_thread_watched(), s, MAIN_ANSWER_NS);
  return note_main_thread_sample(h, rc, s);
}

/* The next sample's place in the hang, or NULL when it keeps no more (counted as dropped). */
static lagscope__stack *next_sample_slot(lagscope__hang_recorder *h) {
  if (h->data.sample_count == h->samples_capacity &&
      (h->samples_capacity == SAMPLES_MAX || !grow_samples(h))) {
    h->data.samples_dropped++;
    return NULL;
  }
  return &h->samples[h->data.sample_count];
}

/* The sample in its slot kept, or, not taken, counted: a moment of the hang nobody saw. */
static void keep_sample(lagscope__hang_recorder *h, int taken, lagscope__stack *s) {
  if (!taken) {
    h->data.samples_unseen++;
    h->data.signal_blocked |= s->walk == LAGSCOPE__WALK_SIGNAL_BLOCKED;
    return;
  }
  note_sample_target(&h->data, s);
  h->data.sample_count++;
}

void lagscope__hang_recorder_sample(lagscope__hang_recorder *h) {
  if (!h->active) return;
  lagscope__stack *s = next_sample_slot(h);
  if (s != NULL) keep_sample(h, capture_main_thread(h, s), s);
}

void lagscope__hang_recorder_slow_begin(lagscope__hang_recorder *h) {
  if (!h->active) return;
  lagscope__standin_switch_on(&h->standin, (uint64_t)h->config.hang_sample_interval_ms * 1000000u,
                              MAIN_ANSWER_NS);
}

void lagscope__hang_recorder_slow_end(lagscope__hang_recorder *h) {
  const lagscope__stack *taken;
  const int *results;
  uint32_t dropped;
  uint32_t n = lagscope__standin_switch_off(&h->standin, &taken, &results, &dropped);
  if (!h->active) return;
  h->data.samples_dropped += dropped;
  for (uint32_t i = 0; i < n; i++) {
    lagscope__stack *s = next_sample_slot(h);
    if (s == NULL) continue; /* counted */
    *s = taken[i];
    keep_sample(h, note_main_thread_sample(h, results[i], s), s);
  }
}

void lagscope__hang_recorder_sample_early(lagscope__hang_recorder *h) {
  if (h->active) return;
  if (h->early == NULL) {
    h->early = lagscope__alloc(sizeof(lagscope__stack) * LAGSCOPE__EARLY_SAMPLES);
    if (h->early == NULL) return; /* the hang's own samples still come */
  }
  if (!capture_main_thread(h, &h->early[h->early_next])) return;
  /* Named now: by the hang's start the call may be over and its fd another's (a read of a
   * pipe closed and the number reused by the next open). */
  lagscope__report_target_note(h->early_targets, &h->early_target_count,
                               &h->early[h->early_next], NULL);
  h->early_next = (h->early_next + 1) % LAGSCOPE__EARLY_SAMPLES;
  if (h->early_count < LAGSCOPE__EARLY_SAMPLES) h->early_count++;
}

void lagscope__hang_recorder_forget_early(lagscope__hang_recorder *h) {
  h->early_next = h->early_count = h->early_target_count = 0;
}

/* The ring's samples from r's start on, oldest first, become r's samples in out (room for
 * early_count), their wait targets named; with an end (not 0), only those taken wholly before
 * it: a capture that returned after the main thread's first sign of life may show it back in
 * its loop (a loaded machine runs a signal's handler late). F */
static void move_early_samples(lagscope__hang_recorder *h, lagscope__report_data *r,
                               uint64_t end_ns, lagscope__stack *out) {
  uint32_t first = (h->early_next + LAGSCOPE__EARLY_SAMPLES - h->early_count) %
                   LAGSCOPE__EARLY_SAMPLES;
  r->sample_count = 0;
  for (uint32_t i = 0; i < h->early_count; i++) {
    const lagscope__stack *s = &h->early[(first + i) % LAGSCOPE__EARLY_SAMPLES];
    if (s->time_ns < r->start_ns || (end_ns != 0 && s->done_ns > end_ns)) continue;
    out[r->sample_count] = *s;
    lagscope__report_target_note(r->sample_targets, &r->sample_target_count, s,
                                 lagscope__report_target_find(h->early_targets,
                                                              h->early_target_count, s));
    r->sample_count++;
  }
}

/* What the data of every report of the main thread starts with: its start, the config, the
 * thread. F */
static void report_data_init(const lagscope__hang_recorder *h, lagscope__report_data *r,
                             uint64_t start_ns) {
  memset(r, 0, sizeof(*r));
  r->start_ns = start_ns;
  r->threshold_ms = h->config.hang_threshold_ms;
  r->sample_interval_ms = h->config.hang_sample_interval_ms;
  r->count_idle = h->config.hang_count_idle;
  r->main_tid = lagscope__main_thread_watched();
}

char *lagscope__hang_recorder_hitch(lagscope__hang_recorder *h, uint64_t start_ns,
                                    uint64_t duration_ns, uint32_t *sample_count,
                                    const char **cause_json, const char **function) {
  *sample_count = 0;
  *cause_json = *function = NULL;
  lagscope__stack *samples =
      h->early_count > 0 ? lagscope__alloc(sizeof(lagscope__stack) * h->early_count) : NULL;
  lagscope__report_data r;
  report_data_init(h, &r, start_ns);
  r.duration_ns = duration_ns;
  r.samples = samples;
  if (samples != NULL) move_early_samples(h, &r, start_ns + duration_ns, samples);
  lagscope__hang_recorder_forget_early(h);
  char *stack = NULL, *cause = NULL, where[128];
  if (r.sample_count > 0) {
    lagscope__report_json(&r, resolve, h, NULL, &stack);
    lagscope__report_cause_json(&r, stack, resolve, h, &cause);
  }
  lagscope__report_telling_function(stack, where, sizeof(where));
  const char *stack_text = stack != NULL ? stack : "[]";
  size_t stack_size = strlen(stack_text) + 1, where_size = strlen(where) + 1;
  size_t cause_size = cause != NULL ? strlen(cause) + 1 : 0;
  char *payload = lagscope__payload_new(stack_size + where_size + cause_size, NULL);
  if (payload != NULL) {
    memcpy(payload, stack_text, stack_size);
    memcpy(payload + stack_size, where, where_size);
    *function = payload + stack_size;
    if (cause != NULL) {
      memcpy(payload + stack_size + where_size, cause, cause_size);
      *cause_json = payload + stack_size + where_size;
    }
    *sample_count = r.sample_count;
  }
  lagscope__dealloc(stack);
  lagscope__dealloc(cause);
  lagscope__dealloc(samples);
  return payload;
}

/* The ring's samples taken at or after the hang's start, oldest first, become its first. */
static void take_early_samples(lagscope__hang_recorder *h) {
  while (h->samples_capacity < h->early_count && h->samples_capacity < SAMPLES_MAX)
    if (!grow_samples(h)) break;
  if (h->samples_capacity >= h->early_count) move_early_samples(h, &h->data, 0, h->samples);
  lagscope__hang_recorder_forget_early(h);
}

void lagscope__hang_recorder_begin(lagscope__hang_recorder *h, uint64_t hang_id,
                                   uint64_t start_ns, int64_t start_wall_ms, int startup,
                                   const lagscope_metrics *before,
                                   const lagscope__usage *sample_before) {
  release_hang_buffers(h);
  report_data_init(h, &h->data, start_ns);
  h->active = 1;
  h->path[0] = '\0';
  lagscope__report_data *r = &h->data;
  make_id(h, start_wall_ms, hang_id);
  r->hang_id = hang_id;
  r->state = LAGSCOPE__REPORT_IN_PROGRESS;
  r->start_wall_ms = start_wall_ms;
  r->startup = startup;
  r->app_name = h->app_name;
  r->pid = lagscope__process_id();
  if (before != NULL) r->before = *before;
  h->thread_info = lagscope__alloc(sizeof(lagscope__usage));
  h->thread_info_before = lagscope__alloc(sizeof(lagscope__usage));
  if (h->thread_info == NULL || h->thread_info_before == NULL) {
    lagscope__publish_error(LAGSCOPE_ENOMEM, "hang %llu: no memory to record it",
                            (unsigned long long)hang_id);
    release_hang_buffers(h);
    return;
  }
  if (sample_before != NULL) {
    *h->thread_info_before = *sample_before;
    r->thread_info_before = h->thread_info_before->threads;
    r->thread_count_before = sample_before->threads_len;
  }
  take_early_samples(h);
  lagscope__hang_recorder_sample(h); /* the main thread first: it is what is stuck */
  capture_all_threads(h);
  if (sample_before != NULL) r->thread_cpu_window_ns = h->thread_info->time_ns - sample_before->time_ns;
  r->duration_ns = lagscope__now_ns() - start_ns;
}

uint64_t lagscope__hang_recorder_save(lagscope__hang_recorder *h, uint64_t duration_ns) {
  if (!h->active) return 0;
  uint64_t t0 = lagscope__now_ns();
  h->data.duration_ns = duration_ns;
  write_report(h, 0);
  return lagscope__now_ns() - t0;
}

void lagscope__hang_recorder_during(lagscope__hang_recorder *h, const lagscope_metrics *m) {
  if (!h->active) return;
  h->data.during = *m;
  h->data.have_during = 1;
}

lagscope_hang_report *lagscope__hang_recorder_end(lagscope__hang_recorder *h,
                                                  uint64_t duration_ns, uint64_t end_ns) {
  if (!h->active) return NULL;
  lagscope__report_drop_samples_after(&h->data, end_ns);
  h->data.state = LAGSCOPE__REPORT_ENDED;
  h->data.duration_ns = duration_ns;
  lagscope_hang_report *report = write_report(h, 1);
  release_hang_buffers(h);
  return report;
}

/* ---- the viewer's live view ---- */

char *lagscope__hang_recorder_latest_stack(lagscope__hang_recorder *h, uint32_t *sample_count) {
  *sample_count = h->data.sample_count;
  if (!h->active || h->data.sample_count == 0) return NULL;
  char *text = NULL;
  if (lagscope__report_stack_json(&h->samples[h->data.sample_count - 1], resolve, h, &text) !=
      LAGSCOPE_OK)
    return NULL;
  char *payload = lagscope__payload_text(text);
  lagscope__dealloc(text);
  return payload;
}

int lagscope__hang_recorder_capture_now(lagscope__hang_recorder *h,
                                        const lagscope__usage *before, char **out) {
  *out = NULL;
  lagscope__usage *info = lagscope__alloc(sizeof(*info));
  if (info == NULL) return LAGSCOPE_ENOMEM;
  uint64_t start_ns = lagscope__now_ns();
  lagscope__report_data r = {.main_tid = lagscope__main_thread_watched(),
                             .start_wall_ms = lagscope__wall_ms()};
  lagscope__stack *stacks = capture_threads(h, info, r.main_tid);
  int rc = LAGSCOPE_ENOMEM;
  if (stacks != NULL) {
    r.duration_ns = lagscope__now_ns() - start_ns;
    r.threads = stacks;
    r.thread_info = info->threads;
    r.thread_count = info->threads_len;
    if (before != NULL && info->time_ns > before->time_ns) {
      r.thread_info_before = before->threads;
      r.thread_count_before = before->threads_len;
      r.thread_cpu_window_ns = info->time_ns - before->time_ns;
    }
    rc = lagscope__report_threads_json(&r, resolve, h, out);
  }
  lagscope__dealloc(stacks);
  lagscope__dealloc(info);
  return rc;
}

void lagscope__hang_recorder_recover(lagscope__hang_recorder *h) {
  if (h->store != NULL) lagscope__recovery_start(&h->recovery, h->store, h->report_dir);
}
