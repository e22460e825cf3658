/*
 * The HUD on screen, iOS and macOS, from C through the Objective-C runtime.
 *
 * Contents:
 *   1. messaging: objc_msgSend cast to the exact type of each call
 *   2. the image: lagscope_hud_image -> CGImage -> a CALayer's contents
 *   3. the window: UIKit (iOS) or AppKit (macOS)
 *   4. the timer on the main queue, start and stop
 *
 * One file for both platforms: the timer, the image and the layer (sections 1, 2 and 4) are
 * the same on both and are most of the code; only the window and where the corner is differ,
 * about forty lines each, kept together in section 3 behind one #if.
 *
 * Everything below section 4's entry points runs on the main thread (the main dispatch queue),
 * where UIKit, AppKit and Core Animation must be used. The state is therefore not shared.
 * During a hang too: a transaction committed on another thread would lay out and draw every
 * layer of the process that needs it on that thread, the app's views included, so lagscope's
 * threads never set the layer and the HUD stands still until the hang ends (docs/apple.md,
 * step 4, says why with its sources; the viewer counts the hang live).
 *
 * UIKit and AppKit headers are Objective-C, which a C file cannot include, so the few
 * constants used from them are written here, with the names Apple's documentation gives them.
 */
#include "hud.h" /* lagscope__hud_hold */
#include "darwin/objc_send.h" /* send, send_void */

#include "internal.h"
#include "lagscope.h"

#include <CoreFoundation/CoreFoundation.h>
#include <CoreGraphics/CoreGraphics.h>
#include <dispatch/dispatch.h>
#include <objc/message.h>
#include <objc/runtime.h>
#include <stdint.h>

/* The platform, from the compiler's own target macro rather than TargetConditionals.h, so that
 * the test means the same with any SDK's headers (the Darwin check compiles for iOS against the
 * macOS headers zig ships, where TARGET_OS_IPHONE is 0). */
#if defined(__ENVIRONMENT_IPHONE_OS_VERSION_MIN_REQUIRED__)
#define OVERLAY_UIKIT 1
#else
#define OVERLAY_UIKIT 0
#endif

#define REFRESH_NS (250ull * 1000ull * 1000ull) /* at most 4 updates a second, as the renderer */
#define REFRESH_LEEWAY_NS (25ull * 1000ull * 1000ull) /* let the system batch our wake-ups */
#define MARGIN_POINTS 8.0                           /* from the screen's (safe) edge */

/* NSInteger and NSUInteger are long and unsigned long on every 64-bit Apple platform. */
typedef long ns_integer;
typedef unsigned long ns_uinteger;

/* ---- 1. messaging ----------------------------------------------------------------------- */

/* objc_msgSend has no prototype of its own: each call casts it to the exact type of the method
 * it sends, so that arguments and results travel by the platform's C calling convention. */
static SEL sel(const char *name) { return sel_registerName(name); }

static void send_void_id(id receiver, const char *name, id arg) {
  ((void (*)(id, SEL, id))objc_msgSend)(receiver, sel(name), arg);
}

static void send_void_bool(id receiver, const char *name, BOOL arg) {
  ((void (*)(id, SEL, BOOL))objc_msgSend)(receiver, sel(name), arg);
}

static void send_void_float(id receiver, const char *name, CGFloat arg) {
  ((void (*)(id, SEL, CGFloat))objc_msgSend)(receiver, sel(name), arg);
}

/* Structs as arguments need nothing special: the cast gives them the C convention. */
static void send_void_rect(id receiver, const char *name, CGRect arg) {
  ((void (*)(id, SEL, CGRect))objc_msgSend)(receiver, sel(name), arg);
}

/* Structs as results: on arm64 the caller passes the result's address in x8, which
 * objc_msgSend leaves alone, so plain objc_msgSend returns any struct. On x86_64 a struct
 * larger than 16 bytes (CGRect and UIEdgeInsets are 32) is returned through a hidden first
 * argument, which shifts self and _cmd; objc_msgSend_stret expects that layout, and only it
 * (the x86_64 iOS simulator and Intel Macs). */
