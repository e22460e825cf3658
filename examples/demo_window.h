/*
 * The demo's window (SDL2): moving content drawn each frame with lagscope's HUD over it, in
 * lagscope's overlay window (X11) or composited into the frame, and the window's events
 * serviced from the demo's main loop. Everything here runs on the
 * main thread except demo_window_wake(). Built only when CMake finds SDL2 (DEMO_HAVE_WINDOW).
 */
#ifndef DEMO_WINDOW_H
#define DEMO_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#define DEMO_WINDOW_WIDTH 800
#define DEMO_WINDOW_HEIGHT 480

typedef struct demo_window demo_window;

/* What the user asked for while the loop waited. */
typedef struct demo_window_input {
  int stall; /* the `s` key: stall once */
  int quit;  /* `q`, Escape or the window's close button */
} demo_window_input;

/* Opens the window. NULL when there is no display (or SDL fails), with the reason in why.
 * expanded: the HUD's initial state, toggled by the `h` key. */
demo_window *demo_window_open(const char *title, int expanded, char *why, size_t why_size);

/* Where the HUD goes, once lagscope runs (before the first demo_window_draw). overlay 1: in
 * lagscope's overlay window over this one (lagscope_hud_overlay_x11, X11 only), which a thread of
 * lagscope's redraws, so that its badge counts up live while the main thread stalls; 0: composited
 * into each frame (lagscope_hud_take), so frozen with the frame during a stall; -1: the overlay
 * where SDL's window is an X11 one, the frame elsewhere. An overlay that cannot be had (a
 * Wayland window, a lagscope built without XCB) leaves the HUD in the frames, said on stderr
 * (unless -1 found no X11 window). Returns 1 when the overlay shows the HUD. */
int demo_window_show_hud(demo_window *w, int overlay);

/* Waits up to wait_ns for window events or demo_window_wake(), handles them (keys set *in,
 * `h` toggles the HUD with lagscope_hud_set_expanded) and returns. */
void demo_window_wait(demo_window *w, uint64_t wait_ns, demo_window_input *in);

/* Draws one frame: the moving content at time now_ns, then (unless the overlay shows it) the
 * latest HUD image over it, and presents it (no vsync: the loop paces itself). */
void demo_window_draw(demo_window *w, uint64_t now_ns);

/* Any thread, e.g. the post_main hook: makes a pending demo_window_wait return soon.
 * Does nothing unless a window is open. */
void demo_window_wake(void);

/* Closes the window and SDL. Call after lagscope_stop, so that no post_main wakes it. */
void demo_window_close(demo_window *w);

#endif
