/* A program that presents with eglSwapBuffersWithDamageKHR, got from eglGetProcAddress as GL
 * toolkits and Wayland clients get it, and knows nothing of lagscope, for lagscope-run's tests:
 * --frames frames (default 150), one every 16 ms, with one stall of --stall-ms (default 800) on
 * the CPU in attach_egl_stall after the 60th. Its EGL is egl_damage_stub.c (see there); at its
 * end it prints "egl_damage: N swaps with damage". */
#define _GNU_SOURCE
#include "subject.h"

#include <string.h>
#include <time.h>

typedef unsigned (*swap_damage_fn)(void *display, void *surface, const int *rects, int n);
void *eglGetProcAddress(const char *name);
unsigned egl_damage_stub_swaps(void);

__attribute__((noinline)) static void attach_egl_stall(unsigned ms) {
  double end = now_ms() + ms;
  while (now_ms() < end) {
  }
}

int main(int argc, char **argv) {
  unsigned frames = 150, stall_ms = 800;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--frames") == 0)
      frames = number_after("egl_damage", &i, argc, argv);
    else if (strcmp(argv[i], "--stall-ms") == 0)
      stall_ms = number_after("egl_damage", &i, argc, argv);
    else
      return fprintf(stderr, "egl_damage: unknown option %s\n", argv[i]), 2;
  }
  swap_damage_fn swap = (swap_damage_fn)eglGetProcAddress("eglSwapBuffersWithDamageKHR");
  int damage[4] = {0, 0, 64, 64};
  for (unsigned i = 0; i < frames; i++) {
    if (i == 60) attach_egl_stall(stall_ms);
    swap(NULL, NULL, damage, 1);
    struct timespec frame = {0, 16 * 1000000};
    nanosleep(&frame, NULL);
  }
  printf("egl_damage: %u swaps with damage\n", egl_damage_stub_swaps());
  return 0;
}
