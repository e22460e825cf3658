/* liblagscope-preload: lagscope inside a program that was not changed for it (lagscope-run).
 *
 * preload.c starts lagscope from the library's constructor, on the main thread, from the
 * settings lagscope-run leaves in the environment. hooks.c interposes the functions through
 * which a program's loop shows itself (GLib's loop, SDL2's event queue and present, the GL
 * swaps, Xlib's wait) and answers lagscope's pings from them; vk_layer.c is its Vulkan layer,
 * which sees a Vulkan program's presents. */
#ifndef LAGSCOPE_ATTACH_PRELOAD_H
#define LAGSCOPE_ATTACH_PRELOAD_H

#include "lagscope.h"
#include "loops.h"

#include <stdint.h>

/* The loops the program has shown on its main thread so far, as bits (LAGSCOPE__LOOP_GLIB, …:
 * loops.h, the one list of them). Any thread; lock-free. */
unsigned lagscope__preload_loops(void);

/* A frame of loop (LAGSCOPE__LOOP_*) was presented: on the main thread, the loop is seen, the
 * frame counted and the waiting ping answered; elsewhere nothing. Any thread; lock-free. */
void lagscope__preload_frame_presented(unsigned loop);

/* Called by the Vulkan layer at each present: 1 when this thread is the watched one. A thread
 * other than the main thread becomes it after its 30th present while the main thread has shown
 * no loop (a Vulkan program that presents from a render thread while its main thread only
 * waits): its frames, its pings and its stacks are then lagscope's, and a log line says so.
 * Any thread; lock-free but for that one line. */
int lagscope__preload_presenter_watched(void);

/* The config's post_main: keeps the ping for the next hook that runs on the main thread and,
 * once GLib's default loop was seen there, wakes that loop, where a source of lagscope's (one
 * for the program's life, at G_PRIORITY_DEFAULT, attached by the main thread) answers it
 * (never g_main_context_invoke, which runs it on the caller). Monitor thread; no lock, no
 * allocation: g_main_context_wakeup writes the loop's eventfd. */
int lagscope__preload_post(lagscope_main_fn fn, void *arg, void *user);

/* Until a hook fires on the main thread, the main thread counts as idle: a program's start-up,
 * and a program whose loop lagscope cannot see, are never reported hung. Call before
 * lagscope_start, on the main thread. */
void lagscope__preload_hooks_arm(void);

/* The definition the program would have called without the preload: the next one in the
 * global scope, else the one in soname when that library was loaded with RTLD_LOCAL; NULL if
 * neither has it. dlsym takes the loader's lock: look up once. (hooks.c) */
void *lagscope__preload_real_symbol(const char *name, const char *soname);

/* A frame presented by loop (LAGSCOPE__LOOP_GLIB, …): counted, the loop seen, a waiting ping
 * answered; on the main thread only, else nothing. No lock, no allocation. (hooks.c) */
void lagscope__preload_frame_presented(unsigned loop);

/* A frame of loop drawn whose time comes later (GDK's presentation time): as
 * lagscope__preload_frame_presented, but a sign of life only; lagscope__preload_frame_timed
 * then counts it at its time (monotonic ns), once. Main thread only, else nothing. (hooks.c) */
void lagscope__preload_frame_drawn(unsigned loop);
void lagscope__preload_frame_timed(uint64_t timestamp_ns);

/* GTK 4's frames counted from GDK's signals (hooks_gtk4.c), once libgtk-4 is loaded: called on
 * the main thread when GLib's loop is seen there; installs once, then returns at once. */
void lagscope__preload_gtk4_hooks_install(void);

/* 1 when the HUD may be drawn into the program's frames (GL, SDL, Vulkan): lagscope__hud_x11_
 * frame_may_draw's answer, and never while the HUD is a subsurface on Wayland (wayland_hud.h:
 * one HUD, the live one). Main thread. (hooks.c) */
int lagscope__preload_frame_hud_may_draw(void);

/* 1 when this run shows the HUD (not --no-hud). Any thread, after the constructor. */
int lagscope__preload_hud_wanted(void);

/* 1 with --hud-mode overlay (and a HUD): only lagscope's overlay window shows it. Any thread,
 * after the constructor. */
int lagscope__preload_overlay_only(void);

/* The program opened a connection to display name (NULL: $DISPLAY): lagscope's own connection
 * goes there (hud/linux/x11_overlay.h) to read the display's rate (unless --refresh-hz) and,
 * when may_draw and not --no-hud, to show the HUD's overlay window; a preload built without XCB
 * says once that it has none. Any thread. */
void lagscope__preload_display_opened(const char *name, int may_draw);

/* hooks_wayland.c's: a commit of the program's toplevel surface, a frame unless a toolkit's
 * hook (GTK, SDL, GL) has counted frames; the program's wl_display_dispatch begins (1: idle
 * while it waits) or returns (0). Main thread; lock-free. (hooks.c) */
void lagscope__preload_wayland_frame(void);
void lagscope__preload_wayland_wait(int begins);

/* 1 when the HUD is to be shown on Wayland: not --no-hud, not --hud-mode frame. Any thread,
 * after the constructor. (preload.c) */
int lagscope__preload_wayland_hud_wanted(void);

#endif
