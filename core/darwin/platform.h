/*
 * The Darwin-only hooks (core/darwin/platform.c and the auto-start), beyond the platform's part
 * of the lifecycle that internal.h declares for both ports (start, stop, background, rate).
 *
 * Threads: post_main and in_background are called on the monitor thread;
 * start and stop from lagscope_start/lagscope_stop (any thread: the work that must run on the
 * main thread is sent there with dispatch_async_f, never waited for).
 */
#ifndef LAGSCOPE_DARWIN_PLATFORM_H
#define LAGSCOPE_DARWIN_PLATFORM_H

#include "../lagscope.h"

/* No debugger check excuses hangs: a hang in a Debug run under Xcode is still a hang worth
 * reporting, and a breakpoint stops every thread, the monitor's too, which then wakes a
 * threshold late and knows the whole process was stopped (core/detect/watchdog.c), not hung. */

/* Runs fn once on the main thread, right after the app has finished launching
 * (UIApplicationDidFinishLaunchingNotification, or NSApplication's on macOS), then forgets it:
 * the auto-start (core/darwin/autostart.c). Main thread, before the launch ends (a
 * constructor). LAGSCOPE_ENOENT without NSNotificationCenter (a tool without Foundation),
 * LAGSCOPE_EALREADY when already waiting. A */
int lagscope__platform_when_launched(void (*fn)(void));

/* The main screen's pixels per point (UIScreen's scale, NSScreen's backingScaleFactor); 0
 * without a screen. Main thread. F */
double lagscope__platform_screen_scale(void);

/* Does nothing: the symbol the Debug xcconfig's `-u` names, so that the linker takes
 * core/darwin/autostart.c, and its constructor, from the static library. F */
void lagscope__autostart_link(void);

/* Registers, once per process, the image table of core/darwin/symbols.c with dyld (which takes
 * dyld's lock): called by lagscope__platform_prepare on lagscope_start's thread, before the
 * monitor thread exists, so that it, which symbolicates, never waits for dyld. A */
void lagscope__platform_images_register(void);

#endif /* LAGSCOPE_DARWIN_PLATFORM_H */