#if defined(__x86_64__)
#define OBJC_MSGSEND_LARGE_STRUCT objc_msgSend_stret
#else
#define OBJC_MSGSEND_LARGE_STRUCT objc_msgSend
#endif

static CGRect send_rect_result(id receiver, const char *name) {
  CGRect zero = {{0, 0}, {0, 0}};
  if (receiver == nil) return zero; /* a nil receiver's struct result is not reliably zeroed */
  return ((CGRect (*)(id, SEL))OBJC_MSGSEND_LARGE_STRUCT)(receiver, sel(name));
}

static id class_named(const char *name) { return (id)objc_getClass(name); }

/* alloc + the given init, which takes no argument: +1, ours to release. */
static id make(const char *class_name, const char *init) {
  return send(send(class_named(class_name), "alloc"), init);
}

/* ---- 2. the image ----------------------------------------------------------------------- */

typedef struct overlay {
  dispatch_source_t timer; /* NULL when stopped */
  id window;               /* UIWindow or NSPanel, retained; nil until it could be made */
  id layer;                /* the CALayer that shows the image, retained */
  uint64_t shown;          /* the sequence of the image on screen; 0: none */
  CGRect placed;           /* where it was last put, to move it only when that changes */
} overlay;

static overlay the_overlay; /* main thread only */

/* A CGImage over a copy of the pixels: they stay valid only until the next take, and Core
 * Animation reads an image's contents later, when the transaction commits. NULL when out of
 * memory. */
static CGImageRef image_from(const lagscope_hud_image *hud) {
  size_t bytes = (size_t)hud->stride * (size_t)hud->height;
  CFDataRef data = CFDataCreate(kCFAllocatorDefault, (const UInt8 *)hud->pixels, (CFIndex)bytes);
  if (data == NULL) return NULL;
  CGDataProviderRef provider = CGDataProviderCreateWithCFData(data);
  CFRelease(data); /* the provider keeps its own reference */
  CGColorSpaceRef rgb = CGColorSpaceCreateDeviceRGB();
  CGImageRef image = NULL;
  if (provider != NULL && rgb != NULL) {
    image = CGImageCreate((size_t)hud->width, (size_t)hud->height, 8, 32, (size_t)hud->stride,
                          rgb,
                          (CGBitmapInfo)kCGImageAlphaPremultipliedFirst |
                              (CGBitmapInfo)kCGBitmapByteOrder32Host,
                          provider, NULL, false, kCGRenderingIntentDefault);
  }
  if (rgb != NULL) CGColorSpaceRelease(rgb);
  if (provider != NULL) CGDataProviderRelease(provider);
  return image;
}

/* Core Animation would fade between contents and slide frame changes (implicit animations on a
 * standalone layer); a HUD should just change. */
static void begin_without_animation(void) {
  id transaction = class_named("CATransaction");
  send_void(transaction, "begin");
  send_void_bool(transaction, "setDisableActions:", YES);
}

static void end_without_animation(void) { send_void(class_named("CATransaction"), "commit"); }

/* image: made by image_from, the HUD already released; hud's fields only (not its pixels). */
static void show_image(overlay *o, CGImageRef image, const lagscope_hud_image *hud) {
  begin_without_animation();
  send_void_id(o->layer, "setContents:", (id)(const void *)image); /* the layer retains it */
  send_void_float(o->layer, "setContentsScale:", hud->scale);
  end_without_animation();
  o->shown = hud->sequence;
}

/* The image's rectangle, in points, in the corner it asks for, inside `area` whose y grows
 * downwards (UIKit) or upwards (AppKit's screen coordinates). */
