/* A GLib program whose one stall (a 500 ms sleep at 0.3 s) comes through a static function the
 * optimiser inlines (settle) and one that tail-calls the sleep (nap), for optimiser.test.sh:
 * built at -O0 and at -O2, its stall must have one signature (issue 44, item 6). */
#include <glib.h>

static unsigned naps;

/* At -O2 a tail call: nap's frame is gone, on_timeout's return address follows g_usleep's. */
__attribute__((noinline)) static void nap(unsigned ms) { g_usleep((gulong)ms * 1000); }

/* Static and called once: inlined into on_timeout at -O2. */
static void settle(void) {
  nap(500);
  naps++;
}

static gboolean quit(gpointer loop) {
  g_main_loop_quit(loop);
  return G_SOURCE_REMOVE;
}

static gboolean on_timeout(gpointer loop) {
  settle();
  g_timeout_add(300, quit, loop);
  return G_SOURCE_REMOVE;
}

int main(void) {
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  g_timeout_add(300, on_timeout, loop);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
  return naps == 1 ? 0 : 1;
}
