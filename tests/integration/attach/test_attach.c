/* lagscope-run on programs that know nothing of lagscope, under Xvfb: the list of the cases,
 * one file per toolkit (docs/hacking.md, "Recipe: a new toolkit in lagscope-run"):
 *   test_attach_gtk.c      GTK 3 and GLib: the tests' own gtk_stall and glib_pings, a program
 *                          with its code in a private library, mousepad, gtk3-widget-factory,
 *                          gtk3-demo
 *   test_attach_gl.c       OpenGL: glxgears (glX), es2gears_x11 (EGL), egl_damage (EGL
 *                          swaps with damage)
 *   test_attach_sdl.c      SDL2: testgl2, testsprite2, testvulkan, sdl_state, sdl_wait
 *   test_attach_vulkan.c   Vulkan: vkcube and vk_thread, through the preload's layer
 *   test_attach_qt.c       Qt 5: qt_stall
 *   test_attach_gtk4.c     GTK 4 and Qt 6, on X11 and on Wayland (weston): gtk4_stall,
 *                          gtk4-demo, qt6_stall
 *   test_attach_overlay.c  the HUD in lagscope's own window over a program's
 *   test_attach_editors.c  l3afpad opening FIFOs (phases, killed in a hang, under its dialog)
 *   test_attach_featherpad.c  featherpad's CPU hangs on a large file, named alike
 *   test_attach_runner.c   lagscope-run itself: exit status, environment, stops, bad options,
 *                          never harming, the display's rate from RandR
 * and what they share in attach_support.h (attach_support.c, attach_screen.c).
 *
 * Usage: test_attach CASE (paths come from the build: LAGSCOPE_RUN_PATH and the others). */
#include "cases.h"
#include "attach_cases.h"

static const test_case cases[] = {
    TEST_CASE(gtk_stall_over_budget),
    TEST_CASE(gtk_clean_within_budget),
    TEST_CASE(gtk_stall_minidebuginfo),
    TEST_CASE(private_library_own_code),
    TEST_CASE(mousepad_own_code),
    TEST_CASE(glxgears_frames_and_hud),
    TEST_CASE(es2gears_egl_hud),
    TEST_CASE(egl_swap_with_damage),
    TEST_CASE(sdl_testgl2_hud),
    TEST_CASE(widget_factory_idle),
    TEST_CASE(gtk3_demo_modal_and_hidden),
    TEST_CASE(sdl_testsprite_frames),
    TEST_CASE(sdl_frames_then_exit),
    TEST_CASE(sdl_renderer_hud),
    TEST_CASE(sdl_renderer_state_kept),
    TEST_CASE(sdl_vulkan_hud),
    TEST_CASE(vulkan_vkcube_frames_and_hud),
    TEST_CASE(vulkan_vkcube_stall),
    TEST_CASE(vulkan_present_thread_stall),
    TEST_CASE(vulkan_present_thread_hud),
    TEST_CASE(sdl_wait_idle_then_stall),
    TEST_CASE(qt_stall),
    TEST_CASE(glib_pings_allocate_nothing),
    TEST_CASE(exit_status_and_environment),
    TEST_CASE(bad_options),
    TEST_CASE(never_harms_or_guesses),
    TEST_CASE(stopped_time_of_a_cut_short_hang),
    TEST_CASE(overlay_gtk_live_badge),
    TEST_CASE(overlay_qt_live_badge),
    TEST_CASE(overlay_sdl_mode),
    TEST_CASE(overlay_none_without_hud),
    TEST_CASE(overlay_glxgears_mode),
    TEST_CASE(overlay_wayland_said),
    TEST_CASE(overlay_stacked_with_its_window),
    TEST_CASE(l3afpad_fifo_phases),
    TEST_CASE(l3afpad_killed_in_hang),
    TEST_CASE(overlay_l3afpad_over_its_dialog),
    TEST_CASE(overlay_l3afpad_dialog_window_manager),
    TEST_CASE(overlay_mousepad_over_its_dialog),
    TEST_CASE(hud_clear_of_menu_bar),
    TEST_CASE(featherpad_cpu_names),
    TEST_CASE(refresh_from_randr),
    TEST_CASE(gtk4_frames_x11),
    TEST_CASE(gtk4_frames_wayland),
    TEST_CASE(gtk4_demo_frames_x11),
    TEST_CASE(gtk4_demo_frames_wayland),
    TEST_CASE(qt6_frames_x11),
    TEST_CASE(qt6_frames_wayland),
    TEST_CASE(overlay_qt6_live_badge),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
