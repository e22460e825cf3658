/* A GLib program that knows nothing of lagscope, for the comparison's test (compare.test.sh)
 * and lagscope-run's channel test (run_channel.test.sh): its main loop stalls once in
 * compare_known_stall (a 400 ms sleep) at 0.5 s (--stall-at MS: then) and, with --new-stall,
 * once more in compare_new_stall (400 ms on the CPU) 0.8 s later, and quits 0.9 s after that.
 * --stall-ms MS: the known stall lasts MS (400 by default; run_gate.test.sh kills it during
 * a long one, as a CI job's timeout would). --file-limit BYTES: no file of this process grows past BYTES (RLIMIT_FSIZE, SIGXFSZ ignored:
 * the write fails with EFBIG), as on a full disk, from main() on. */
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int new_stall;
static unsigned stall_ms = 400;

/* Not inlined, so that each stall's stack names it. */
__attribute__((noinline)) static void compare_known_stall(void) { g_usleep((gulong)stall_ms * 1000); }

__attribute__((noinline)) static void compare_new_stall(void) {
  gint64 end = g_get_monotonic_time() + 400 * 1000;
  volatile unsigned long spins = 0;
  while (g_get_monotonic_time() < end) spins++;
}

static gboolean quit(gpointer loop) {
  g_main_loop_quit(loop);
  return G_SOURCE_REMOVE;
}

/* Each stall from a timeout of its own, the loop running between them: two hangs. */
static gboolean known(gpointer unused) {
  (void)unused;
  compare_known_stall();
  return G_SOURCE_REMOVE;
}

static gboolean added(gpointer unused) {
  (void)unused;
  compare_new_stall();
  return G_SOURCE_REMOVE;
}

int main(int argc, char **argv) {
  unsigned stall_at = 500;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--new-stall") == 0) {
      new_stall = 1;
    } else if (strcmp(argv[i], "--stall-at") == 0 && i + 1 < argc) {
      stall_at = (unsigned)strtoul(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--stall-ms") == 0 && i + 1 < argc) {
      stall_ms = (unsigned)strtoul(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--file-limit") == 0 && i + 1 < argc) {
      struct rlimit limit;
      limit.rlim_cur = limit.rlim_max = strtoul(argv[++i], NULL, 10);
      signal(SIGXFSZ, SIG_IGN);
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) {
        perror("glib_two_stalls: setrlimit");
        return 2;
      }
    } else {
      fprintf(stderr, "glib_two_stalls: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  g_timeout_add(stall_at, known, NULL);
  if (new_stall) g_timeout_add(stall_at + 800, added, NULL);
  g_timeout_add(stall_at + 1700, quit, loop);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
  return 0;
}
