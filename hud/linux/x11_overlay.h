/* The HUD in an X11 window of lagscope's own, over a window of the program's (x11_overlay.c;
 * x11_overlay_off.c where the library was built without XCB).
 *
 * Drawn by a thread of lagscope's on a display connection of its own (XCB), so that it is
 * redrawn while the program's main thread is stuck: during a hang its badge counts up live.
 * Never the program's connection or thread; errors on lagscope's connection are replies on that
 * connection (XCB), so none reaches the program's Xlib error handler.
 *
 * Two ways in: an app that knows its window asks for it (lagscope_hud_overlay_x11, lagscope.h);
 * lagscope-run's preload starts it when the program opens a display (the functions below), and
 * the overlay then finds the program's window itself. Either way it is stopped by lagscope_stop
 * (the overlay is a consumer, lagscope__hud_x11_consumer), and exists only while lagscope runs
 * with config.hud on. */
#ifndef LAGSCOPE_HUD_X11_OVERLAY_H
#define LAGSCOPE_HUD_X11_OVERLAY_H

/* How the overlay's error events begin ("no HUD overlay on display :0: …": it could not
 * connect, or the X server died under it): the preload passes them on to lagscope-run, whose
 * summary says the last (attach/run_summary.c matches the same words). */
#define LAGSCOPE__HUD_X11_FAILED "no HUD overlay"

/* Where lagscope-run shows the HUD (--hud-mode). */
typedef enum lagscope__hud_mode {
  LAGSCOPE__HUD_AUTO = 0,   /* in GL and SDL frames; the overlay for a program without them */
  LAGSCOPE__HUD_FRAME = 1,  /* in GL and SDL frames only */
  LAGSCOPE__HUD_OVERLAY = 2 /* the overlay only, GL and SDL programs included */
} lagscope__hud_mode;

/* Set once by the preload's constructor, before any hook runs. */
void lagscope__hud_x11_set_mode(lagscope__hud_mode mode);

/* 1 (the default): the thread reads the display's refresh rate from RandR every 2 s and tells
 * the core (lagscope__linux_set_refresh_hz), whatever the HUD; 0: lagscope-run was given the
 * rate (--refresh-hz). Set once by the preload's constructor, before any hook runs. */
void lagscope__hud_x11_set_measure_refresh(int on);

/* The program opened a connection to display (NULL: $DISPLAY). The first call starts the
 * thread, which opens a connection of its own to the same display, reads the display's rate
 * (unless given) and, when may_draw and the HUD is on and not in the frame mode, shows the HUD
 * over the program's biggest window (_NET_WM_PID), else the window its GL swaps drew; a later
 * call may add the HUD (may_draw), nothing else. LAGSCOPE_OK, LAGSCOPE_ENOTRUNNING when
 * lagscope does not run, LAGSCOPE_ENOTSUP when built without XCB. Any thread; creates a thread
 * once. */
int lagscope__hud_x11_app_connected(const char *display, int may_draw);

/* A window the program draws its frames into (glXSwapBuffers' drawable): the overlay's window
 * when none carries the program's _NET_WM_PID. Main thread; one relaxed atomic store. */
void lagscope__hud_x11_saw_window(unsigned long window);

/* 1 when the frame hooks may draw the HUD into the program's frame (they then own
 * lagscope_hud_take, which has one taker at a time); 0 while the overlay shows it. Main thread;
 * lock-free. */
int lagscope__hud_x11_frame_may_draw(void);

/* In a child forked without exec: the thread is not there; nothing of the overlay runs. */
void lagscope__hud_x11_forget_in_child(void);

#endif
