/*
 * The Darwin-only hooks (core/darwin/platform.c), for core/monitor.c on Apple builds. Linux has
 * no counterpart: there the host supplies post_main and calls lagscope_frame() itself.
 *
 * Threads: post_main and in_background are called on the monitor thread;
 * start and stop from lagscope_start/lagscope_stop (any thread: the work that must run on the
 * main thread is sent there with dispatch_async_f, never waited for).
 */
#ifndef LAGSCOPE_DARWIN_PLATFORM_H
#define LAGSCOPE_DARWIN_PLATFORM_H

#include "../lagscope.h"

/* The default post_main on Darwin, when config.post_main is NULL: fn(arg) on the main dispatch
 * queue (dispatch_async_f), which the main run loop drains. user is ignored. Never blocks;
 * returns 0. F (libdispatch allocates its continuation from its own cache) */
int lagscope__platform_post_main(lagscope_main_fn fn, void *arg, void *user);

/* Schedules, on the main thread: a CADisplayLink in the main run loop's common modes whose
 * every tick calls lagscope_frame() (iOS; macOS 14 and later through NSScreen), and observers
 * of UIApplication's background and foreground notifications (iOS). Returns 0 once scheduled
 * (what cannot be made, on a system or in a process without those classes, is left out and
 * reported with lagscope__log from the main thread), LAGSCOPE_EALREADY when started. A */
int lagscope__platform_start(const lagscope_config *config);

/* Invalidates the display link and removes the observers, on the main thread (scheduled, not
 * waited for). Idempotent. */
void lagscope__platform_stop(void);

/* No debugger check excuses hangs: a hang in a Debug run under Xcode is still a hang worth
 * reporting, and a breakpoint stops every thread, the monitor's too, which then wakes a
 * threshold late and knows the whole process was stopped (core/watchdog.c), not hung. */

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

/* 1 while the app is in the background (iOS: between UIApplicationDidEnterBackground and
 * UIApplicationWillEnterForeground; never on macOS), 0 otherwise. A hang is never declared
 * while this says 1: the main thread of a backgrounded app may legitimately not run. F */
int lagscope__platform_in_background(void);

/* The bytes each capture copies of a stopped thread's stack (config.stack_copy_kib), set by
 * lagscope_start before the monitor starts (core/darwin/capture.c). A */
void lagscope__capture_set_copy_bytes(size_t bytes);

/* Registers, once per process, the image table of core/darwin/symbols.c with dyld (which takes
 * dyld's lock): called by lagscope__platform_start on lagscope_start's thread, so that the
 * monitor thread, which symbolicates, never waits for dyld. A */
void lagscope__platform_images_register(void);

/* The display's refresh rate as the display link last measured it (1 / (targetTimestamp -
 * timestamp), rounded), 0 before the first frame. Changes at will under ProMotion. F */
uint32_t lagscope__platform_refresh_hz(void);

#endif /* LAGSCOPE_DARWIN_PLATFORM_H */
