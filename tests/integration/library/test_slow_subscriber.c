/* One subscriber that blocks for 2 s neither stalls the others nor the bus: they keep
 * receiving, and what the slow one could not queue is counted as dropped. */
#include "check.h"
#include "host_loop.h"
#include "recorder.h"

#include <stdatomic.h>
#include <unistd.h>

static _Atomic int slow_blocked, slow_calls;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;

static void slow(const lagscope_event *e, void *user) {
  (void)e, (void)user;
  atomic_fetch_add(&slow_calls, 1);
  atomic_store(&slow_blocked, 1);
  pthread_mutex_lock(&gate); /* held by the test: this subscriber is stuck */
  pthread_mutex_unlock(&gate);
}

typedef struct progress {
  recorder *fast;
  int target;
} progress;

static int fast_reached(void *user) {
  progress *p = user;
  return recorder_count(p->fast, LAGSCOPE_EVENT_METRICS) >= p->target;
}

int main(void) {
  recorder fast;
  recorder_init(&fast);
  lagscope_config c = lagscope_config_default();
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* the viewer: loopback, any free port */
  c.usage_interval_ms = 50;
  c.subscriber_capacity = 16;
  pthread_mutex_lock(&gate);
  CHECK_EQ_INT(lagscope_start(&c), 0);
  CHECK_EQ_INT(lagscope_subscribe(slow, NULL, NULL), 0);
  CHECK_EQ_INT(lagscope_subscribe(recorder_on_event, &fast, NULL), 0);
  host_loop *loop = host_loop_new(60);
  /* 40 metrics events while the slow one is stuck on its first: more than its 16 slots. */
  progress p = {&fast, 40};
  CHECK(host_loop_run(loop, NULL, fast_reached, &p, 10));
  CHECK(atomic_load(&slow_blocked));
  CHECK_EQ_INT(atomic_load(&slow_calls), 1);
  lagscope_metrics m;
  CHECK_EQ_INT(lagscope_metrics_latest(&m), 0);
  printf("while one subscriber is stuck: the other got %d events, %llu dropped\n",
         recorder_count(&fast, LAGSCOPE_EVENT_METRICS), (unsigned long long)m.events_dropped);
  CHECK(m.events_dropped > 0);
  pthread_mutex_unlock(&gate);
  CHECK_EQ_INT(lagscope_stop(), 0);
  CHECK(atomic_load(&slow_calls) >= 16); /* what it had queued was delivered at stop */
  CHECK_EQ_INT(fast.out_of_order, 0);
  host_loop_free(loop);
  recorder_destroy(&fast);
  return 0;
}
