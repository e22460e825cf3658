/* The HUD on Wayland (wayland_hud.c): a desynchronized wl_subsurface of the program's toplevel
 * surface, on a wl_event_queue of lagscope's, drawn into wl_shm buffers and committed by a
 * thread of lagscope's, so that it stays live (its hang badge counting) while the program's
 * main thread is stuck. Compositors give ordinary clients no window above another's, but any
 * client may add a subsurface to its own window: lagscope, in the process, is that client.
 *
 * lagscope-run's preload drives it from its libwayland hooks (attach/hooks_wayland.c); the
 * program's libwayland-client is used as the program loaded it (looked up with dlsym), never
 * loaded by lagscope. None of these takes a lock the program can wait on. */
#ifndef LAGSCOPE_HUD_WAYLAND_HUD_H
#define LAGSCOPE_HUD_WAYLAND_HUD_H

/* How its error events begin: the preload passes them to lagscope-run (the X11 overlay's words,
 * x11_overlay.h's LAGSCOPE__HUD_X11_FAILED, so that lagscope-run's summary says them too). */
#define LAGSCOPE__HUD_WL_FAILED "no HUD overlay on Wayland"

/* The program connected to a Wayland display: the thread starts (once per process), makes its
 * queue, binds wl_compositor, wl_subcompositor and wl_shm on a registry of its own and makes
 * the HUD's surface (an empty input region). Main thread; creates a thread. */
void lagscope__hud_wl_connected(void *display);

/* The program is about to commit its toplevel surface (main thread, before the commit is
 * sent): the first time, the HUD's subsurface is made a child of it (desynchronized); its
 * placement, like every later move, applies with this very commit. geometry: the program's
 * window geometry in the surface (xdg_surface.set_window_geometry; width 0 when never set),
 * where the HUD's corner goes. Requests only: never a round trip, never a wait. */
void lagscope__hud_wl_before_commit(void *toplevel, int x, int y, int width, int height);

/* 1 while the HUD is shown on Wayland, or about to be: its thread started on the program's
 * display and neither failed (a compositor without wl_subcompositor) nor stopped. The HUD in
 * the program's own frames (GL, SDL, Vulkan) then stays out: one HUD, the subsurface, which
 * stays live during a hang where the frames freeze. Any thread; lock-free. */
int lagscope__hud_wl_showing(void);

/* The program destroys the toplevel surface (main thread, before the request is sent): the
 * HUD's subsurface goes with it, and the next toplevel's first commit makes another. */
void lagscope__hud_wl_parent_gone(void);

/* The program disconnects display: the thread stops and its objects go first. Main thread. */
void lagscope__hud_wl_disconnecting(void *display);

/* In a child forked without exec: nothing of the HUD runs there (no thread, the parent's
 * objects). pthread_atfork's child handler. */
void lagscope__hud_wl_forget_in_child(void);

#endif
