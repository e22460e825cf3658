/* What test_attach's cases share (test_attach.c lists the cases, one file per toolkit):
 * attach_support.c (the case's folder and screen, lagscope-run's runs, the events read back,
 * /proc's view of a stuck main thread) and attach_screen.c (the HUD in a frame, the overlay).
 * Each definition says more. Paths come from the build: LAGSCOPE_RUN_PATH and the others. */
#ifndef LAGSCOPE_TEST_ATTACH_SUPPORT_H
#define LAGSCOPE_TEST_ATTACH_SUPPORT_H

#include "check.h"
#include "spawn.h"
#include "overlay_look.h"
#include "screen.h"
#include "xvfb.h"

#include <X11/Xatom.h>
#include <cairo.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 30000
#define OVERLAY_WAIT_MS 6000 /* within the program's 8 s after its stall */
#define SKIP 77
/* The share of the HUD's pixels, its FPS figure left out, that must match the reference within
 * 16 levels per channel: measured 100 % with the HUD over black, 98.9 % with a gear's edge
 * behind it, 1.7 % without it. */
#define HUD_MATCH 0.90
/* The HUD, compact at scale 1, is 150 x 56 px, 8 px from its corner. The reference is a shot
 * of the top-left corner of glxgears's window, looked at: the HUD at (8, 8) over black. */
#define HUD_W 150
#define HUD_H 56
#define REFERENCE LAGSCOPE_ATTACH_REFERENCE "/glxgears_hud.png"

/* ---- attach_support.c ---------------------------------------------------------------------- */

extern spawn_proc xvfb;
extern char folder[256]; /* this case's temporary folder */
extern char events[320]; /* --events FILE */
extern char junit[320];  /* --junit FILE */

/* The case's folder, its virtual screen, a program that is not installed (exit 77). */
void make_folder(void);
void remove_folder(void);
void with_screen(void);
void skip_without(const char *path);

/* The events file read back. */
cJSON *read_events(void);
int count_type(const cJSON *all, const char *type);
const cJSON *last_of_type(const cJSON *all, const char *type);
int metrics_count(void);
void await_metrics(int n);
int hangs_began(void);
void await_drawn_and_answering(void);
const cJSON *hang_covering(const cJSON *all, uint64_t at_ns);
int await_hang_over(uint64_t at_ns);
const cJSON *hang_ended_of(const cJSON *all, int id);

/* lagscope-run run: its arguments, its end, its metrics. run_at_default_corner: 1 for a case
 * that looks at the HUD's default corner (run_args passes none). */
extern int run_at_default_corner;
char **run_args(char *const extra[], char *const program[]);
int wait_run(spawn_proc *p, char *err, size_t size);
int run_to_end(char *const extra[], char *const program[], char *err, size_t size);
int run_for_metrics(char *const extra[], char *const program[], int n, void (*look)(void),
                    char *err, size_t size);

/* The HUD in a program's frames, then none with --no-hud: two runs of lagscope-run, each
 * until metrics lines came and look shot the corner into area_shot (saved as name_hud.png and
 * name_no_hud.png). check judges the first shot (check_hud_shown, check_hud_blended) after
 * check_run (if given) judged the first run's output and events; the second must not match the
 * reference. (attach_support.c, with take_drawn_shot: the shot once the program drew.) */
typedef struct hud_case {
  char **program;
  int metrics;
  void (*look)(void);
  const char *name;
  void (*check)(const shot *s, box hud);
  void (*check_run)(const char *err);
} hud_case;
void check_hud_and_none_without(const hud_case *c);
void take_drawn_shot(void);

/* What the events and stacks say. */
int stack_has(const cJSON *stack, const char *function);
int in_module(const cJSON *frame, const char *module_tail);
void check_hooks_right(const cJSON *all);
int64_t wall_ms_now(void);
void check_no_hang_since(const cJSON *all, int64_t since_wall_ms);
void check_no_hang(const cJSON *all);
double frames_counted(const cJSON *all);

/* Files, processes, xdotool, a GTK program's settings. */
char *read_file(const char *path);
void xdotool(char *const args[]);
pid_t child_of(pid_t parent);
uint64_t await_blocked_on(pid_t pid, int want_read, const char *path);
void sleep_until(uint64_t at_ns);
void gtk_settings_in_folder(void);

/* ---- attach_screen.c ----------------------------------------------------------------------- */

extern const char *shot_title; /* the window to shoot */
extern box shot_area;          /* where, in the window */
extern shot area_shot;

/* The HUD in a program's frame, against the reference. */
int is_lit(uint32_t p);
int inside(box b, int x, int y);
void take_area_shot(void);
double reference_match(const shot *s, box hud, int tolerance);
void save_artifact(const shot *s, const char *name);
void check_hud_shown(const shot *s, box hud);
void check_hud_blended(const shot *s, box hud);
void save_screen(const char *name);

/* The overlay: windows, events and shots awaited (bounded). */
Window await_window(Display *d, const char *title);
void await_type(const char *type);
void await_overlay(Display *d, Window app, int shown);
Window start_under_overlay(spawn_proc *p, char **extra, char **program, const char *title,
                           Display **d);
void await_shot(Display *d, Window app, int (*pred)(const shot *, const shot *),
                const shot *arg, shot *out, const char *what);
void await_more(const char *type, int n);
void await_live_badge_after(Display *d, Window app, const char *name, int ended);
void await_live_badge(Display *d, Window app, const char *name);
void qt_stall_live_badge(const char *path, const char *name);
int last_hang_shown(const shot *s, const shot *before);
int last_hang_changed(const shot *s, const shot *before);

#endif
