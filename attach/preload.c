/* liblagscope-preload's start and stop: lagscope in a program lagscope-run started.
 *
 * The constructor runs on the main thread before main(). It reads lagscope-run's settings
 * (LAGSCOPE_RUN_*), removes them and its own LD_PRELOAD entry from the environment, so that
 * the program's children run without lagscope, and starts lagscope in post_main mode with
 * the hooks' ping (hooks.c). Events go, one JSON line each, to the file of --events and to
 * lagscope-run's channel file (channel.h); each write opens, appends and closes, so that no
 * descriptor of lagscope's can be one the program closes and reuses. */
#define _GNU_SOURCE
#include "preload.h"

#include "channel.h"
#include "internal.h" /* lagscope__autostart_wanted, lagscope__event_text */
#include "wayland_hud.h"
#include "x11_overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define SETTING_MAX 4096

/* Copies of the settings: the environment's strings go away with unsetenv. */
static char events_path[SETTING_MAX];
static char channel_path[SETTING_MAX];
static char report_dir[SETTING_MAX];
static char server_bind[64];
static char metrics_token[LAGSCOPE__CREDENTIAL_MAX + 1];
static char pushgateway_url[1024], push_instance[256];
static int quiet;
static int hud_wanted;
static int hud_mode; /* LAGSCOPE__HUD_AUTO, _FRAME or _OVERLAY (--hud-mode) */
static unsigned loops_written = ~0u; /* the loop bits last written to the channel (dispatcher); none yet */
/* The channel file's device and inode (LAGSCOPE_RUN_CHANNEL_ID), and lagscope-run's count of
 * its lines (channel.h; NULL when it could not be attached: lagscope-run then fails the run). */
static dev_t channel_dev;
static ino_t channel_ino;
static lagscope__channel_status *channel_status;

/* Copies the variable's value into out and removes it; 0 if unset (or too long: said). */
static int take_setting(const char *name, char *out, size_t size) {
  const char *value = getenv(name);
  int found = value != NULL && strlen(value) < size;
  if (value != NULL && !found)
    fprintf(stderr, "lagscope-preload: %s is longer than %zu bytes: ignored\n", name, size - 1);
  if (found) memcpy(out, value, strlen(value) + 1);
  unsetenv(name);
  return found;
}

/* A whole number setting in [min, max]; fallback when unset or bad (said). */
static uint32_t take_number(const char *name, uint32_t min, uint32_t max, uint32_t fallback) {
  char text[32];
  if (!take_setting(name, text, sizeof(text))) return fallback;
  char *end;
  errno = 0;
  unsigned long value = strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < min || value > max) {
    fprintf(stderr, "lagscope-preload: %s=%s is not a number in %u..%u: ignored\n", name, text,
            min, max);
    return fallback;
  }
  return (uint32_t)value;
}

/* A setting for a config field, in the field's range (LAGSCOPE__CONFIG_FIELDS); fallback when
 * unset or bad (said). */
static uint32_t take_field(const char *name, lagscope__config_field field, uint32_t fallback) {
  lagscope__config_bounds b = lagscope__config_bounds_of(field);
  return take_number(name, (uint32_t)b.min, (uint32_t)b.max, fallback);
}

/* Removes own_path from LD_PRELOAD (a list split by spaces or colons), keeping the rest. */
static void remove_own_preload(const char *own_path) {
  const char *list = getenv("LD_PRELOAD");
  if (list == NULL || own_path[0] == '\0') return;
  char kept[SETTING_MAX] = "";
  size_t used = 0, own = strlen(own_path);
  for (const char *p = list; *p != '\0';) {
    size_t n = strcspn(p, " :");
    int is_own = n == own && strncmp(p, own_path, n) == 0;
    if (n > 0 && !is_own && used + n + 2 < sizeof(kept)) {
      if (used > 0) kept[used++] = ' ';
      memcpy(kept + used, p, n);
      used += n;
      kept[used] = '\0';
    }
    p += n;
    p += strspn(p, " :");
  }
  if (used == 0)
    unsetenv("LD_PRELOAD");
  else
    setenv("LD_PRELOAD", kept, 1);
}

/* The last failure to write a file of events, said once per path and reason (dispatcher). */
static int events_failed_errno, channel_failed_errno;

