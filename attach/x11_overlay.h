/* The HUD in an X11 window of lagscope's own, over the program's main window (x11_overlay.c).
 *
 * Drawn by a thread of lagscope's on a display connection of its own (XCB), so that it is
 * redrawn while the program's main thread is stuck: during a hang its badge counts up live.
 * Never the program's connection or thread; errors on lagscope's connection are replies on that
 * connection (XCB), so none reaches the program's Xlib error handler. */
#ifndef LAGSCOPE_ATTACH_X11_OVERLAY_H
#define LAGSCOPE_ATTACH_X11_OVERLAY_H

/* Where lagscope-run shows the HUD (--hud-mode). */
typedef enum lagscope__hud_mode {
  LAGSCOPE__HUD_AUTO = 0,   /* in GL and SDL frames; the overlay for a program without them */
  LAGSCOPE__HUD_FRAME = 1,  /* in GL and SDL frames only */
  LAGSCOPE__HUD_OVERLAY = 2 /* the overlay only, GL and SDL programs included */
} lagscope__hud_mode;

/* Set once by the preload's constructor, before any hook runs. */
void lagscope__overlay_set_mode(lagscope__hud_mode mode);

/* The program opened a connection to display (NULL: $DISPLAY). The first call starts the
 * overlay's thread, which opens a connection of its own to the same display; later calls do
 * nothing. Any thread; allocates nothing; creates a thread once. */
void lagscope__overlay_app_connected(const char *display);

/* A window the program draws its frames into (glXSwapBuffers' drawable): the overlay's window
 * when none carries the program's _NET_WM_PID. Main thread; one relaxed atomic store. */
void lagscope__overlay_saw_window(unsigned long window);

/* A hang began or ended: the overlay redraws now, not at its next period. Dispatcher thread;
 * takes the overlay's wait lock for an instant. */
void lagscope__overlay_wake(void);

/* 1 when the frame hooks may draw the HUD into the program's frame (they then own
 * lagscope_hud_take, which has one taker at a time); 0 while the overlay shows it. Main thread;
 * lock-free. */
int lagscope__overlay_frame_may_draw(void);

/* Stops the thread and closes its connection, waiting at most about a second (a stuck X server
 * must not hold the program's exit: the thread is then left behind, said). Before lagscope_stop;
 * the exit's thread. */
void lagscope__overlay_stop(void);

/* In a child forked without exec: the thread is not there; nothing of the overlay runs. */
void lagscope__overlay_forget_in_child(void);

#endif
