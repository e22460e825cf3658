/*
 * The Darwin-only hooks (platform.h): the main queue as post_main, the display link as the
 * frame clock, and whether the app is in the background.
 *
 * Objective-C from C: classes are looked up by name at run time (objc_getClass), so that the
 * library links only libobjc, never Foundation, QuartzCore, UIKit or AppKit: an app that has
 * them loaded gets the display link; a command-line tool without them is told why. Every
 * message goes through objc_msgSend cast to the exact function type of the method (arm64 has
 * no variadic-compatible dispatch). Methods returning a double (CFTimeInterval) also use plain
 * objc_msgSend: on x86_64 objc_msgSend_fpret is needed only for long double, on arm64 there is
 * no fpret at all. Memory is managed by hand (retain/release; this file is not ARC).
 *
 * Threads: everything that touches UIKit, the run loop or the display link runs on the main
 * thread, sent there by dispatch_async_f and never waited for (the main thread may be the
 * caller, or hung). Only atomics cross between threads.
 */
#include "objc_send.h"
#include "platform.h"

#include "../internal.h"

#include <CoreFoundation/CoreFoundation.h>
#include <dispatch/dispatch.h>
#include <math.h>
#include <objc/message.h>
#include <objc/runtime.h>

#define TARGET_CLASS_NAME "LagscopeMainThreadTarget"
/* UIApplication's notification names, as Apple documents them: each constant's string is its
 * own name, and NSNotificationCenter compares names with isEqual:. The run loop's common modes
 * are different: CFRunLoop recognises them by the address of kCFRunLoopCommonModes (a mode made
 * from the same string is a custom mode the main run loop never runs), so the constant itself
 * is used, from CoreFoundation (linked; toll-free bridged to NSRunLoopCommonModes). */
#define DID_ENTER_BACKGROUND "UIApplicationDidEnterBackgroundNotification"
#define WILL_ENTER_FOREGROUND "UIApplicationWillEnterForegroundNotification"
#define UI_APPLICATION_STATE_BACKGROUND 2 /* UIApplicationStateBackground */
#define UI_DID_FINISH_LAUNCHING "UIApplicationDidFinishLaunchingNotification"
#define NS_DID_FINISH_LAUNCHING "NSApplicationDidFinishLaunchingNotification"
#define NS_WINDOW_DID_BECOME_MAIN "NSWindowDidBecomeMainNotification"

static _Atomic int in_background;
static _Atomic uint32_t refresh_hz;
static _Atomic int started; /* between start and stop, on the caller's side */

/* Main thread only. */
static id target;       /* our object: the display link's target and the observer */
static id display_link;
static id launch_observer;              /* waits for the end of the launch (autostart) */
static void (*_Atomic when_launched)(void);

/* ---- messages, each with its exact type ---- */

typedef id (*msg_id_id)(id, SEL, id);
typedef id (*msg_id_cstr)(id, SEL, const char *);
typedef id (*msg_id_id_sel)(id, SEL, id, SEL);
typedef void (*msg_void_id)(id, SEL, id);
typedef void (*msg_void_id_id)(id, SEL, id, id);
typedef void (*msg_void_id_sel_id_id)(id, SEL, id, SEL, id, id);
typedef double (*msg_double)(id, SEL);
typedef long (*msg_long)(id, SEL); /* NSInteger */
typedef BOOL (*msg_bool_sel)(id, SEL, SEL);

static int responds(id receiver, const char *selector) {
  return receiver != nil &&
         ((msg_bool_sel)objc_msgSend)(receiver, sel_registerName("respondsToSelector:"),
                                      sel_registerName(selector));
}

/* An autoreleased NSString; nil without Foundation. */
static id ns_string(const char *utf8) {
  Class string_class = objc_getClass("NSString");
  if (string_class == Nil) return nil;
  return ((msg_id_cstr)objc_msgSend)((id)string_class, sel_registerName("stringWithUTF8String:"),
                                     utf8);
}

/* ---- the main queue as post_main ---- */

