/* The display's refresh rate, read from the X server's RandR on lagscope's own XCB connection
 * (x11_overlay.c's thread; x11_refresh.c): the rate of the CRTC that shows the program's
 * window, so that its frames are judged against the display they are shown on, not against an
 * assumed 60 Hz (a steady 35 fps game on a 75 Hz display). Built with the overlay, which needs
 * xcb-randr with the rest of XCB (Debian: libxcb-randr0-dev). */
#ifndef LAGSCOPE_HUD_X11_REFRESH_H
#define LAGSCOPE_HUD_X11_REFRESH_H

#include <stdint.h>

/* RandR's mode flags that change the rate (XCB_RANDR_MODE_FLAG_*, checked in x11_refresh.c). */
#define LAGSCOPE__HUD_RANDR_INTERLACE 0x10u   /* two fields a frame: the fields' rate is shown */
#define LAGSCOPE__HUD_RANDR_DOUBLE_SCAN 0x20u /* each line sent twice */

/* A mode's refresh rate in whole Hz, rounded, as xrandr computes it: dot_clock / (htotal *
 * vtotal), vtotal doubled for a double-scan mode and halved for an interlaced one. 0 for a mode
 * without timings (Xvfb's: its clock and totals are 0), with totals smaller than its visible
 * size, or with a rate outside 1..1000 Hz (config.refresh_hz's range). F */
static inline uint32_t lagscope__hud_x11_refresh_mode_hz(uint32_t dot_clock, uint32_t width,
                                                         uint32_t height, uint32_t htotal,
                                                         uint32_t vtotal, uint32_t flags) {
  if (dot_clock == 0 || htotal == 0 || vtotal == 0 || htotal < width || vtotal < height) return 0;
  uint64_t num = (uint64_t)dot_clock * (flags & LAGSCOPE__HUD_RANDR_INTERLACE ? 2u : 1u);
  uint64_t den = (uint64_t)htotal * vtotal * (flags & LAGSCOPE__HUD_RANDR_DOUBLE_SCAN ? 2u : 1u);
  uint64_t hz = (2 * num + den) / (2 * den);
  return hz >= 1 && hz <= 1000 ? (uint32_t)hz : 0;
}

struct xcb_connection_t;


/* Asks the server for RandR 1.3 (GetScreenResourcesCurrent: the configuration as it is, never
 * a probe of the outputs, which can take a second and make a monitor blink). 1 when it has it;
 * 0 and nothing is ever measured on this connection. Once, after connecting; blocks on a round
 * trip. */
int lagscope__hud_x11_refresh_begin(struct xcb_connection_t *c);

/* The rate (lagscope__hud_x11_refresh_mode_hz) of the CRTC that shows most of the rectangle
 * (root coordinates; width or height 0: no window known yet), among the CRTCs whose mode gives
 * one; else the primary output's CRTC's; else the first CRTC's that gives one; 0 when none
 * does. Blocks on a few round trips (one for the resources, one for every CRTC, pipelined);
 * errors are replies on c, dropped. */
uint32_t lagscope__hud_x11_refresh_hz(struct xcb_connection_t *c, uint32_t root, int x, int y,
                                      int width, int height);

#endif
