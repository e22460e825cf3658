/*
 * lagscope's HUD overlay window (hud/linux/x11_overlay.c) as an X screen shows it, for the tests
 * of lagscope-run's overlay (integration/attach) and of the demo's (integration/window): where
 * the overlay is over the app's window, and what a shot of the HUD's corner shows (its dark
 * panel, its red hang badge, the badge counting on). Built on screen.h.
 */
#ifndef LAGSCOPE_TEST_OVERLAY_LOOK_H
#define LAGSCOPE_TEST_OVERLAY_LOOK_H

#include "screen.h"

#define OVERLAY_TITLE "lagscope HUD" /* the overlay window's WM_NAME */

/* The HUD's corner of the app's window, where the overlay is (the expanded HUD fits). */
extern const box overlay_hud_area;
/* The HUD's header (8 px from the corner), where the red "HANG" badge is: the stats below have
 * red figures of their own. */
extern const box overlay_header;
/* The compact HUD's box (8 from the corner, 150 x 56; the expanded one begins with it). */
extern const box overlay_compact_box;

/* The HUD's red hang badge (the layout's red). */
int overlay_is_badge_red(uint32_t p);
/* The HUD's dark panel. */
int overlay_is_panel(uint32_t p);
/* The HUD's figures and captions (its "idle" is a light grey). */
int overlay_is_light(uint32_t p);

/* Waits until the overlay is viewable at the app window's corner + 8 (shown 1) or is not
 * viewable (shown 0); aborts the test after timeout_ms, saying where both were. */
void overlay_await(Display *d, Window app, int shown, int timeout_ms);

/* Shots of the app window's overlay_hud_area until pred(shot, arg) holds, the last kept in out;
 * a window not mapped yet is looked at again. After timeout_ms the last shot is saved as
 * fail_png (when not NULL) and the test aborts, naming what. */
void overlay_await_shot(Display *d, Window app, int (*pred)(const shot *, const shot *),
                        const shot *arg, shot *out, const char *what, int timeout_ms,
                        const char *fail_png);

/* The predicates for overlay_await_shot. */
/* The compact box has the panel with its figures in it, and no badge. Below the window the
 * screen is black too, and the window's grey is light: the box alone tells. */
int overlay_hud_shown(const shot *s, const shot *unused);
/* The red badge is in the header. */
int overlay_badge_shown(const shot *s, const shot *unused);
/* The badge, with another count than in earlier (its pixels differ). */
int overlay_badge_counted_on(const shot *s, const shot *earlier);

#endif