/* The default post_main, when config.post_main is NULL: fn(arg) on the main dispatch queue
 * (dispatch_async_f), which the main run loop drains. user is ignored. Never blocks; returns 0.
 * F (libdispatch allocates its continuation from its own cache) */
static int main_queue_post(lagscope_main_fn fn, void *arg, void *user) {
  (void)user;
  dispatch_async_f(dispatch_get_main_queue(), arg, fn);
  return 0;
}

/* ---- the target class's methods (main thread) ---- */

/* -tick:(CADisplayLink *)link, once per frame. The frame budget is targetTimestamp -
 * timestamp (Apple's definition), which follows ProMotion's rate changes; duration is the
 * nominal interval, for systems without targetTimestamp. */
static void tick(id self, SEL cmd, id link) {
  (void)self, (void)cmd;
  lagscope_frame();
  double period = 0;
  if (responds(link, "targetTimestamp"))
    period = ((msg_double)objc_msgSend)(link, sel_registerName("targetTimestamp")) -
             ((msg_double)objc_msgSend)(link, sel_registerName("timestamp"));
  if (!(period > 0)) period = ((msg_double)objc_msgSend)(link, sel_registerName("duration"));
  if (period > 0.0005 && period < 1) atomic_store(&refresh_hz, (uint32_t)lround(1 / period));
}

static void replace_display_link(id link);
static void observe(id center, id observer, const char *selector, const char *name);

/* AppKit, macOS 14+: a window became main; its own display link follows it from screen to
 * screen (-[NSWindow displayLinkWithTarget:selector:]), where the screen's stays on the screen
 * it was made for. The next main window takes over when this one closes. */
static void window_did_become_main(id self, SEL cmd, id notification) {
  (void)self, (void)cmd;
  id window = send(notification, "object");
  if (!responds(window, "displayLinkWithTarget:selector:")) return;
  replace_display_link(((msg_id_id_sel)objc_msgSend)(
      window, sel_registerName("displayLinkWithTarget:selector:"), target,
      sel_registerName("tick:")));
}

static void did_enter_background(id self, SEL cmd, id notification) {
  (void)self, (void)cmd, (void)notification;
  atomic_store(&in_background, 1);
}

static void will_enter_foreground(id self, SEL cmd, id notification) {
  (void)self, (void)cmd, (void)notification;
  atomic_store(&in_background, 0);
  lagscope__app_resumed(); /* iOS closed the viewer's listening socket while suspended */
}

/* The launch is over: the function waiting for it runs next on the main queue, after the other
 * observers and the rest of the launch (an app delegate's own lagscope_start comes first). */
static void run_when_launched(void *arg) {
  (void)arg;
  if (launch_observer != nil) {
    id center_class = (id)objc_getClass("NSNotificationCenter");
    ((msg_void_id)objc_msgSend)(send(center_class, "defaultCenter"),
                                sel_registerName("removeObserver:"), launch_observer);
    send_void(launch_observer, "release");
    launch_observer = nil;
  }
  void (*fn)(void) = atomic_exchange(&when_launched, NULL);
  if (fn != NULL) fn();
}

static void did_finish_launching(id self, SEL cmd, id notification) {
  (void)self, (void)cmd, (void)notification;
  dispatch_async_f(dispatch_get_main_queue(), NULL, run_when_launched);
}

/* Made once per process (a class cannot be unmade while instances may live). */
static Class target_class(void) {
  Class existing = objc_getClass(TARGET_CLASS_NAME);
  if (existing != Nil) return existing;
  Class base = objc_getClass("NSObject");
  if (base == Nil) return Nil;
  Class c = objc_allocateClassPair(base, TARGET_CLASS_NAME, 0);
  if (c == Nil) return Nil;
  /* Type encodings: v void, @ id, : SEL. */
  class_addMethod(c, sel_registerName("tick:"), (IMP)tick, "v@:@");
  class_addMethod(c, sel_registerName("didEnterBackground:"), (IMP)did_enter_background, "v@:@");
  class_addMethod(c, sel_registerName("willEnterForeground:"), (IMP)will_enter_foreground, "v@:@");
  class_addMethod(c, sel_registerName("didFinishLaunching:"), (IMP)did_finish_launching, "v@:@");
  class_addMethod(c, sel_registerName("windowDidBecomeMain:"), (IMP)window_did_become_main, "v@:@");
  objc_registerClassPair(c);
  return c;
}