static CGRect corner_rect(CGRect area, CGSize size, lagscope_hud_corner corner, int y_up) {
  int left = corner == LAGSCOPE_HUD_TOP_LEFT || corner == LAGSCOPE_HUD_BOTTOM_LEFT;
  int top = corner == LAGSCOPE_HUD_TOP_LEFT || corner == LAGSCOPE_HUD_TOP_RIGHT;
  CGFloat min_x = area.origin.x + MARGIN_POINTS;
  CGFloat max_x = area.origin.x + area.size.width - MARGIN_POINTS - size.width;
  CGFloat low_y = area.origin.y + MARGIN_POINTS;
  CGFloat high_y = area.origin.y + area.size.height - MARGIN_POINTS - size.height;
  int at_low_y = y_up ? !top : top;
  CGRect r = {{left ? min_x : max_x, at_low_y ? low_y : high_y}, size};
  return r;
}

static int same_rect(CGRect a, CGRect b) {
  return a.origin.x == b.origin.x && a.origin.y == b.origin.y &&
         a.size.width == b.size.width && a.size.height == b.size.height;
}

/* A new CALayer as a sublayer of `host`: +1, ours. */
static id add_layer(id host) {
  id layer = make("CALayer", "init");
  if (layer != nil) send_void_id(host, "addSublayer:", layer);
  return layer;
}

/* ---- 3. the window ---------------------------------------------------------------------- */
#if OVERLAY_UIKIT

/* Messages only the UIKit side sends. */
static id send_id(id receiver, const char *name, id arg) {
  return ((id (*)(id, SEL, id))objc_msgSend)(receiver, sel(name), arg);
}

static id send_index(id receiver, const char *name, ns_uinteger index) {
  return ((id (*)(id, SEL, ns_uinteger))objc_msgSend)(receiver, sel(name), index);
}

static ns_integer send_integer_result(id receiver, const char *name) {
  return ((ns_integer (*)(id, SEL))objc_msgSend)(receiver, sel(name));
}

static BOOL send_class_test(id receiver, const char *name, Class cls) {
  return ((BOOL (*)(id, SEL, Class))objc_msgSend)(receiver, sel(name), cls);
}

/* UIKit's public constants (UIWindow.h, UIScene.h). */
extern const CGFloat UIWindowLevelAlert;
enum { UISceneActivationStateForegroundActive = 0 };

typedef struct edge_insets {
  CGFloat top, left, bottom, right; /* UIEdgeInsets */
} edge_insets;

static edge_insets send_insets_result(id receiver, const char *name) {
  edge_insets zero = {0, 0, 0, 0};
  if (receiver == nil) return zero;
  return ((edge_insets (*)(id, SEL))OBJC_MSGSEND_LARGE_STRUCT)(receiver, sel(name));
}

/* The scene to put the window in: the foreground-active window scene, else any window scene.
 * nil before the app connects one (a scene-based app does that after
 * application:didFinishLaunchingWithOptions:); the timer asks again on its next tick. */
static id find_window_scene(void) {
  id app = send(class_named("UIApplication"), "sharedApplication");
  id scenes = send(send(app, "connectedScenes"), "allObjects");
  Class window_scene = objc_getClass("UIWindowScene");
  ns_uinteger count = (ns_uinteger)send_integer_result(scenes, "count");
  id fallback = nil;
  for (ns_uinteger i = 0; i < count; i++) {
    id scene = send_index(scenes, "objectAtIndex:", i);
    if (!send_class_test(scene, "isKindOfClass:", window_scene)) continue;
    if (send_integer_result(scene, "activationState") == UISceneActivationStateForegroundActive)
      return scene;
    if (fallback == nil) fallback = scene;
  }
  return fallback;
}

/* The HUD window's root view controller must not change the app's status bar, home indicator,
 * edge gestures or rotation: UIKit asks the topmost full-screen window's controller. A subclass
 * of UIViewController, made at run time, defers them all to the root view controller of the
 * scene's key window (the app's). */
#define HUD_CONTROLLER_CLASS "LagscopeHUDViewController"

static id app_root_controller(id self) {
  id own_window = send(send(self, "view"), "window");
  id key = send(send(own_window, "windowScene"), "keyWindow"); /* iOS 15 */
  return key == nil || key == own_window ? nil : send(key, "rootViewController");
}

static id child_for_appearance(id self, SEL cmd) {
  (void)cmd;
  return app_root_controller(self);
}

