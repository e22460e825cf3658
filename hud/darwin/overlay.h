/*
 * The HUD on screen on iOS and macOS: a layer in a window above the app's own, showing the
 * images the renderer draws (lagscope_hud_take), refreshed on the main thread at most 4 times
 * a second. iOS: a UIWindow above alerts that takes no touches. macOS: a borderless,
 * non-activating panel at the status-window level that ignores the mouse.
 *
 * lagscope_start/lagscope_stop call these on Darwin when config.hud is on.
 */
#ifndef LAGSCOPE_HUD_DARWIN_OVERLAY_H
#define LAGSCOPE_HUD_DARWIN_OVERLAY_H

/* Any thread. Schedules the overlay on the main queue and returns at once: the window appears
 * when the main thread runs it and a first image exists (iOS: once a window scene is
 * connected, which may be after application:didFinishLaunchingWithOptions: returns). Calling it
 * again while started changes nothing. 0 (LAGSCOPE_OK). Allocates (on the main thread). */
int lagscope__overlay_start(void);

/* Any thread. Schedules the overlay's removal on the main queue (in order after any start)
 * and returns at once; a timer tick that still runs after lagscope_stop finds
 * lagscope_hud_take answering LAGSCOPE_ENOTRUNNING and draws nothing. */
void lagscope__overlay_stop(void);

#endif