/* Says once why lines cannot go to path (stderr, as lagscope's log lines; not when quiet). */
static void say_write_failed(const char *path, int err, int *last_errno) {
  if (err == *last_errno) return;
  *last_errno = err;
  if (quiet) return;
  fprintf(stderr, "lagscope-preload: events not written to %s: %s%s\n", path, strerror(err),
          err == ENXIO    ? " (a FIFO that no one reads)"
          : err == EAGAIN ? " (its reader is behind)"
          : err == EPERM  ? " (not this user's alone: others could read the viewer's token)"
          : err == ESTALE ? " (another file is at its path now)"
          : err == ELOOP  ? " (a symbolic link: not followed)"
                          : "");
}

/* Writes line and a newline to fd in one call, so that lines of two writers never interleave
 * (O_APPEND: the kernel holds the file's lock for the whole of a write to a regular file). The
 * bytes written, or -1 with errno. */
static ssize_t write_line(int fd, const char *line) {
  struct iovec parts[2] = {{(void *)line, strlen(line)}, {"\n", 1}};
  return writev(fd, parts, 2);
}

/* Appends line to the --events file at path. Never waits: a FIFO with no reader fails the open
 * at once (O_NONBLOCK; it blocked the program's exit, as lagscope_stop joins the dispatcher), a
 * full pipe the write; the line is then lost and said. Created 0600, and written only while it
 * is this user's and nobody else's to read (a character device aside): the server_started line
 * holds the viewer's token; never through a link (lagscope-run checked the file: a link put
 * there since is refused). Dispatcher thread; takes no lock of lagscope's and allocates
 * nothing: a malloc here would give the thread its own glibc arena, which stays resident in
 * the app. */
static void append_event(const char *path, const char *line) {
  int fd = open(path,
                O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW, 0600);
  struct stat st;
  if (fd < 0) {
    say_write_failed(path, errno, &events_failed_errno);
    return;
  }
  if (fstat(fd, &st) != 0 ||
      (!S_ISCHR(st.st_mode) && (st.st_uid != geteuid() || (st.st_mode & 077) != 0)))
    say_write_failed(path, EPERM, &events_failed_errno); /* another's, or others may read it */
  else if (write_line(fd, line) < 0)
    say_write_failed(path, errno, &events_failed_errno);
  else
    events_failed_errno = 0;
  close(fd);
}

/* Counts a line that did not reach lagscope-run (channel.h): the first failure's reason stays. */
static void channel_failed(int reason, int err) {
  say_write_failed(channel_path, reason == LAGSCOPE__CHANNEL_REPLACED ? ESTALE : err ? err : EIO,
                   &channel_failed_errno);
  if (channel_status == NULL) return;
  atomic_fetch_add(&channel_status->failed, 1);
  int none = 0;
  if (atomic_compare_exchange_strong(&channel_status->first_reason, &none, reason))
    atomic_store(&channel_status->first_errno, err);
}

/* Appends line to lagscope-run's channel file: the one lagscope-run made (never created here,
 * never through a link, never another file at its path), each line counted begun, then written
 * whole or failed. Never waits. The constructor, the dispatcher, the exit; allocates nothing,
 * takes no lock. */
static void append_channel(const char *line) {
  if (channel_status != NULL) atomic_fetch_add(&channel_status->begun, 1);
  int fd = open(channel_path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    channel_failed(LAGSCOPE__CHANNEL_OPEN, errno);
    return;
  }
  struct stat st;
  ssize_t want = (ssize_t)strlen(line) + 1, rc;
  if (fstat(fd, &st) != 0 || st.st_dev != channel_dev || st.st_ino != channel_ino)
    channel_failed(LAGSCOPE__CHANNEL_REPLACED, 0);
  else if ((rc = write_line(fd, line)) < 0)
    channel_failed(LAGSCOPE__CHANNEL_WRITE, errno);
  else if (rc != want)
    channel_failed(LAGSCOPE__CHANNEL_SHORT, 0);
  else {
    channel_failed_errno = 0;
    if (channel_status != NULL) atomic_fetch_add(&channel_status->written, 1);
  }
  close(fd);
}

/* Maps lagscope-run's count of the channel's lines (LAGSCOPE_RUN_STATUS "fd:dev:ino": a memfd
 * lagscope-run left open for this exec) and closes its descriptor, so that the program and its
 * children never see it; a descriptor that is not that memfd is left alone. Reads the channel
 * file's id (LAGSCOPE_RUN_CHANNEL_ID "dev:ino"). 0, or -1 with the reason in why. Main thread,
 * before main(). */