static ns_uinteger supported_orientations(id self, SEL cmd) {
  id app = app_root_controller(self);
  if (app == nil) return 30; /* UIInterfaceOrientationMaskAll */
  return ((ns_uinteger (*)(id, SEL))objc_msgSend)(app, cmd);
}

/* Made once, on the main thread; Nil when the runtime refuses (then plain UIViewController). */
static Class hud_controller_class(void) {
  Class existing = objc_getClass(HUD_CONTROLLER_CLASS);
  if (existing != Nil) return existing;
  Class cls = objc_allocateClassPair(objc_getClass("UIViewController"), HUD_CONTROLLER_CLASS, 0);
  if (cls == Nil) return Nil;
  class_addMethod(cls, sel("childViewControllerForStatusBarStyle"), (IMP)child_for_appearance,
                  "@@:");
  class_addMethod(cls, sel("childViewControllerForStatusBarHidden"), (IMP)child_for_appearance,
                  "@@:");
  class_addMethod(cls, sel("childViewControllerForHomeIndicatorAutoHidden"),
                  (IMP)child_for_appearance, "@@:");
  class_addMethod(cls, sel("childViewControllerForScreenEdgesDeferringSystemGestures"),
                  (IMP)child_for_appearance, "@@:");
  class_addMethod(cls, sel("supportedInterfaceOrientations"), (IMP)supported_orientations,
                  "Q@:");
  objc_registerClassPair(cls);
  return cls;
}

/* A transparent view controller: a window without a root view controller is unsupported. */
static id make_root_controller(id clear) {
  Class cls = hud_controller_class();
  id controller = send(send(cls != Nil ? (id)cls : class_named("UIViewController"), "alloc"),
                       "init");
  id view = send(controller, "view");
  send_void_id(view, "setBackgroundColor:", clear);
  send_void_bool(view, "setUserInteractionEnabled:", NO);
  return controller;
}

/* A window above alerts that takes no touches (they go to the app's windows below), shown
 * without becoming the key window. */
static int make_window(overlay *o) {
  id scene = find_window_scene();
  if (scene == nil) return 0;
  id window = send_id(send(class_named("UIWindow"), "alloc"), "initWithWindowScene:", scene);
  if (window == nil) return 0;
  id clear = send(class_named("UIColor"), "clearColor");
  send_void_float(window, "setWindowLevel:", UIWindowLevelAlert + 1.0);
  send_void_bool(window, "setUserInteractionEnabled:", NO);
  send_void_id(window, "setBackgroundColor:", clear);
  id controller = make_root_controller(clear);
  send_void_id(window, "setRootViewController:", controller); /* the window retains it */
  o->window = window;
  o->layer = add_layer(send(send(controller, "view"), "layer"));
  send_void(controller, "release");
  send_void_bool(window, "setHidden:", NO);
  return o->layer != nil;
}

/* In the corner of the root view, inside its safe area (clear of the notch, the Dynamic
 * Island and the home indicator); asked again every tick because the device rotates. */
static void place(overlay *o, CGSize size, lagscope_hud_corner corner) {
  id view = send(send(o->window, "rootViewController"), "view");
  CGRect bounds = send_rect_result(view, "bounds");
  edge_insets safe = send_insets_result(view, "safeAreaInsets");
  CGRect area = {{bounds.origin.x + safe.left, bounds.origin.y + safe.top},
                 {bounds.size.width - safe.left - safe.right,
                  bounds.size.height - safe.top - safe.bottom}};
  CGRect frame = corner_rect(area, size, corner, 0);
  if (same_rect(frame, o->placed)) return;
  begin_without_animation();
  send_void_rect(o->layer, "setFrame:", frame);
  end_without_animation();
  o->placed = frame;
}

static void hide_window(id window) { send_void_bool(window, "setHidden:", YES); }

/* The window follows the scene the user sees: once its scene has disconnected
 * (UISceneDidDisconnectNotification; the window's weak windowScene is then nil, or the scene
 * unattached) or left the foreground while another is foreground-active, the next tick moves
 * it there (UIWindow.windowScene is settable, iOS 13). Asked on the tick rather than by an
 * observer: nothing to remove at stop, and the tick already runs on the main queue. */