/* ---- the display link (main thread) ---- */

/* iOS and Mac Catalyst (UIKit): +[CADisplayLink displayLinkWithTarget:selector:]. An AppKit app
 * (macOS 14 and later): -[NSScreen displayLinkWithTarget:selector:], first, because the
 * CADisplayLink class method is unavailable in the macOS SDK even where the class answers it.
 * Each tried in the other's place when the first is missing. Autoreleased; nil without both. */
static id screen_display_link(SEL make, SEL tick_sel) {
  id screen_class = (id)objc_getClass("NSScreen");
  id screen = screen_class != nil ? send(screen_class, "mainScreen") : nil;
  return responds(screen, "displayLinkWithTarget:selector:")
             ? ((msg_id_id_sel)objc_msgSend)(screen, make, target, tick_sel) : nil;
}

static id class_display_link(SEL make, SEL tick_sel) {
  id link_class = (id)objc_getClass("CADisplayLink");
  return responds(link_class, "displayLinkWithTarget:selector:")
             ? ((msg_id_id_sel)objc_msgSend)(link_class, make, target, tick_sel) : nil;
}

static id make_display_link(void) {
  SEL make = sel_registerName("displayLinkWithTarget:selector:");
  SEL tick_sel = sel_registerName("tick:");
  int uikit = objc_getClass("UIApplication") != nil;
  id link = uikit ? class_display_link(make, tick_sel) : screen_display_link(make, tick_sel);
  if (link == nil)
    link = uikit ? screen_display_link(make, tick_sel) : class_display_link(make, tick_sel);
  return link;
}

/* The link that ticks from now on, in the main run loop's common modes; the previous one
 * invalidated (the run loop lets go of it). Main thread. 0, or -1 without a link. */
static int add_display_link(id link) {
  id run_loop_class = (id)objc_getClass("NSRunLoop");
  id modes = (id)kCFRunLoopCommonModes;
  if (link == nil || run_loop_class == nil || modes == nil) return -1;
  id old = display_link;
  display_link = send(link, "retain");
  ((msg_void_id_id)objc_msgSend)(display_link, sel_registerName("addToRunLoop:forMode:"),
                                 send(run_loop_class, "mainRunLoop"), modes);
  if (old != nil) {
    send_void(old, "invalidate");
    send_void(old, "release");
  }
  return 0;
}

static void replace_display_link(id link) {
  if (display_link != nil) add_display_link(link); /* only while started with a link */
}

static void start_display_link(void) {
  if (add_display_link(make_display_link()) != 0) {
    lagscope__log("no display link (CADisplayLink, or NSScreen's on macOS 14+): call "
                  "lagscope_frame() once per frame for frame metrics");
    return;
  }
  /* AppKit: follow the main window's screen (its own link) once a window becomes main. */
  id center_class = (id)objc_getClass("NSNotificationCenter");
  if (objc_getClass("UIApplication") == Nil && objc_getClass("NSWindow") != Nil && center_class != nil)
    observe(send(center_class, "defaultCenter"), target, "windowDidBecomeMain:",
            NS_WINDOW_DID_BECOME_MAIN);
}

/* ---- the background (main thread) ---- */

static void observe(id center, id observer, const char *selector, const char *name) {
  ((msg_void_id_sel_id_id)objc_msgSend)(center,
                                        sel_registerName("addObserver:selector:name:object:"),
                                        observer, sel_registerName(selector), ns_string(name), nil);
}

/* UIApplication's state is read here, on the main thread, as UIKit requires; after this the
 * notifications keep the flag. Without UIKit (macOS) an app is never in the background. */
