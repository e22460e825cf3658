/* GTK 3 / GLib: lagscope hooked into GLib's main loop (docs/guide.md "GTK / GLib").
 *
 * The ping is answered by a source of ours in the default main context, at G_PRIORITY_DEFAULT,
 * attached once by the main thread; posting a ping stores it and wakes the loop:
 * - not g_main_context_invoke, which runs the function at once on the calling thread (the
 *   monitor's) when the loop is not running: an unanswered stall would look answered;
 * - not g_idle_add, whose G_PRIORITY_DEFAULT_IDLE waits behind GTK's own idle work (layout,
 *   redraws), so a busy but healthy app looks hung;
 * - not a g_idle_add_full per ping either: it would allocate on lagscope's monitor thread (a
 *   malloc arena of its own, kept by the process) and take the context's lock, which the main
 *   thread can then wait on.
 * Frames come from the window's frame clock ("after-paint"): GTK draws only when something
 * changed, so an idle app has none, which is not a hang (the pings say whether it answers). */
#include "example.h"

#include <gtk/gtk.h>
#include <stdatomic.h>

static _Atomic(lagscope_main_fn) ping_fn; /* the waiting ping's function and argument */
static _Atomic(void *) ping_arg;
static atomic_int ping_waiting;

static gboolean ping_prepare(GSource *source, gint *timeout) {
  (void)source;
  *timeout = -1; /* the wake-up says when */
  return atomic_load(&ping_waiting);
}

static gboolean ping_check(GSource *source) {
  (void)source;
  return atomic_load(&ping_waiting);
}

static gboolean ping_dispatch(GSource *source, GSourceFunc callback, gpointer data) {
  (void)source, (void)callback, (void)data;
  if (atomic_exchange(&ping_waiting, 0)) atomic_load(&ping_fn)(atomic_load(&ping_arg));
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs ping_funcs = {ping_prepare, ping_check, ping_dispatch, NULL, NULL, NULL};

/* lagscope's post_main, on its monitor thread: no allocation, no lock, a wake-up. */
static int post_to_glib(lagscope_main_fn fn, void *arg, void *user) {
  (void)user;
  atomic_store(&ping_fn, fn);
  atomic_store(&ping_arg, arg);
  atomic_store(&ping_waiting, 1);
  g_main_context_wakeup(NULL);
  return 0;
}

/* The ping's source, attached to the default main context by the main thread. */
static void attach_ping_source(void) {
  GSource *source = g_source_new(&ping_funcs, sizeof(GSource));
  g_source_attach(source, NULL);
  g_source_unref(source);
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
  attach_ping_source();
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