static int attach_channel(char *why, size_t why_size) {
  char status[96] = "", id[64] = "";
  take_setting("LAGSCOPE_RUN_STATUS", status, sizeof(status));
  take_setting("LAGSCOPE_RUN_CHANNEL_ID", id, sizeof(id));
  int fd;
  unsigned long long dev, ino, cdev, cino;
  if (sscanf(status, "%d:%llu:%llu", &fd, &dev, &ino) != 3 ||
      sscanf(id, "%llu:%llu", &cdev, &cino) != 2) {
    snprintf(why, why_size, "no channel given (LAGSCOPE_RUN_STATUS, LAGSCOPE_RUN_CHANNEL_ID)");
    return -1;
  }
  channel_dev = (dev_t)cdev, channel_ino = (ino_t)cino;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != (dev_t)dev || st.st_ino != (ino_t)ino ||
      st.st_size < (off_t)sizeof(lagscope__channel_status)) {
    snprintf(why, why_size, "descriptor %d is not lagscope-run's channel count", fd);
    return -1;
  }
  void *page = mmap(NULL, sizeof(lagscope__channel_status), PROT_READ | PROT_WRITE, MAP_SHARED,
                    fd, 0);
  int err = errno;
  close(fd);
  if (page == MAP_FAILED) {
    snprintf(why, why_size, "cannot map the channel's count: %s", strerror(err));
    return -1;
  }
  channel_status = page;
  atomic_store(&channel_status->attached, 1);
  return 0;
}

/* The run_loops line: one member per loop of loops.h, in its order, true when seen
 * ({"type":"run_loops","glib":true,"sdl":false,"gl":false,"x11":false}). F */
