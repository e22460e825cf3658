/* What the X11 overlay's files share (private to them; the overlay's contract is x11_overlay.h):
 * the overlay, and the calls between its state and life (x11_overlay.c), its window
 * (x11_window.c), the drawing into it (x11_draw.c) and its thread (x11_thread.c). */
#ifndef LAGSCOPE_HUD_X11_PRIVATE_H
#define LAGSCOPE_HUD_X11_PRIVATE_H

#include "x11_overlay.h"

#include "lagscope.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <xcb/xcb.h>

/* The bounding shape's rectangles; a HUD needs a few hundred. */
#define LAGSCOPE__HUD_X11_MAX_RECTS 4096

typedef struct lagscope__hud_x11_overlay {
  /* Shared by the thread and whoever starts, wakes or stops it. */
  _Atomic int refs;     /* the thread's and the starter's: the last to let go frees it */
  pthread_mutex_t lock; /* the wait, stopping, and the thread's use of lagscope's HUD */
  pthread_cond_t wake;  /* on CLOCK_MONOTONIC: wait_period's deadline is monotonic */
  int stopping, woken;  /* under lock */
  _Atomic unsigned long target; /* the window the app named; 0: the program's, found */
  _Atomic int asked;    /* the app asked (lagscope_hud_overlay_x11): no grace, no giving way */
  _Atomic int ended;    /* the thread has returned, or is about to */
  _Atomic int draws;    /* the HUD is shown; 0: the display's rate only (no window) */
  int measures;         /* the display's rate is read (RandR), every REFRESH_MS (x11_thread.c) */
  pthread_t thread;
  char display_name[256];
  /* The thread's alone. */
  xcb_connection_t *c;
  xcb_screen_t *screen;
  xcb_window_t window, app, app_top; /* ours; the one followed; its ancestor under the root */
  unsigned long app_target;          /* the target app was found for */
  xcb_gcontext_t gc;
  uint8_t depth;
  int window_made; /* 1: made; -1: the server cannot (no XFixes 2); 0: not yet wanted */
  int shaped; /* no compositor: the window's shape is the image's opaque pixels */
  int mapped, x, y, width, height;
  uint64_t shown; /* the sequence of the image on screen; 0: to be put again */
  xcb_atom_t client_list, wm_pid, cm_selection;
  /* The last image taken, over pixels of the thread's own (copied while held): nothing the
   * thread does with the X server ever reads lagscope's HUD buffers. */
  lagscope_hud_image image;
  uint32_t *pixels;
  size_t pixels_size;
  xcb_rectangle_t rects[LAGSCOPE__HUD_X11_MAX_RECTS];
} lagscope__hud_x11_overlay;

/* ---- the state and life (x11_overlay.c) ---- */

/* lagscope-run's --hud-mode (lagscope__hud_x11_set_mode). F */
lagscope__hud_mode lagscope__hud_x11_mode(void);
/* The last window a GL swap drew (lagscope__hud_x11_saw_window), or 0. F */
unsigned long lagscope__hud_x11_window_seen(void);
/* 1 when the overlay may take the image now; in lagscope-run's auto mode it gives way for good
 * to frames. F */
int lagscope__hud_x11_may_take(lagscope__hud_x11_overlay *o);
/* The thread ends: the image is the overlay's no more (a frame hook may take it). F */
void lagscope__hud_x11_stop_taking(void);
/* The thread's copy of the latest image; 0 when there is none. A, L */
int lagscope__hud_x11_take_image(lagscope__hud_x11_overlay *o);
/* held (width x height, rows stride bytes apart) into the thread's own pixels, rows packed,
 * made to its size (remade when the size changes); o->image then says it. 1, or 0 when out of
 * memory (no image). A */
int lagscope__hud_x11_copy_image(lagscope__hud_x11_overlay *o, const lagscope_hud_image *held);
/* Lets go of the overlay: the last of the thread and its starter frees it. A */
void lagscope__hud_x11_release(lagscope__hud_x11_overlay *o);

/* ---- the window (x11_window.c); the thread's, each blocks on round trips to the server ---- */

/* Makes the window; 0 when the server has no XFixes 2 (no input-transparent window). */
int lagscope__hud_x11_make_window(lagscope__hud_x11_overlay *o);
/* 1 when a compositor runs (an owner of _NET_WM_CM_Sn). */
int lagscope__hud_x11_has_compositor(lagscope__hud_x11_overlay *o);
/* The window's ancestor that is a child of the root; XCB_WINDOW_NONE when it is gone. */
xcb_window_t lagscope__hud_x11_top_of(lagscope__hud_x11_overlay *o, xcb_window_t w);
/* 1 when w is viewable; its size into width, height. */
int lagscope__hud_x11_viewable(lagscope__hud_x11_overlay *o, xcb_window_t w, int *width,
                               int *height);
/* The program's biggest viewable window, else the one its GL swaps drew; or XCB_WINDOW_NONE. */
xcb_window_t lagscope__hud_x11_find_app_window(lagscope__hud_x11_overlay *o);
/* Moves the window over the followed window's corner and stacks it just above. A */
void lagscope__hud_x11_place(lagscope__hud_x11_overlay *o, const lagscope_hud_image *image,
                             int app_width, int app_height);

/* ---- the drawing (x11_draw.c) and the thread (x11_thread.c) ---- */

/* One pass: find or follow the window, then show the latest image over it. A, L */
void lagscope__hud_x11_update(lagscope__hud_x11_overlay *o);
/* The thread's function (pthread_create's): o is one of its two references. */
void *lagscope__hud_x11_thread_main(void *o);

#endif
