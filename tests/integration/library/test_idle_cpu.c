/* lagscope's own threads stay idle in an idle app, with the HUD on: whether the host never
 * takes the HUD, takes it once and then no more (a dispatcher once spun at 100 % waiting for
 * the next take), or takes it every frame.
 * The bound is generous: a spinning thread shows ~100 %, an idle monitor a fraction of 1 %. */
#include "check.h"
#include "host_loop.h"
#include "recorder.h"

enum { NEVER, ONCE, EVERY_FRAME };
static int taking, taken_once;

static void frame(host_loop *loop, uint64_t i, void *user) {
  (void)loop, (void)i, (void)user;
  lagscope_hud_image image;
  if (taking == EVERY_FRAME || (taking == ONCE && !taken_once))
    taken_once = lagscope_hud_take(&image) == 0;
}

static double own_cpu_after(int take_every_frame) {
  recorder rec;
  recorder_init(&rec);
  taking = take_every_frame;
  taken_once = 0;
  host_loop *loop = host_loop_new(60);
  lagscope_config c = lagscope_config_default();
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* the viewer: loopback, any free port */
  c.post_main = host_loop_post, c.post_main_user = loop;
  c.on_event = recorder_on_event, c.on_event_user = &rec;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  host_loop_run(loop, frame, NULL, NULL, 3);
  CHECK_EQ_INT(lagscope_stop(), 0);
  host_loop_free(loop);
  CHECK(recorder_count(&rec, LAGSCOPE_EVENT_METRICS) >= 4);
  double cpu = rec.last_metrics.monitor_cpu_percent;
  recorder_destroy(&rec);
  return cpu;
}

int main(void) {
  double never = own_cpu_after(NEVER), once = own_cpu_after(ONCE);
  double every = own_cpu_after(EVERY_FRAME);
  printf("lagscope's threads, %% of a core: HUD never taken %.3f, taken once %.3f, taken every "
         "frame %.3f\n", never, once, every);
  CHECK(never < 20.0);
  CHECK(once < 20.0);
  CHECK(every < 20.0);
  return 0;
}
