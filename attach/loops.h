/* The loops lagscope-run sees in a program it did not change: one list, read by both processes.
 *
 * The preload (hooks.c) marks a loop seen when one of its hooks runs on the main thread, and
 * tells lagscope-run which it saw in a run_loops line (preload.c); lagscope-run reads that line
 * (run_summary.c: one field per loop) and, when none was seen, says so with the loops' names
 * (run_summary.c's summary, run_summary_output.c's JUnit error, run.c's --json error and
 * --help). Each of those derives what it needs from LAGSCOPE__RUN_LOOPS; a new loop is a line
 * here first (docs/hacking.md, "Recipe: a new toolkit in lagscope-run").
 *
 * XX(ID, key, name, brief, hooks):
 *   ID     LAGSCOPE__LOOP_<ID>, the loop's bit in the preload (hooks.c's loop_pass and
 *          frame_presented take it)
 *   key    the run_loops line's member and lagscope-run's field (an identifier)
 *   name   as the summary, the JUnit file and --json say it ("no GLib, SDL2, … loop")
 *   brief  as --help says it
 *   hooks  the hooks that show it (hooks.c), for the reader; docs/guide.md's table says more.
 * The order is the line's and the sentence's: appending keeps both as they were. */
#ifndef LAGSCOPE_ATTACH_LOOPS_H
#define LAGSCOPE_ATTACH_LOOPS_H

#include <stddef.h>
#include <stdio.h>

#define LAGSCOPE__RUN_LOOPS(XX)                                                                    \
  XX(GLIB, glib, "GLib", "GLib",                                                                   \
     "g_main_loop_run, g_main_context_iteration, g_application_run, gdk_window_end_draw_frame")   \
  XX(SDL, sdl, "SDL2", "SDL2",                                                                     \
     "SDL_PollEvent, SDL_WaitEvent, SDL_WaitEventTimeout, SDL_RenderPresent, SDL_GL_SwapWindow")  \
  XX(GL, gl, "OpenGL (glX, EGL)", "GL",                                                            \
     "glXSwapBuffers, eglSwapBuffers, eglSwapBuffersWithDamageKHR, eglSwapBuffersWithDamageEXT")  \
  XX(X11, x11, "Xlib", "Xlib", "XNextEvent")                                                      \
  XX(VULKAN, vulkan, "Vulkan", "Vulkan", "vkQueuePresentKHR")                                     \
  XX(WAYLAND, wayland, "Wayland", "Wayland", "wl_display_dispatch, wl_proxy_marshal_flags")

/* The loops' positions, then their bits (the preload's lagscope__preload_loops). */
enum {
#define LAGSCOPE__LOOP_POSITION(id, key, name, brief, hooks) LAGSCOPE__LOOP_POSITION_##id,
  LAGSCOPE__RUN_LOOPS(LAGSCOPE__LOOP_POSITION)
#undef LAGSCOPE__LOOP_POSITION
  LAGSCOPE__LOOP_COUNT
};
enum {
#define LAGSCOPE__LOOP_BIT(id, key, name, brief, hooks) \
  LAGSCOPE__LOOP_##id = 1u << LAGSCOPE__LOOP_POSITION_##id,
  LAGSCOPE__RUN_LOOPS(LAGSCOPE__LOOP_BIT)
#undef LAGSCOPE__LOOP_BIT
};

/* The loops' names as a sentence lists them, into out: "GLib, SDL2, OpenGL (glX, EGL) or Xlib"
 * (brief: "GLib, SDL2, GL or Xlib"); cut short when size is too small. F */
static inline void lagscope__run_loop_names(char *out, size_t size, int brief) {
#define LAGSCOPE__LOOP_NAME(id, key, name, brief_name, hooks) {name, brief_name},
  static const char *const names[][2] = {LAGSCOPE__RUN_LOOPS(LAGSCOPE__LOOP_NAME)};
#undef LAGSCOPE__LOOP_NAME
  size_t used = 0;
  if (size == 0) return;
  out[0] = '\0';
  for (size_t i = 0; i < LAGSCOPE__LOOP_COUNT && used < size; i++) {
    const char *sep = i == 0 ? "" : i + 1 == LAGSCOPE__LOOP_COUNT ? " or " : ", ";
    int n = snprintf(out + used, size - used, "%s%s", sep, names[i][brief ? 1 : 0]);
    if (n < 0) return;
    used += (size_t)n;
  }
}

#endif
