/* A GTK 4 program that knows nothing of lagscope, for lagscope-run's tests: a window whose
 * drawing area animates every frame (a tick callback queues its redraw), for --run-ms (default
 * 4000) in all, with one stall of --stall-ms (default 800; 0: none) on the CPU in
 * attach_gtk4_stall after --stall-after-ms (default 1500). At its end it prints on stdout the
 * frames it drew and its own cadence ("gtk4_stall: N frames in M ms, K fps outside the stall":
 * from its first frame to its last, the stall's time left out):
 * the figures lagscope's must match. Runs on any GDK backend and GSK renderer (GDK_BACKEND,
 * GSK_RENDERER). With --print-presented it also prints the presentation times GDK gave its
 * frames ("gtk4_stall: presented at (us): T1 T2 ...", from its frame clock's complete
 * timings, 0 where GDK had none): the times lagscope's frame times must come from. */
#include "subject.h"

#include <gtk/gtk.h>
#include <string.h>

static unsigned run_ms = 4000, stall_ms = 800, stall_after_ms = 1500;
static double start_ms, stall_began_ms, stall_ended_ms, first_draw_ms, last_draw_ms;
static unsigned frames;
static GtkWidget *window;
static int print_presented;
static gint64 presented_us[4096];
static unsigned presented_len;
static gint64 presented_seen; /* the frame counter read up to */

/* Not inlined, so that the stack holds it by name. */
__attribute__((noinline)) static void attach_gtk4_stall(unsigned ms) {
  double end = now_ms() + ms;
  volatile unsigned long spins = 0;
  while (now_ms() < end) spins++;
}

static void draw(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer unused) {
  (void)area, (void)unused;
  double t = (now_ms() - start_ms) / 1000.0;
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.2);
  cairo_paint(cr);
  cairo_set_source_rgb(cr, 0.9, 0.6, 0.1);
  cairo_rectangle(cr, (width - 40) * (0.5 + 0.5 * __builtin_sin(t * 3)), height / 2.0 - 20, 40, 40);
  cairo_fill(cr);
  last_draw_ms = now_ms();
  if (frames++ == 0) first_draw_ms = last_draw_ms;
}

/* The presentation times of the frames whose timings completed since the last tick. */
static void note_presented(GdkFrameClock *clock) {
  gint64 now = gdk_frame_clock_get_frame_counter(clock);
  for (gint64 c = presented_seen + 1; c < now; c++) {
    GdkFrameTimings *t = gdk_frame_clock_get_timings(clock, c);
    if (t != NULL && !gdk_frame_timings_get_complete(t)) break;
    if (t != NULL && presented_len < G_N_ELEMENTS(presented_us))
      presented_us[presented_len++] = gdk_frame_timings_get_presentation_time(t);
    presented_seen = c;
  }
}

static gboolean tick(GtkWidget *area, GdkFrameClock *clock, gpointer unused) {
  (void)unused;
  if (presented_seen == 0) presented_seen = gdk_frame_clock_get_frame_counter(clock) - 1;
  note_presented(clock);
  double now = now_ms();
  if (stall_ms > 0 && stall_began_ms == 0 && now - start_ms >= stall_after_ms) {
    stall_began_ms = now;
    attach_gtk4_stall(stall_ms);
    stall_ended_ms = now_ms();
  }
  if (now - start_ms >= run_ms) {
    gtk_window_destroy(GTK_WINDOW(window));
    return G_SOURCE_REMOVE;
  }
  gtk_widget_queue_draw(area);
  return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--stall-ms") == 0)
      stall_ms = number_after("gtk4_stall", &i, argc, argv);
    else if (strcmp(argv[i], "--stall-after-ms") == 0)
      stall_after_ms = number_after("gtk4_stall", &i, argc, argv);
    else if (strcmp(argv[i], "--print-presented") == 0)
      print_presented = 1;
    else if (strcmp(argv[i], "--run-ms") == 0)
      run_ms = number_after("gtk4_stall", &i, argc, argv);
    else {
      fprintf(stderr, "gtk4_stall: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  gtk_init();
  window = gtk_window_new();
  gtk_window_set_title(GTK_WINDOW(window), "gtk4_stall");
  gtk_window_set_default_size(GTK_WINDOW(window), 320, 160);
  GtkWidget *area = gtk_drawing_area_new();
  gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), draw, NULL, NULL);
  gtk_window_set_child(GTK_WINDOW(window), area);
  gtk_widget_add_tick_callback(area, tick, NULL, NULL);
  start_ms = now_ms();
  gtk_window_present(GTK_WINDOW(window));
  /* GTK 4's own loop: iterate until the window is gone. */
  while (g_list_model_get_n_items(gtk_window_get_toplevels()) > 0)
    g_main_context_iteration(NULL, TRUE);
  /* Its own cadence: the frames between its first and last, the stall's time left out. */
  double drawing_s = (last_draw_ms - first_draw_ms - (stall_ended_ms - stall_began_ms)) / 1000.0;
  printf("gtk4_stall: %u frames in %.0f ms, %.1f fps outside the stall\n", frames,
         last_draw_ms - first_draw_ms, drawing_s > 0 ? (frames - 1) / drawing_s : 0.0);
  if (print_presented) {
    printf("gtk4_stall: presented at (us):");
    for (unsigned i = 0; i < presented_len; i++) printf(" %" G_GINT64_FORMAT, presented_us[i]);
    printf("\n");
  }
  return 0;
}
