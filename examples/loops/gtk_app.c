/* GTK 3 / GLib: lagscope hooked into GLib's main loop (README "GTK / GLib").
 *
 * The ping goes through g_idle_add_full at G_PRIORITY_DEFAULT on the default main context:
 * - not g_main_context_invoke, which runs the function at once on the calling thread (the
 *   monitor's) when the loop is not running: an unanswered stall would look answered;
 * - not g_idle_add, whose G_PRIORITY_DEFAULT_IDLE waits behind GTK's own idle work (layout,
 *   redraws), so a busy but healthy app looks hung.
 * Frames come from the window's frame clock ("after-paint"): GTK draws only when something
 * changed, so an idle app has none, which is not a hang (the pings say whether it answers). */
#include "example.h"

#include <gtk/gtk.h>

typedef struct main_call {
  lagscope_main_fn fn;
  void *arg;
} main_call;

static gboolean run_main_call(gpointer data) {
  main_call *call = data;
  call->fn(call->arg);
  return G_SOURCE_REMOVE;
}

/* lagscope's post_main: on the monitor thread; GLib's queue is thread-safe. */
static int post_to_glib(lagscope_main_fn fn, void *arg, void *user) {
  (void)user;
  main_call *call = g_new(main_call, 1);
  call->fn = fn;
  call->arg = arg;
  g_idle_add_full(G_PRIORITY_DEFAULT, run_main_call, call, g_free);
  return 0;
}

static void after_paint(GdkFrameClock *clock, gpointer user) {
  (void)clock;
  (void)user;
  lagscope_frame();
}

static void count_frames(GtkWidget *window, gpointer user) {
  (void)user;
  g_signal_connect(gtk_widget_get_frame_clock(window), "after-paint", G_CALLBACK(after_paint), NULL);
}

static gboolean stall_once(gpointer ms) {
  example_stall(GPOINTER_TO_UINT(ms));
  return G_SOURCE_REMOVE;
}

static gboolean quit(gpointer user) {
  (void)user;
  gtk_main_quit();
  return G_SOURCE_REMOVE;
}

int main(int argc, char **argv) {
  gtk_init(&argc, &argv);
  example_options o = example_parse(argc, argv);
  lagscope_config config = lagscope_config_default();
  config.post_main = post_to_glib; /* lagscope_start on this, the main, thread */
  if (example_start(&o, &config) != LAGSCOPE_OK) return 1;

  GtkWidget *window = gtk_window_new(GTK_WINDOW_TOPLEVEL);
  gtk_window_set_title(GTK_WINDOW(window), "lagscope: GTK example");
  gtk_container_add(GTK_CONTAINER(window), gtk_label_new("Watched by lagscope"));
  g_signal_connect(window, "realize", G_CALLBACK(count_frames), NULL);
  g_signal_connect(window, "destroy", G_CALLBACK(gtk_main_quit), NULL);
  gtk_widget_show_all(window);
  if (o.stall_ms) g_timeout_add(1000, stall_once, GUINT_TO_POINTER(o.stall_ms));
  if (o.seconds) g_timeout_add_seconds(o.seconds, quit, NULL);
  gtk_main();
  lagscope_stop();
  return 0;
}
