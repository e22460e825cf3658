/* Start and stop: 100 cycles leave no thread and no byte behind (ASan checks the rest);
 * stop is idempotent and safe from other threads; misuse gets a clear code. */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "host_loop.h"
#include "http_probe.h"
#include "internal.h"
#include "recorder.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int count_events(void *user) {
  return recorder_count(user, LAGSCOPE_EVENT_METRICS) >= 1;
}

/* A thread count of prefix reaches want within 5 s (a thread that returned leaves the task
 * list a moment later). */
static int thread_count_becomes(const char *prefix, int want) {
  uint64_t deadline = test_now_ns() + 5000000000ull;
  struct timespec pause = {0, 5 * 1000 * 1000};
  while (test_thread_count_named(prefix) != want && test_now_ns() < deadline)
    nanosleep(&pause, NULL);
  return test_thread_count_named(prefix) == want;
}

/* Nobody has opened the viewer: its socket listens, but civetweb and its workers are not
 * there. The first request, sent before civetweb is up, is answered by it; the viewer's
 * thread stays (it stops civetweb at the end, from the descriptor table civetweb's threads
 * share with it). */
static void viewer_starts_at_first_client(void) {
  /* monitor, bus, 2 subscribers, the viewer's delivery and its waiting thread (and, for a
   * moment at start, the thread that recovers stored reports) */
  CHECK(thread_count_becomes("lagscope-", 6));
  CHECK_EQ_INT(test_thread_count_named("civetweb"), 0);
  char url[256], path[200];
  unsigned port = 0;
  CHECK_EQ_INT(lagscope_viewer_url(url, sizeof(url)), 0);
  CHECK(sscanf(url, "http://127.0.0.1:%u/", &port) == 1);
  CHECK(test_listening_fd((uint16_t)port) >= 0);
  snprintf(path, sizeof(path), "/api/v1/status?%s", strstr(url, "token="));
  CHECK_EQ_INT(test_http_status((uint16_t)port, path), 200);
  CHECK(test_thread_count_named("civetweb") > 0);
  CHECK(thread_count_becomes("lagscope-", 6));
  CHECK_EQ_INT(test_http_status((uint16_t)port, "/api/v1/status?token=0000"), 401);
}

static void test_hundred_cycles(void) {
  host_loop *loop = host_loop_new(1000);
  for (int i = 0; i < 100; i++) {
    recorder rec;
    recorder_init(&rec);
    lagscope_config c = lagscope_config_default();
    c.post_main = host_loop_post, c.post_main_user = loop;
    c.usage_interval_ms = 50;
    c.on_event = recorder_on_event, c.on_event_user = &rec;
    c.server_port = 0, c.server_bind = "127.0.0.1"; /* the viewer starts and stops each time */
    CHECK_EQ_INT(lagscope_start(&c), 0);
    CHECK_EQ_INT(lagscope_start(&c), LAGSCOPE_EALREADY);
    lagscope_subscription extra;
    CHECK_EQ_INT(lagscope_subscribe(recorder_on_event, &rec, &extra), 0);
    if (i % 10 == 0) /* now and then, run until real work happened */
      CHECK(host_loop_run(loop, NULL, count_events, &rec, 5));
    if (i == 0) viewer_starts_at_first_client();
    if (i % 2 == 0) CHECK_EQ_INT(lagscope_unsubscribe(extra), 0);
    CHECK_EQ_INT(lagscope_stop(), 0);
    CHECK_EQ_INT(lagscope_stop(), LAGSCOPE_ENOTRUNNING);
    CHECK_EQ_INT(lagscope_unsubscribe(extra), LAGSCOPE_ENOTRUNNING);
    recorder_destroy(&rec);
  }
  host_loop_free(loop);
  /* No thread left: none by name, none in lagscope's own registry. (The total is not
   * compared: sanitizer runtimes start threads of their own.) */
  CHECK_EQ_INT(test_thread_count_named("lagscope-"), 0);
  CHECK_EQ_INT(test_thread_count_named("civetweb"), 0);
  int32_t own[8];
  CHECK_EQ_INT(lagscope__thread_own_ids(own, 8), 0);
  CHECK_EQ_INT(lagscope__memory_in_use(), 0);
  lagscope_metrics m;
  CHECK_EQ_INT(lagscope_metrics_latest(&m), 0); /* kept past stop */
}

static void *stop_from_thread(void *arg) {
  (void)arg;
  return (void *)(intptr_t)lagscope_stop();
}

/* Eight threads stop at once: exactly one does it, the others find it stopped. */
static void test_concurrent_stops(void) {
  lagscope_config c = lagscope_config_default(); /* heartbeat mode, defaults */
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* but the viewer: loopback, any free port */
  CHECK_EQ_INT(lagscope_start(&c), 0);
  pthread_t t[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, stop_from_thread, NULL);
  int ok = 0, not_running = 0;
  for (int i = 0; i < 8; i++) {
    void *rc;
    pthread_join(t[i], &rc);
    if ((intptr_t)rc == 0) ok++;
    if ((intptr_t)rc == LAGSCOPE_ENOTRUNNING) not_running++;
  }
  CHECK_EQ_INT(ok, 1);
  CHECK_EQ_INT(not_running, 7);
  CHECK(!lagscope_is_running());
}

/* From a callback, stop and self-unsubscribe would join the calling thread: refused. */
static _Atomic int callback_stop_rc, callback_unsubscribe_rc, callback_ran;
static lagscope_subscription self_id;
static void misbehaving_callback(const lagscope_event *e, void *user) {
  (void)e, (void)user;
  if (atomic_exchange(&callback_ran, 1)) return;
  atomic_store(&callback_stop_rc, lagscope_stop());
  atomic_store(&callback_unsubscribe_rc, lagscope_unsubscribe(self_id));
}

