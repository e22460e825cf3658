/* The HUD is drawn off the main thread: a host loop that takes the HUD every frame and
 * stalls into a hang does no drawing itself. lagscope is linked statically into this test, so
 * the cairo functions defined here stand in for cairo's own: each counts the thread that
 * called it and forwards to the real one (dlsym RTLD_NEXT). */
#define _GNU_SOURCE
#include "check.h"
#include "host_loop.h"
#include "recorder.h"

#include <cairo.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pid_t main_tid;
static _Atomic long drawing_on_main, drawing_elsewhere;

static void count(void) {
  if ((pid_t)syscall(SYS_gettid) == main_tid)
    atomic_fetch_add(&drawing_on_main, 1);
  else
    atomic_fetch_add(&drawing_elsewhere, 1);
}

#define FORWARD(name, params, args)                                     \
  void name params {                                                    \
    static void(*real) params;                                          \
    if (real == NULL) *(void **)&real = dlsym(RTLD_NEXT, #name);        \
    count();                                                            \
    real args;                                                          \
  }

FORWARD(cairo_fill, (cairo_t * cr), (cr))
FORWARD(cairo_stroke, (cairo_t * cr), (cr))
FORWARD(cairo_paint, (cairo_t * cr), (cr))
FORWARD(cairo_show_text, (cairo_t * cr, const char *utf8), (cr, utf8))

typedef struct host {
  recorder rec;
  uint64_t takes, take_ns, images, last_sequence;
  uint64_t stall_end_ns;
  int stalled;
  uint64_t first_image_after_hang; /* sequence of the first image taken after the stall */
} host;

static void frame(host_loop *loop, uint64_t i, void *user) {
  (void)loop;
  host *h = user;
  lagscope_hud_image image;
  uint64_t t0 = test_now_ns();
  int rc = lagscope_hud_take(&image);
  h->take_ns += test_now_ns() - t0;
  h->takes++;
  if (rc == 0 && image.sequence != h->last_sequence) {
    CHECK(image.pixels != NULL && image.width > 0 && image.height > 0);
    CHECK(image.stride >= image.width * 4);
    h->images++;
    h->last_sequence = image.sequence;
    if (h->stalled && h->first_image_after_hang == 0) h->first_image_after_hang = image.sequence;
  }
  if (i == 60) { /* a second in: stall into a hang */
    test_stall_busy(700);
    h->stalled = 1;
    h->stall_end_ns = test_now_ns();
  }
}

static int done(void *user) {
  host *h = user;
  return h->stalled && recorder_count(&h->rec, LAGSCOPE_EVENT_HANG_ENDED) >= 1 &&
         test_now_ns() - h->stall_end_ns > 1000000000u;
}

int main(void) {
  main_tid = (pid_t)syscall(SYS_gettid);
  static host h;
  recorder_init(&h.rec);
  host_loop *loop = host_loop_new(60);
  lagscope_config c = lagscope_config_default();
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* the viewer: loopback, any free port */
  c.post_main = host_loop_post, c.post_main_user = loop;
  c.on_event = recorder_on_event, c.on_event_user = &h.rec;
  c.hud_scale = 2;
  lagscope_hud_image image;
  CHECK_EQ_INT(lagscope_hud_take(&image), LAGSCOPE_ENOTRUNNING);
  CHECK_EQ_INT(lagscope_start(&c), 0);
  CHECK(host_loop_run(loop, frame, done, &h, 15));
  CHECK_EQ_INT(lagscope_stop(), 0);
  CHECK_EQ_INT(lagscope_hud_take(&image), LAGSCOPE_ENOTRUNNING);
  host_loop_free(loop);

  printf("main thread: %ld drawing calls; other threads: %ld; %llu images in %llu takes, "
         "%.0f ns a take\n",
         atomic_load(&drawing_on_main), atomic_load(&drawing_elsewhere),
         (unsigned long long)h.images, (unsigned long long)h.takes,
         (double)h.take_ns / (double)h.takes);
  CHECK_EQ_INT(atomic_load(&drawing_on_main), 0);
  CHECK(atomic_load(&drawing_elsewhere) > 0);
  CHECK(h.images >= 3);
  /* At most 4 redraws a second, plus the urgent ones (hang began, hang ended, the first). */
  double seconds = (double)h.takes / 60.0;
  CHECK_MSG(h.images <= seconds * 4 + 4, "%llu images in %.1f s", (unsigned long long)h.images,
            seconds);
  CHECK(h.first_image_after_hang > 0); /* the hang's image was waiting when the stall ended */
  recorder_destroy(&h.rec);
  return 0;
}