static void loops_line(unsigned loops, char *line, size_t size) {
  size_t used = (size_t)snprintf(line, size, "{\"type\":\"run_loops\"");
#define LOOP_MEMBER(id, key, name, brief, hooks)                                          \
  if (used < size)                                                                        \
    used += (size_t)snprintf(line + used, size - used, ",\"" #key "\":%s",                 \
                             loops & LAGSCOPE__LOOP_##id ? "true" : "false");
  LAGSCOPE__RUN_LOOPS(LOOP_MEMBER)
#undef LOOP_MEMBER
  if (used < size) snprintf(line + used, size - used, "}");
}

/* Tells lagscope-run which loops the program showed, once per change. The constructor, then
 * the dispatcher, then the exit (after the dispatcher stopped): never two at once. */
static void write_loops(void) {
  unsigned loops = lagscope__preload_loops();
  if (loops == loops_written || channel_path[0] == '\0') return;
  loops_written = loops;
  char line[160];
  loops_line(loops, line, sizeof(line));
  append_channel(line);
}

/* Every event to --events; hangs, blind spells, the overlay's failures (its X server died)
 * and the loops seen to lagscope-run. Dispatcher. */
static void on_event(const lagscope_event *event, void *user) {
  (void)user;
  write_loops();
  int to_channel = channel_path[0] != '\0' &&
                   (event->type == LAGSCOPE_EVENT_HANG_BEGAN ||
                    event->type == LAGSCOPE_EVENT_HANG_ENDED ||
                    event->type == LAGSCOPE_EVENT_MONITOR_BLIND ||
                    event->type == LAGSCOPE_EVENT_SERVER_STARTED ||
                    (event->type == LAGSCOPE_EVENT_ERROR && event->payload.message != NULL &&
                     strncmp(event->payload.message, LAGSCOPE__HUD_X11_FAILED, /* and Wayland's */
                             strlen(LAGSCOPE__HUD_X11_FAILED)) == 0));
  if (events_path[0] == '\0' && !to_channel) return;
  char *json = lagscope__event_text(event); /* lagscope's heap, not malloc's */
  if (json == NULL) return;
  if (events_path[0] != '\0') append_event(events_path, json);
  if (to_channel) append_channel(json);
  lagscope__dealloc(json);
}

/* lagscope's last log line, for lagscope-run when the start fails: its reason. Main thread
 * (the start), then any. */
static char last_log[512];

static void log_line(const char *line, void *user) {
  (void)user;
  snprintf(last_log, sizeof(last_log), "%s", line);
  if (!quiet) fprintf(stderr, "lagscope: %s\n", line); /* as lagscope logs without a hook */
}

/* Tells lagscope-run that lagscope is not running in the program, and why: {"type":
 * "run_error"} when it failed to start (lagscope-run then fails the run: exit 2), {"type":
 * "run_off"} when it was told not to. Main thread, before main(). */
static void write_not_started(const char *type, const char *why) {
  if (channel_path[0] == '\0') return;
  lagscope__json_writer w = {0};
  lagscope__jw_begin_object(&w, NULL);
  lagscope__jw_string(&w, "type", type);
  lagscope__jw_string(&w, "why", why);
  lagscope__jw_end_object(&w);
  char *text = lagscope__jw_finish(&w);
  if (text != NULL) append_channel(text);
  lagscope__dealloc(text);
}

/* The run's first line, to the channel and --events: {"type":"run_started"} with lagscope-run's
 * id of the run, this process's pid, its name and the folder its hang reports go to (made
 * absolute), so that a file of a run that had no hang still says which run it is, and
 * lagscope-run finds the report of a hang the program's end cut short. Main thread, before
 * main(). */
static void write_started(const lagscope_config *config, const char *run_id) {
  if (channel_path[0] == '\0' && events_path[0] == '\0') return;
  char name[64], dir[SETTING_MAX], cwd[PATH_MAX], absolute[SETTING_MAX + PATH_MAX + 2];
  lagscope__app_name(config, name, sizeof(name));
  lagscope__report_dir(config, name, dir, sizeof(dir));
  if (dir[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL)
    snprintf(absolute, sizeof(absolute), "%s/%s", cwd, dir);
  else
    snprintf(absolute, sizeof(absolute), "%s", dir);
  lagscope__json_writer w = {0};
  lagscope__jw_begin_object(&w, NULL);
  lagscope__jw_string(&w, "type", "run_started");
  lagscope__jw_string(&w, "run_id", run_id);
  lagscope__jw_i64(&w, "pid", (int64_t)getpid());
  lagscope__jw_string(&w, "name", name);
  lagscope__jw_string(&w, "report_dir", absolute);
  lagscope__jw_end_object(&w);
  char *text = lagscope__jw_finish(&w);
  if (text == NULL) return;
  if (events_path[0] != '\0') append_event(events_path, text);
  if (channel_path[0] != '\0') append_channel(text);
  lagscope__dealloc(text);
}

/* At exit, before any library's destructor: the events published so far are delivered. The
 * overlay stops with lagscope, first (it is the library's consumer), waiting at most a second
 * for an X server that does not answer. */
static void stop_at_exit(void) {
  if (lagscope_is_running()) lagscope_stop();
  write_loops();
}

int lagscope__preload_hud_wanted(void) { return hud_wanted; }

int lagscope__preload_wayland_hud_wanted(void) {
  return hud_wanted && hud_mode != LAGSCOPE__HUD_FRAME;
}

int lagscope__preload_overlay_only(void) { return hud_wanted && hud_mode == LAGSCOPE__HUD_OVERLAY; }

void lagscope__preload_display_opened(const char *name, int may_draw) {
  static atomic_int said;
  /* With --no-hud --refresh-hz N the overlay has nothing to do and opens no connection. */
  if (lagscope__hud_x11_app_connected(name, may_draw) == LAGSCOPE_ENOTSUP && hud_wanted &&
      !atomic_exchange(&said, 1))
    fprintf(stderr, "lagscope-preload: no HUD overlay: built without libxcb, libxcb-xfixes, "
                    "libxcb-shape and libxcb-randr (Debian: libxcb1-dev libxcb-xfixes0-dev "
                    "libxcb-shape0-dev libxcb-randr0-dev)\n");
}

/* In a child forked without exec, lagscope's threads are gone: nothing of it runs there. */
static void forget_in_child(void) {
  lagscope__hud_x11_forget_in_child();
  lagscope__hud_wl_forget_in_child();
  events_path[0] = '\0';
  channel_path[0] = '\0';
  channel_status = NULL; /* shared with the parent: its count, not this child's */
}

__attribute__((constructor)) static void preload_start(void) {
  char own_path[SETTING_MAX] = "";
  take_setting("LAGSCOPE_RUN_PRELOAD", own_path, sizeof(own_path));
  remove_own_preload(own_path);
  if (own_path[0] == '\0') return; /* not started by lagscope-run: stay inert */
  /* The auto-start's rule, as on Apple: LAGSCOPE_AUTOSTART=0 keeps lagscope out of this run. */
  take_setting("LAGSCOPE_RUN_EVENTS", events_path, sizeof(events_path));
  take_setting("LAGSCOPE_RUN_CHANNEL", channel_path, sizeof(channel_path));
  char run_id[64] = "";
  take_setting("LAGSCOPE_RUN_ID", run_id, sizeof(run_id));
  char why[200];
  if (attach_channel(why, sizeof(why)) != 0) /* lagscope-run then fails the run, saying why */
    fprintf(stderr, "lagscope-preload: lagscope-run's channel: %s\n", why);
  if (!lagscope__autostart_wanted(getenv("LAGSCOPE_AUTOSTART"), -1, why, sizeof(why))) {
    fprintf(stderr, "lagscope-preload: not started: %s\n", why);
    write_not_started("run_off", why);
    return;
  }

  lagscope_config config = lagscope_config_default();
  config.post_main = lagscope__preload_post;
  config.on_event = on_event;
  if (take_setting("LAGSCOPE_RUN_REPORT_DIR", report_dir, sizeof(report_dir)))
    config.report_dir = report_dir;
  if (take_setting("LAGSCOPE_RUN_BIND", server_bind, sizeof(server_bind)))
    config.server_bind = server_bind;
  if (take_setting("LAGSCOPE_RUN_METRICS_TOKEN", metrics_token, sizeof(metrics_token)))
    config.metrics_token = metrics_token; /* checked by lagscope-run; lagscope_start again */
  config.server_port =
      take_field("LAGSCOPE_RUN_PORT", LAGSCOPE__FIELD_server_port, config.server_port);
  config.server = (int)take_field("LAGSCOPE_RUN_SERVER", LAGSCOPE__FIELD_server, 1);
  if (take_setting("LAGSCOPE_RUN_PUSHGATEWAY", pushgateway_url, sizeof(pushgateway_url)))
    config.pushgateway_url = pushgateway_url;
  if (take_setting("LAGSCOPE_RUN_PUSH_INSTANCE", push_instance, sizeof(push_instance)))
    config.pushgateway_instance = push_instance;
  config.hang_threshold_ms = take_field("LAGSCOPE_RUN_THRESHOLD_MS",
                                        LAGSCOPE__FIELD_hang_threshold_ms,
                                        config.hang_threshold_ms);
  /* The display's rate: given (--refresh-hz), or read from the X server's RandR by lagscope's
   * own connection once the program opens a display (hud/linux/x11_overlay.c), config.refresh_hz
   * (60) until then and where it cannot be read. */
  uint32_t given_hz = take_field("LAGSCOPE_RUN_REFRESH_HZ", LAGSCOPE__FIELD_refresh_hz, 0);
  if (given_hz != 0) config.refresh_hz = given_hz;
  lagscope__hud_x11_set_measure_refresh(given_hz == 0);
  /* Drawn into GL and SDL_Renderer programs' frames (gl_hud.c, sdl_hud.c); a program that
   * never swaps or presents never asks for it, and lagscope renders nothing until asked. */
  config.hud = (int)take_field("LAGSCOPE_RUN_HUD", LAGSCOPE__FIELD_hud, 1);
  hud_wanted = config.hud;
  hud_mode = (int)take_number("LAGSCOPE_RUN_HUD_MODE", LAGSCOPE__HUD_AUTO, LAGSCOPE__HUD_OVERLAY,
                              LAGSCOPE__HUD_AUTO);
  lagscope__hud_x11_set_mode((lagscope__hud_mode)hud_mode);
  config.hud_corner = (lagscope_hud_corner)take_number("LAGSCOPE_RUN_HUD_CORNER", 0,
                                                       LAGSCOPE_HUD_BOTTOM_RIGHT, config.hud_corner);
  config.hud_expanded = (int)take_number("LAGSCOPE_RUN_HUD_EXPANDED", 0, 1, 0);
  quiet = (int)take_number("LAGSCOPE_RUN_QUIET", 0, 1, 0);
  config.log = log_line;

  pthread_atfork(NULL, NULL, forget_in_child);
  write_started(&config, run_id);
  /* None seen yet, said now: a program that ends with _exit (a shell's exit does) before the
   * first event still tells lagscope-run that it showed no loop. */
  write_loops();
  lagscope__preload_hooks_arm();
  int rc = lagscope_start(&config);
  if (rc != LAGSCOPE_OK) { /* logged; the program runs on, and lagscope-run fails the run */
    char reason[sizeof(last_log) + 64];
    snprintf(reason, sizeof(reason), "%s", last_log[0] != '\0' ? last_log : lagscope_strerror(rc));
    write_not_started("run_error", reason);
    return;
  }
  atexit(stop_at_exit);
}