static int callback_done(void *user) {
  (void)user;
  return atomic_load(&callback_ran) && atomic_load(&callback_unsubscribe_rc) != 0;
}

static void test_calls_from_callbacks(void) {
  lagscope_config c = lagscope_config_default();
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* the viewer: loopback, any free port */
  c.usage_interval_ms = 50;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  CHECK_EQ_INT(lagscope_subscribe(misbehaving_callback, NULL, &self_id), 0);
  host_loop *loop = host_loop_new(100);
  CHECK(host_loop_run(loop, NULL, callback_done, NULL, 5));
  host_loop_free(loop);
  CHECK_EQ_INT(atomic_load(&callback_stop_rc), LAGSCOPE_EDEADLK);
  CHECK_EQ_INT(atomic_load(&callback_unsubscribe_rc), LAGSCOPE_EDEADLK);
  CHECK(lagscope_is_running());
  CHECK_EQ_INT(lagscope_unsubscribe(self_id), 0); /* from outside, fine */
  CHECK_EQ_INT(lagscope_unsubscribe(self_id), LAGSCOPE_ENOENT);
  CHECK_EQ_INT(lagscope_subscribe(NULL, NULL, NULL), LAGSCOPE_EINVAL);
  CHECK_EQ_INT(lagscope_stop(), 0);
  CHECK_EQ_INT(lagscope_subscribe(recorder_on_event, NULL, NULL), LAGSCOPE_ENOTRUNNING);
}

/* Before any start there is nothing to read. */
static void test_metrics_before_start(void) {
  lagscope_metrics m;
  CHECK_EQ_INT(lagscope_metrics_latest(&m), LAGSCOPE_ENODATA);
  CHECK_EQ_INT(lagscope_metrics_latest(NULL), LAGSCOPE_EINVAL);
}

/* The metrics keep their cadence: a monitor awake anyway may take a sample a little early,
 * but the next is still due an interval after the last was due. 50 ms samples over 1.5 s of
 * a 60 Hz heartbeat loop, where the monitor looks two frame budgets after each heartbeat
 * (~40 times a second): about 30, not one a look. */
static int one_and_a_half_seconds(void *user) {
  return test_now_ns() >= *(uint64_t *)user;
}

static void heartbeat(host_loop *loop, uint64_t frame, void *user) {
  (void)loop, (void)frame, (void)user;
  lagscope_heartbeat();
}

static void test_metrics_cadence(void) {
  recorder rec;
  recorder_init(&rec);
  host_loop *loop = host_loop_new(60);
  lagscope_config c = lagscope_config_default();
  c.server = 0;
  c.usage_interval_ms = 50;
  c.on_event = recorder_on_event, c.on_event_user = &rec;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  uint64_t until = test_now_ns() + 1500000000ull;
  host_loop_run(loop, heartbeat, one_and_a_half_seconds, &until, 5);
  CHECK_EQ_INT(lagscope_stop(), 0);
  host_loop_free(loop);
  int metrics = recorder_count(&rec, LAGSCOPE_EVENT_METRICS);
  printf("%d metrics events in 1.5 s at 50 ms\n", metrics);
  CHECK_MSG(metrics >= 22 && metrics <= 38, "%d metrics events in 1.5 s at 50 ms", metrics);
  recorder_destroy(&rec);
}

/* A run that ends between two samples (a timedemo's last frames, then exit) leaves its final
 * frame count: stop publishes a last metrics event whose total_frames counts every frame. The
 * interval is a minute, so that no sample falls inside the run. */
static void test_last_metrics_at_stop(void) {
  enum { FRAMES = 37 };
  recorder rec;
  recorder_init(&rec);
  lagscope_config c = lagscope_config_default();
  c.server = 0;
  c.hud = 0;
  c.usage_interval_ms = 60000;
  c.on_event = recorder_on_event, c.on_event_user = &rec;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  for (int i = 0; i < FRAMES; i++) {
    struct timespec frame = {0, 4 * 1000 * 1000};
    nanosleep(&frame, NULL);
    lagscope_frame();
  }
  CHECK_EQ_INT(lagscope_stop(), 0);
  int metrics = recorder_count(&rec, LAGSCOPE_EVENT_METRICS);
  pthread_mutex_lock(&rec.lock);
  unsigned long long total = (unsigned long long)rec.last_metrics.frames.total_frames;
  pthread_mutex_unlock(&rec.lock);
  printf("%d metrics events, the last with total_frames %llu of %d\n", metrics, total, FRAMES);
  CHECK_MSG(metrics == 1, "%d metrics events in a run shorter than its interval", metrics);
  CHECK_MSG(total == FRAMES, "the last metrics say %llu frames of %d", total, FRAMES);
  recorder_destroy(&rec);
}

static const test_case cases[] = {
    TEST_CASE(last_metrics_at_stop),
    TEST_CASE(metrics_cadence),
    TEST_CASE(metrics_before_start),
    TEST_CASE(hundred_cycles),
    TEST_CASE(concurrent_stops),
    TEST_CASE(calls_from_callbacks),
};

/* Each case, and all of them, leave no byte behind. */
int main(int argc, char **argv) {
  int rc = run_test_case(argc, argv, cases, CASE_COUNT(cases));
  CHECK_EQ_INT(lagscope__memory_in_use(), 0);
  return rc;
}
