/*
 * The environment the window tests give the SDL demo (window_hud.c, window_overlay.c): SDL's
 * X11 driver on the test's Xvfb, no leak check, and under TSan SDL's software renderer.
 */
#ifndef LAGSCOPE_TEST_DEMO_ENV_H
#define LAGSCOPE_TEST_DEMO_ENV_H

#include "check.h" /* LAGSCOPE_TEST_UNDER_TSAN */

#include <stdio.h>
#include <stdlib.h>

static inline void demo_env_for_window(void) {
  setenv("SDL_VIDEODRIVER", "x11", 1);
  /* Under ASan, no leak check for this run: SDL dlopens X11's libraries and unloads them at
   * SDL_Quit, so what they keep until exit shows as leaks from an unknown module that no
   * suppression can name (and D-Bus and fontconfig keep their caches). The demo's own leak
   * checks are the headless runs of tests/integration/demo. */
  char asan[8192];
  const char *old = getenv("ASAN_OPTIONS");
  snprintf(asan, sizeof asan, "%s%sdetect_leaks=0", old ? old : "", old && old[0] ? ":" : "");
  setenv("ASAN_OPTIONS", asan, 1);
#ifdef LAGSCOPE_TEST_UNDER_TSAN
  /* Mesa's llvmpipe (SDL's OpenGL renderer here) runs threads TSan cannot see into and reports
   * races inside it: under TSan the demo draws with SDL's software renderer into a plain X11
   * framebuffer (not one SDL would otherwise back with an OpenGL texture). */
  setenv("SDL_RENDER_DRIVER", "software", 1);
  setenv("SDL_FRAMEBUFFER_ACCELERATION", "0", 1);
#endif
}

#endif
