/* A real main loop, really stalled. argv[1] picks the case:
 *   stall-600      one 600 ms stall: exactly one hang of at least 250 ms, and it ends
 *   stall-50       50 ms stalls every 200 ms for 3 s: no hang
 *   heartbeat-600  as stall-600 in heartbeat mode (no post_main) */
#include "check.h"
#include "host_loop.h"
#include "recorder.h"

#include <string.h>

typedef struct scenario {
  recorder rec;
  uint32_t stall_ms;
  uint64_t every_frames;   /* stall every N frames; 0: once, at frame 30 */
  uint64_t stalls_done;
  uint64_t last_stall_end; /* test_now_ns() */
  int heartbeat;
} scenario;

static void stall_frame(host_loop *loop, uint64_t frame, void *user) {
  (void)loop;
  scenario *s = user;
  if (s->heartbeat) lagscope_heartbeat();
  int due = s->every_frames != 0 ? frame > 0 && frame % s->every_frames == 0 : frame == 30;
  if (!due) return;
  test_stall_busy(s->stall_ms);
  s->stalls_done++;
  s->last_stall_end = test_now_ns();
}

/* Done once the hang ended and a full second of normal frames followed it. */
static int hang_over_and_settled(void *user) {
  scenario *s = user;
  return recorder_count(&s->rec, LAGSCOPE_EVENT_HANG_ENDED) >= 1 &&
         test_now_ns() - s->last_stall_end > 1000000000u;
}

static void run(scenario *s, double max_seconds, host_done_fn done) {
  host_loop *loop = host_loop_new(60);
  lagscope_config c = lagscope_config_default();
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* the viewer: loopback, any free port */
  if (!s->heartbeat) c.post_main = host_loop_post, c.post_main_user = loop;
  c.on_event = recorder_on_event, c.on_event_user = &s->rec;
  c.sample_interval_ms = 100; /* more metrics events: proof the monitor kept running */
  CHECK_EQ_INT(lagscope_start(&c), 0);
  host_loop_run(loop, stall_frame, done, s, max_seconds);
  CHECK_EQ_INT(lagscope_stop(), 0); /* delivers everything published before it */
  host_loop_free(loop);
}

static void one_long_stall(int heartbeat) {
  scenario s;
  memset(&s, 0, sizeof(s));
  recorder_init(&s.rec);
  s.stall_ms = 600;
  s.heartbeat = heartbeat;
  run(&s, 10, hang_over_and_settled);
  CHECK_EQ_INT(s.stalls_done, 1);
  CHECK_EQ_INT(s.rec.began_len, 1);
  CHECK_EQ_INT(s.rec.ended_len, 1);
  CHECK_EQ_INT(s.rec.began[0].as.hang_began.hang_id, s.rec.ended[0].as.hang_ended.hang_id);
  CHECK(s.rec.began[0].sequence < s.rec.ended[0].sequence);
  double ms = (double)s.rec.ended[0].as.hang_ended.duration_ns / 1e6;
  printf("hang: %.1f ms for a 600 ms stall\n", ms);
  CHECK(ms >= 250);
  CHECK(ms <= 600 + 100); /* a lower bound of the stall, plus scheduling slack */
  CHECK_EQ_INT(s.rec.out_of_order, 0);
  CHECK(recorder_count(&s.rec, LAGSCOPE_EVENT_METRICS) >= 5);
  CHECK_EQ_INT(s.rec.last_metrics.hangs, 1);
  CHECK_EQ_INT(s.rec.last_metrics.hang_in_progress, 0);
  recorder_destroy(&s.rec);
}

static void short_stalls(void) {
  scenario s;
  memset(&s, 0, sizeof(s));
  recorder_init(&s.rec);
  s.stall_ms = 50;
  s.every_frames = 12; /* 200 ms at 60 Hz */
  run(&s, 3, NULL);
  CHECK(s.stalls_done >= 8);
  CHECK_EQ_INT(s.rec.began_len, 0);
  CHECK_EQ_INT(s.rec.ended_len, 0);
  CHECK(recorder_count(&s.rec, LAGSCOPE_EVENT_METRICS) >= 20);
  /* The stalls are visible as frame drops, just not as hangs. */
  CHECK(s.rec.last_metrics.frames.total_dropped >= s.stalls_done);
  printf("no hang in %llu stalls of 50 ms; %llu frames dropped\n",
         (unsigned long long)s.stalls_done,
         (unsigned long long)s.rec.last_metrics.frames.total_dropped);
  recorder_destroy(&s.rec);
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  if (strcmp(argv[1], "stall-600") == 0)
    one_long_stall(0);
  else if (strcmp(argv[1], "heartbeat-600") == 0)
    one_long_stall(1);
  else if (strcmp(argv[1], "stall-50") == 0)
    short_stalls();
  else
    CHECK(!"unknown case");
  return 0;
}
