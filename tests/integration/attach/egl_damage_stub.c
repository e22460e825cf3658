/* A stand-in for an EGL driver's extension entry points, for egl_damage: Mesa's software EGL
 * (Xvfb, weston's pixman) offers no swap with damage, which GPUs' drivers do. Its
 * eglGetProcAddress hands out a swap with damage that only counts its calls. */
#include <string.h>

typedef unsigned (*swap_damage_fn)(void *display, void *surface, const int *rects, int n);

static unsigned swaps;

static unsigned stub_swap_with_damage(void *display, void *surface, const int *rects, int n) {
  (void)display, (void)surface, (void)rects, (void)n;
  swaps++;
  return 1;
}

void *eglGetProcAddress(const char *name) {
  if (strcmp(name, "eglSwapBuffersWithDamageKHR") == 0) return (void *)stub_swap_with_damage;
  return NULL;
}

unsigned egl_damage_stub_swaps(void) { return swaps; }
