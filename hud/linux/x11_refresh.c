/* The display's refresh rate from RandR (see x11_refresh.h). */
#include "x11_refresh.h"

#include <stdlib.h>
#include <xcb/randr.h>
#include <xcb/xcb.h>

#define MAX_CRTCS 32 /* a CRTC is a display engine: a desktop GPU has up to 6 or 8 */

_Static_assert(LAGSCOPE__HUD_RANDR_INTERLACE == XCB_RANDR_MODE_FLAG_INTERLACE, "RandR's flag");
_Static_assert(LAGSCOPE__HUD_RANDR_DOUBLE_SCAN == XCB_RANDR_MODE_FLAG_DOUBLE_SCAN, "RandR's flag");

int lagscope__hud_x11_refresh_begin(xcb_connection_t *c) {
  const xcb_query_extension_reply_t *ext = xcb_get_extension_data(c, &xcb_randr_id);
  if (ext == NULL || !ext->present) return 0;
  xcb_randr_query_version_reply_t *v =
      xcb_randr_query_version_reply(c, xcb_randr_query_version(c, 1, 3), NULL);
  int ok = v != NULL && (v->major_version > 1 || (v->major_version == 1 && v->minor_version >= 3));
  free(v);
  return ok;
}

/* The rate of the mode with this id among the resources' modes; 0 when none or no timings. */
static uint32_t rate_of(xcb_randr_get_screen_resources_current_reply_t *r, xcb_randr_mode_t id) {
  xcb_randr_mode_info_t *modes = xcb_randr_get_screen_resources_current_modes(r);
  int n = xcb_randr_get_screen_resources_current_modes_length(r);
  for (int i = 0; i < n; i++)
    if (modes[i].id == id)
      return lagscope__hud_x11_refresh_mode_hz(modes[i].dot_clock, modes[i].width,
                                               modes[i].height, modes[i].htotal, modes[i].vtotal,
                                               modes[i].mode_flags);
  return 0;
}

static long overlap(int a0, int a_len, int b0, int b_len) {
  int lo = a0 > b0 ? a0 : b0;
  int hi = a0 + a_len < b0 + b_len ? a0 + a_len : b0 + b_len;
  return hi > lo ? hi - lo : 0;
}

/* The CRTC of the primary output (RandR 1.3), or XCB_NONE. */
static xcb_randr_crtc_t primary_crtc(xcb_connection_t *c, xcb_window_t root,
                                     xcb_timestamp_t config_timestamp) {
  xcb_randr_get_output_primary_reply_t *p =
      xcb_randr_get_output_primary_reply(c, xcb_randr_get_output_primary(c, root), NULL);
  xcb_randr_output_t output = p != NULL ? p->output : XCB_NONE;
  free(p);
  if (output == XCB_NONE) return XCB_NONE;
  xcb_randr_get_output_info_reply_t *o = xcb_randr_get_output_info_reply(
      c, xcb_randr_get_output_info(c, output, config_timestamp), NULL);
  xcb_randr_crtc_t crtc = o != NULL ? o->crtc : XCB_NONE;
  free(o);
  return crtc;
}

uint32_t lagscope__hud_x11_refresh_hz(xcb_connection_t *c, uint32_t root, int x, int y,
                                      int width, int height) {
  xcb_randr_get_screen_resources_current_reply_t *r = xcb_randr_get_screen_resources_current_reply(
      c, xcb_randr_get_screen_resources_current(c, root), NULL);
  if (r == NULL) return 0;
  xcb_randr_crtc_t *crtcs = xcb_randr_get_screen_resources_current_crtcs(r);
  int n = xcb_randr_get_screen_resources_current_crtcs_length(r);
  if (n > MAX_CRTCS) n = MAX_CRTCS;
  xcb_randr_get_crtc_info_cookie_t cookies[MAX_CRTCS];
  for (int i = 0; i < n; i++) cookies[i] = xcb_randr_get_crtc_info(c, crtcs[i], r->config_timestamp);
  uint32_t rates[MAX_CRTCS];
  uint32_t window_hz = 0, first_hz = 0;
  long best = 0;
  for (int i = 0; i < n; i++) {
    xcb_randr_get_crtc_info_reply_t *info = xcb_randr_get_crtc_info_reply(c, cookies[i], NULL);
    rates[i] = 0;
    if (info != NULL && info->mode != XCB_NONE) {
      rates[i] = rate_of(r, info->mode);
      long shown = overlap(x, width, info->x, info->width) * overlap(y, height, info->y, info->height);
      if (shown > best && rates[i] != 0) { /* a CRTC without a rate is not the window's answer */
        best = shown;
        window_hz = rates[i];
      }
      if (first_hz == 0) first_hz = rates[i];
    }
    free(info);
  }
  uint32_t hz = window_hz;
  if (hz == 0) {
    xcb_randr_crtc_t primary = primary_crtc(c, root, r->config_timestamp);
    for (int i = 0; i < n && primary != XCB_NONE; i++)
      if (crtcs[i] == primary) hz = rates[i];
  }
  if (hz == 0) hz = first_hz;
  free(r);
  return hz;
}
