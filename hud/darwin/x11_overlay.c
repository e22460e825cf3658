/* lagscope_hud_overlay_x11 on iOS and macOS: there is no X server to show an overlay on (the
 * HUD has a window of its own there: overlay.c). */
#include "lagscope.h"

int lagscope_hud_overlay_x11(const char *display_name, unsigned long window) {
  (void)display_name, (void)window;
  return LAGSCOPE_ENOTSUP;
}