static void start_background_observers(void) {
  id app_class = (id)objc_getClass("UIApplication");
  id center_class = (id)objc_getClass("NSNotificationCenter");
  if (app_class == nil || center_class == nil) return;
  id app = send(app_class, "sharedApplication"); /* nil before UIApplicationMain */
  if (app != nil)
    atomic_store(&in_background, ((msg_long)objc_msgSend)(app, sel_registerName("applicationState")) ==
                                     UI_APPLICATION_STATE_BACKGROUND);
  id center = send(center_class, "defaultCenter");
  observe(center, target, "didEnterBackground:", DID_ENTER_BACKGROUND);
  observe(center, target, "willEnterForeground:", WILL_ENTER_FOREGROUND);
}

static void start_on_main(void *arg) {
  (void)arg;
  Class c = target_class();
  if (c == Nil) {
    lagscope__log("the Objective-C runtime has no NSObject: no display link");
    return;
  }
  target = send(send((id)c, "alloc"), "init"); /* ours: released at stop */
  start_display_link();
  start_background_observers();
}

static void stop_on_main(void *arg) {
  (void)arg;
  if (display_link != nil) {
    send_void(display_link, "invalidate"); /* the run loop lets go of it */
    send_void(display_link, "release");
    display_link = nil;
  }
  if (target != nil) {
    id center_class = (id)objc_getClass("NSNotificationCenter");
    if (center_class != nil)
      ((msg_void_id)objc_msgSend)(send(center_class, "defaultCenter"),
                                  sel_registerName("removeObserver:"), target);
    send_void(target, "release");
    target = nil;
  }
  atomic_store(&in_background, 0);
  atomic_store(&refresh_hz, 0);
}

/* ---- the contract ---- */

/* The main dispatch queue answers pings when the host names no post_main. */
void lagscope__platform_defaults(lagscope_config *config) {
  if (config->post_main == NULL) config->post_main = main_queue_post;
}

/* dyld's images first: the monitor's first symbolication must find them registered. */
void lagscope__platform_prepare(void) { lagscope__platform_images_register(); }

int lagscope__platform_start(const lagscope_config *config) {
  (void)config;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&started, &expected, 1)) return LAGSCOPE_EALREADY;
  dispatch_async_f(dispatch_get_main_queue(), NULL, start_on_main);
  return LAGSCOPE_OK;
}

void lagscope__platform_stop(void) {
  int expected = 1;
  if (!atomic_compare_exchange_strong(&started, &expected, 0)) return;
  /* The main queue is serial: this runs after start_on_main, even if that has not run yet. */
  dispatch_async_f(dispatch_get_main_queue(), NULL, stop_on_main);
}

double lagscope__platform_screen_scale(void) {
  id ui_screen = (id)objc_getClass("UIScreen");
  id main_screen = ui_screen != nil ? send(ui_screen, "mainScreen") : nil;
  if (responds(main_screen, "scale"))
    return ((msg_double)objc_msgSend)(main_screen, sel_registerName("scale"));
  id ns_screen = (id)objc_getClass("NSScreen");
  main_screen = ns_screen != nil ? send(ns_screen, "mainScreen") : nil;
  if (responds(main_screen, "backingScaleFactor"))
    return ((msg_double)objc_msgSend)(main_screen, sel_registerName("backingScaleFactor"));
  return 0;
}

int lagscope__platform_when_launched(void (*fn)(void)) {
  Class c = target_class();
  id center_class = (id)objc_getClass("NSNotificationCenter");
  if (c == Nil || center_class == nil) return LAGSCOPE_ENOENT;
  if (launch_observer != nil) return LAGSCOPE_EALREADY;
  atomic_store(&when_launched, fn);
  launch_observer = send(send((id)c, "alloc"), "init"); /* released once the launch is over */
  id center = send(center_class, "defaultCenter");
  observe(center, launch_observer, "didFinishLaunching:", UI_DID_FINISH_LAUNCHING);
  observe(center, launch_observer, "didFinishLaunching:", NS_DID_FINISH_LAUNCHING);
  return LAGSCOPE_OK;
}

int lagscope__platform_in_background(void) { return atomic_load(&in_background); }

uint32_t lagscope__platform_refresh_hz(void) { return atomic_load(&refresh_hz); }