static void follow_scene(overlay *o) {
  id current = send(o->window, "windowScene");
  if (current != nil &&
      send_integer_result(current, "activationState") == UISceneActivationStateForegroundActive)
    return;
  id scene = find_window_scene();
  if (scene != nil && scene != current) send_void_id(o->window, "setWindowScene:", scene);
}

#else /* AppKit */

/* AppKit's public constants (NSWindow.h, NSGraphics.h) and the application global. */
extern id NSApp;
enum {
  NSWindowStyleMaskBorderless = 0,
  NSWindowStyleMaskNonactivatingPanel = 1 << 7,
  NSBackingStoreBuffered = 2,
  NSWindowCollectionBehaviorCanJoinAllSpaces = 1 << 0,
  NSWindowCollectionBehaviorStationary = 1 << 4,
  NSWindowCollectionBehaviorIgnoresCycle = 1 << 6,
  NSWindowCollectionBehaviorFullScreenAuxiliary = 1 << 8
};

static id make_panel(void) {
  CGRect start = {{0, 0}, {1, 1}}; /* placed and sized once the first image is there */
  return ((id (*)(id, SEL, CGRect, ns_uinteger, ns_uinteger, BOOL))objc_msgSend)(
      send(class_named("NSPanel"), "alloc"), sel("initWithContentRect:styleMask:backing:defer:"),
      start, NSWindowStyleMaskBorderless | NSWindowStyleMaskNonactivatingPanel,
      NSBackingStoreBuffered, NO);
}

/* A borderless panel that never becomes active, floats at the status-window level, lets the
 * mouse through, has no background or shadow, and follows the user across Spaces and into
 * full-screen apps. Like every panel it hides while the app is inactive: the HUD is about this
 * app, and should not sit over others. Without an NSApp (a command-line tool) there is nothing
 * to show it in, and nothing is made. */
static int make_window(overlay *o) {
  if (NSApp == nil) return 0;
  id panel = make_panel();
  if (panel == nil) return 0;
  ((void (*)(id, SEL, ns_integer))objc_msgSend)(panel, sel("setLevel:"),
                                                (ns_integer)kCGStatusWindowLevel);
  send_void_bool(panel, "setIgnoresMouseEvents:", YES);
  send_void_bool(panel, "setOpaque:", NO);
  send_void_id(panel, "setBackgroundColor:", send(class_named("NSColor"), "clearColor"));
  send_void_bool(panel, "setHasShadow:", NO);
  send_void_bool(panel, "setReleasedWhenClosed:", NO);
  ((void (*)(id, SEL, ns_uinteger))objc_msgSend)(
      panel, sel("setCollectionBehavior:"),
      NSWindowCollectionBehaviorCanJoinAllSpaces | NSWindowCollectionBehaviorStationary |
          NSWindowCollectionBehaviorIgnoresCycle | NSWindowCollectionBehaviorFullScreenAuxiliary);
  id content = send(panel, "contentView");
  send_void_bool(content, "setWantsLayer:", YES); /* layer-backed: it has a layer to host ours */
  o->window = panel;
  o->layer = add_layer(send(content, "layer"));
  send_void(panel, "orderFrontRegardless"); /* shown without activating the app */
  return o->layer != nil;
}

/* In the corner of the main screen's visible frame (clear of the menu bar and the Dock), in
 * AppKit's screen coordinates whose y grows upwards; the panel is exactly the image's size. */
static void place(overlay *o, CGSize size, lagscope_hud_corner corner) {
  CGRect visible = send_rect_result(send(class_named("NSScreen"), "mainScreen"), "visibleFrame");
  CGRect frame = corner_rect(visible, size, corner, 1);
  if (same_rect(frame, o->placed)) return;
  ((void (*)(id, SEL, CGRect, BOOL))objc_msgSend)(o->window, sel("setFrame:display:"), frame, YES);
  CGRect inside = {{0, 0}, size};
  begin_without_animation();
  send_void_rect(o->layer, "setFrame:", inside);
  end_without_animation();
  o->placed = frame;
}

