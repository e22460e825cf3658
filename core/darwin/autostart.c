/*
 * The auto-start on iOS and macOS: a Debug build that links lagscope starts it once the app
 * has finished launching, with the defaults (the main queue as post_main, the display link,
 * the HUD at the screen's scale, the viewer), unless the environment's LAGSCOPE_AUTOSTART or the app's Info.plist
 * key LagscopeAutoStart says no (core/autostart.c decides). An app that called lagscope_start
 * itself by then keeps its own configuration.
 *
 * A static library's member is linked only when something refers to it: the Debug xcconfig
 * (apple/lagscope-debug.xcconfig) names lagscope__autostart_link with the linker's -u, so this
 * file, and through it the library, comes in although the app calls nothing of lagscope.
 */
#include "platform.h"

#include "../internal.h"

#include <CoreFoundation/CoreFoundation.h>
#include <stdlib.h>

#define PLIST_KEY "LagscopeAutoStart"

/* Info.plist's LagscopeAutoStart: 0 or 1 from a Boolean, a number or a setting's text (YES,
 * NO, …); -1 without the key or with another value. A (CoreFoundation's own) */
static int info_plist_setting(void) {
  CFBundleRef bundle = CFBundleGetMainBundle();
  if (bundle == NULL) return -1;
  CFStringRef key = CFStringCreateWithCString(kCFAllocatorDefault, PLIST_KEY, kCFStringEncodingUTF8);
  if (key == NULL) return -1;
  CFTypeRef value = CFBundleGetValueForInfoDictionaryKey(bundle, key); /* not ours to release */
  CFRelease(key);
  if (value == NULL) return -1;
  CFTypeID type = CFGetTypeID(value);
  if (type == CFBooleanGetTypeID()) return CFBooleanGetValue((CFBooleanRef)value) ? 1 : 0;
  if (type == CFNumberGetTypeID()) {
    int number = -1;
    if (!CFNumberGetValue((CFNumberRef)value, kCFNumberIntType, &number)) return -1;
    return number == 0 ? 0 : number == 1 ? 1 : -1;
  }
  char text[16];
  if (type == CFStringGetTypeID() &&
      CFStringGetCString((CFStringRef)value, text, sizeof(text), kCFStringEncodingUTF8))
    return lagscope__autostart_setting(text);
  return -1;
}

/* Main thread, after the launch: the defaults, the HUD sharp on the screen's pixels. */
static void start_with_defaults(void) {
  if (lagscope_is_running()) return; /* the app started it: its configuration stays */
  lagscope_config config = lagscope_config_default();
  double scale = lagscope__platform_screen_scale();
  if (scale >= 0.5 && scale <= 8) config.hud_scale = (float)scale;
  int rc = lagscope_start(&config);
  if (rc != LAGSCOPE_OK && rc != LAGSCOPE_EALREADY)
    lagscope__log("did not start by itself: %s", lagscope_strerror(rc));
}

/* At load, on the main thread, before main(). The Swift package is linked in every
 * configuration (Xcode has no per-configuration package linking): built by SwiftPM
 * (SWIFT_PACKAGE) without DEBUG (Package.swift defines it for the debug configuration only),
 * lagscope stays still unless the app calls lagscope_start. */
__attribute__((constructor)) static void start_when_launched(void) {
#if defined(SWIFT_PACKAGE) && !defined(DEBUG)
  lagscope__log("does not start by itself: a Release build of the Swift package (call "
                "lagscope_start to start it)");
  return;
#endif
  char why[200];
  int wanted = lagscope__autostart_wanted(getenv("LAGSCOPE_AUTOSTART"), info_plist_setting(),
                                          why, sizeof(why));
  if (!wanted) {
    lagscope__log("does not start by itself: %s (call lagscope_start to start it)", why);
    return;
  }
  if (why[0] != '\0') lagscope__log("starts by itself: %s", why);
  if (lagscope__platform_when_launched(start_with_defaults) == LAGSCOPE_ENOENT)
    lagscope__log("no app launch to wait for (no NSNotificationCenter): call lagscope_start "
                  "to start it");
}

void lagscope__autostart_link(void) {}
