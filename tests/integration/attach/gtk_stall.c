/* A GTK 3 program that knows nothing of lagscope, for lagscope-run's tests: a window with a
 * label (and with --button, above it, a button that retitles the window "gtk_stall clicked"), one stall of --stall-ms (default 700; 0: none) in a g_timeout_add callback after
 * --stall-after-ms (default 1000), then it quits --quit-after-ms later (default 1000).
 * A click also says "gtk_stall: clicked" on stdout.
 * The stall spins on the CPU in attach_stall_callback, the function its hang must name. */
#include "subject.h"

#include <gtk/gtk.h>
#include <string.h>

static unsigned stall_ms = 700, stall_after_ms = 1000, quit_after_ms = 1000;
static int with_button;

static void clicked(GtkButton *button, gpointer window) {
  (void)button;
  gtk_window_set_title(GTK_WINDOW(window), "gtk_stall clicked");
  printf("gtk_stall: clicked\n"); /* where no X server tells the title: Wayland */
  fflush(stdout);
}

static gboolean quit_callback(gpointer unused) {
  (void)unused;
  gtk_main_quit();
  return G_SOURCE_REMOVE;
}

/* Not inlined, so that the stack holds it by name. */
__attribute__((noinline)) static gboolean attach_stall_callback(gpointer label) {
  double end = now_ms() + stall_ms;
  volatile unsigned long spins = 0;
  while (now_ms() < end) spins++;
  gtk_label_set_text(GTK_LABEL(label), "stalled once");
  g_timeout_add(quit_after_ms, quit_callback, NULL);
  return G_SOURCE_REMOVE;
}

int main(int argc, char **argv) {
  gtk_init(&argc, &argv);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--stall-ms") == 0)
      stall_ms = number_after("gtk_stall", &i, argc, argv);
    else if (strcmp(argv[i], "--stall-after-ms") == 0)
      stall_after_ms = number_after("gtk_stall", &i, argc, argv);
    else if (strcmp(argv[i], "--quit-after-ms") == 0)
      quit_after_ms = number_after("gtk_stall", &i, argc, argv);
    else if (strcmp(argv[i], "--button") == 0)
      with_button = 1;
    else {
      fprintf(stderr, "gtk_stall: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  GtkWidget *window = gtk_window_new(GTK_WINDOW_TOPLEVEL);
  gtk_window_set_title(GTK_WINDOW(window), "gtk_stall");
  gtk_window_set_default_size(GTK_WINDOW(window), 320, 120);
  GtkWidget *label = gtk_label_new("about to stall");
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  if (with_button) {
    GtkWidget *button = gtk_button_new_with_label("click me through the HUD");
    g_signal_connect(button, "clicked", G_CALLBACK(clicked), window);
    gtk_box_pack_start(GTK_BOX(box), button, TRUE, TRUE, 0);
  }
  gtk_box_pack_start(GTK_BOX(box), label, TRUE, TRUE, 0);
  gtk_container_add(GTK_CONTAINER(window), box);
  g_signal_connect(window, "destroy", G_CALLBACK(gtk_main_quit), NULL);
  gtk_widget_show_all(window);
  if (stall_ms > 0)
    g_timeout_add(stall_after_ms, attach_stall_callback, label);
  else
    g_timeout_add(stall_after_ms + quit_after_ms, quit_callback, NULL);
  gtk_main();
  return 0;
}