static void hide_window(id window) { send_void_id(window, "orderOut:", nil); }

/* The panel joins every Space and stays on screen: nothing to follow. */
static void follow_scene(overlay *o) { (void)o; }

#endif

/* ---- 4. the timer on the main queue, start and stop -------------------------------------- */

static void tick(void *context) {
  overlay *o = context;
  lagscope_hud_image hud;
  /* Ask every tick: the first take is what makes the renderer start drawing. Held while
   * CFDataCreate copies the pixels, because lagscope_stop on another thread would otherwise
   * free them; stop waits for the release. Held for the copy only: making the window and
   * committing the transaction run app code (UIKit, scene and appearance callbacks) that
   * could wait on the thread that stops lagscope, which would then wait for us forever. */
  if (lagscope__hud_hold(&hud) != LAGSCOPE_OK) return;
  CGImageRef image = hud.sequence != o->shown ? image_from(&hud) : NULL; /* NULL: no memory */
  lagscope__hud_release();
  hud.pixels = NULL; /* not ours any more */
  int have_window = o->window != nil || make_window(o);
  if (have_window && image != NULL) show_image(o, image, &hud);
  if (image != NULL) CGImageRelease(image); /* the layer keeps its own reference */
  if (!have_window) return;
  follow_scene(o);
  CGSize size = {(CGFloat)hud.width / hud.scale, (CGFloat)hud.height / hud.scale};
  place(o, size, hud.corner);
}

static void open_on_main(void *context) {
  overlay *o = context;
  if (o->timer != NULL) return; /* started twice */
  o->timer = dispatch_source_create(DISPATCH_SOURCE_TYPE_TIMER, 0, 0, dispatch_get_main_queue());
  if (o->timer == NULL) return;
  dispatch_set_context(o->timer, o);
  dispatch_source_set_event_handler_f(o->timer, tick);
  dispatch_source_set_timer(o->timer, dispatch_time(DISPATCH_TIME_NOW, 0), REFRESH_NS,
                            REFRESH_LEEWAY_NS);
  dispatch_resume(o->timer);
}

static void close_on_main(void *context) {
  overlay *o = context;
  if (o->timer != NULL) {
    dispatch_source_cancel(o->timer); /* we are on the main queue: no tick is running */
    dispatch_release(o->timer);
    o->timer = NULL;
  }
  if (o->layer != nil) {
    send_void(o->layer, "removeFromSuperlayer");
    send_void(o->layer, "release");
  }
  if (o->window != nil) {
    hide_window(o->window);
    send_void(o->window, "release");
  }
  overlay empty = {0};
  *o = empty;
}

/* Both go through the main queue, even from the main thread: the queue keeps a start and a
 * stop in the order they were asked for. */
static int overlay_start(void) {
  dispatch_async_f(dispatch_get_main_queue(), &the_overlay, open_on_main);
  return LAGSCOPE_OK;
}

static void overlay_stop(void) {
  dispatch_async_f(dispatch_get_main_queue(), &the_overlay, close_on_main);
}

/* ---- the overlay as a consumer (core/deliver/dispatcher.c): it takes no events, only the HUD's
 * images, on the main queue ---- */

/* The window appears when the main thread runs the start and a first image exists (iOS: once
 * a window scene is connected, which may be after didFinishLaunching returns). */
static int overlay_consumer_start(const lagscope_config *config, lagscope__dispatcher *dispatcher,
                                  void **state, char *why, size_t why_size) {
  (void)dispatcher, (void)why, (void)why_size;
  if (!config->hud) return LAGSCOPE_OK; /* not wanted */
  int rc = overlay_start();
  if (rc == LAGSCOPE_OK) *state = &the_overlay;
  return rc;
}

static void overlay_consumer_stop(void *state) {
  (void)state;
  overlay_stop();
}

const lagscope__consumer lagscope__hud_overlay_consumer = {
    .name = "overlay",
    .delivery = LAGSCOPE__DELIVER_NONE,
    .start = overlay_consumer_start,
    .stop = overlay_consumer_stop,
};
