/* test_attach's cases, declared once for test_attach.c's list (each file defines its own). */
#ifndef LAGSCOPE_TEST_ATTACH_CASES_H
#define LAGSCOPE_TEST_ATTACH_CASES_H

/* test_attach_gtk.c */
void test_gtk_stall_over_budget(void);
void test_gtk_clean_within_budget(void);
void test_gtk_stall_minidebuginfo(void);
void test_private_library_own_code(void);
void test_mousepad_own_code(void);
void test_widget_factory_idle(void);
void test_gtk3_demo_modal_and_hidden(void);
void test_glib_pings_allocate_nothing(void);

/* test_attach_gl.c */
void test_glxgears_frames_and_hud(void);
void test_es2gears_egl_hud(void);
void test_egl_swap_with_damage(void);

/* test_attach_sdl.c */
void test_sdl_testgl2_hud(void);
void test_sdl_testsprite_frames(void);
void test_sdl_frames_then_exit(void);
void test_sdl_renderer_hud(void);
void test_sdl_renderer_state_kept(void);
void test_sdl_vulkan_hud(void);
void test_sdl_wait_idle_then_stall(void);

/* test_attach_vulkan.c */
void test_vulkan_vkcube_frames_and_hud(void);
void test_vulkan_vkcube_stall(void);
void test_vulkan_present_thread_stall(void);
void test_vulkan_present_thread_hud(void);

/* test_attach_qt.c */
void test_qt_stall(void);

/* test_attach_gtk4.c */
void test_gtk4_frames_x11(void);
void test_gtk4_frames_wayland(void);
void test_gtk4_demo_frames_x11(void);
void test_gtk4_demo_frames_wayland(void);
void test_qt6_frames_x11(void);
void test_qt6_frames_wayland(void);
void test_overlay_qt6_live_badge(void);

/* test_attach_overlay.c */
void test_overlay_gtk_live_badge(void);
void test_overlay_qt_live_badge(void);
void test_overlay_sdl_mode(void);
void test_overlay_none_without_hud(void);
void test_overlay_glxgears_mode(void);
void test_overlay_wayland_said(void);
void test_overlay_stacked_with_its_window(void);

/* test_attach_editors.c */
void test_l3afpad_fifo_phases(void);
void test_l3afpad_killed_in_hang(void);
void test_overlay_l3afpad_over_its_dialog(void);
void test_overlay_l3afpad_dialog_window_manager(void);
void test_overlay_mousepad_over_its_dialog(void);
void test_hud_clear_of_menu_bar(void);

/* test_attach_featherpad.c */
void test_featherpad_cpu_names(void);

/* test_attach_runner.c */
void test_exit_status_and_environment(void);
void test_bad_options(void);
void test_never_harms_or_guesses(void);
void test_stopped_time_of_a_cut_short_hang(void);
void test_refresh_from_randr(void);

#endif
