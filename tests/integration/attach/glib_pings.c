/* A GLib program (no GTK, no window) that knows nothing of lagscope, for lagscope-run's tests:
 * its default main loop idles for --idle-ms (default 1500), stalls --stall-ms (default 500) in
 * a g_timeout_add callback, idles --idle-ms again, and quits. Only g_main_loop_run is ever
 * called, once: every ping after it can be answered only by what lagscope put in the loop.
 *
 * It replaces malloc, calloc and realloc (glibc calls them through the PLT, GLib too) to note
 * who allocates on threads named lagscope-*: at exit it prints on stderr
 * "glib_pings: lagscope's threads allocated N times through GLib (M in all)". Posting a ping
 * into GLib's loop should allocate nothing there. */
#define _GNU_SOURCE
#include "subject.h"

#include <dlfcn.h>
#include <glib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t size);

#define NOTED_MAX 4096

static void *noted_callers[NOTED_MAX]; /* who called malloc, calloc or realloc there */
static atomic_uint noted_count;

/* 1 on a thread named lagscope-* (checked each time: a thread may allocate before naming
 * itself). */
static int on_lagscope_thread(void) {
  char name[17] = "";
  return prctl(PR_GET_NAME, name) == 0 && strncmp(name, "lagscope", 8) == 0;
}

static void note_caller(void *caller) {
  if (!on_lagscope_thread()) return;
  unsigned at = atomic_fetch_add(&noted_count, 1);
  if (at < NOTED_MAX) noted_callers[at] = caller;
}

void *malloc(size_t size) {
  note_caller(__builtin_return_address(0));
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  note_caller(__builtin_return_address(0));
  return __libc_calloc(count, size);
}

void *realloc(void *p, size_t size) {
  note_caller(__builtin_return_address(0));
  return __libc_realloc(p, size);
}

static unsigned stall_ms = 500, idle_ms = 1500;
static GMainLoop *loop;

static gboolean quit_callback(gpointer unused) {
  (void)unused;
  g_main_loop_quit(loop);
  return G_SOURCE_REMOVE;
}

/* Not inlined, so that the stack holds it by name. */
__attribute__((noinline)) static gboolean glib_pings_stall(gpointer unused) {
  (void)unused;
  double end = now_ms() + stall_ms;
  volatile unsigned long spins = 0;
  while (now_ms() < end) spins++;
  g_timeout_add(idle_ms, quit_callback, NULL);
  return G_SOURCE_REMOVE;
}

/* The allocations noted whose caller is in GLib's library. */
static unsigned through_glib(unsigned noted) {
  unsigned found = 0;
  for (unsigned i = 0; i < noted && i < NOTED_MAX; i++) {
    Dl_info info;
    if (dladdr(noted_callers[i], &info) != 0 && info.dli_fname != NULL &&
        strstr(info.dli_fname, "libglib-2.0") != NULL)
      found++;
  }
  return found;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--stall-ms") == 0)
      stall_ms = number_after("glib_pings", &i, argc, argv);
    else if (strcmp(argv[i], "--idle-ms") == 0)
      idle_ms = number_after("glib_pings", &i, argc, argv);
    else {
      fprintf(stderr, "glib_pings: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  loop = g_main_loop_new(NULL, FALSE);
  g_timeout_add(idle_ms, glib_pings_stall, NULL);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
  unsigned noted = atomic_load(&noted_count);
  fprintf(stderr, "glib_pings: lagscope's threads allocated %u times through GLib (%u in all)\n",
          through_glib(noted), noted);
  return 0;
}
