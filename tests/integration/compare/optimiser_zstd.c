/* A GLib loop around zstd's own example program (Debian's libzstd-dev ships it as source:
 * simple_compression.c, built unchanged but for its main's name), for optimiser.test.sh: from
 * a timeout, it compresses FILE into FILE.zst; the test makes FILE.zst a FIFO no one reads
 * yet, so the example stalls opening it, in its static helpers (fopen_orDie <- saveFile_orDie
 * <- compress_orDie), all inlined into its main at -O2. */
#include <glib.h>

int zstd_example_main(int argc, const char **argv);

static const char *file;

static gboolean compress(gpointer loop) {
  const char *argv[] = {"simple_compression", file, NULL};
  if (zstd_example_main(2, argv) != 0) g_printerr("optimiser_zstd: the example failed\n");
  g_main_loop_quit(loop);
  return G_SOURCE_REMOVE;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    g_printerr("usage: optimiser_zstd FILE\n");
    return 2;
  }
  file = argv[1];
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  g_timeout_add(100, compress, loop);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
  return 0;
}
