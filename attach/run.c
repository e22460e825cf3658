/* lagscope-run [options] -- PROGRAM [ARGS...]: runs PROGRAM with lagscope preloaded
 * (liblagscope-preload.so), then tells its hangs and, with --budget-ms, fails CI on one.
 *
 * The settings go to the preload through LAGSCOPE_RUN_* variables, which it removes; the
 * hangs come back through a channel file in a private temporary folder (channel.h). The exit
 * status is the program's (128 + N when signal N ended it), 3 with --budget-ms when a hang was
 * longer, 2 for a bad option or when lagscope could not watch the program (it did not start in
 * it: the reason is said), 4 when the channel failed (said), 5 when the program exited 0 but
 * lagscope saw none of the loops it hooks (said; --allow-unwatched: expected), 127 when
 * PROGRAM cannot be run. */
#define _GNU_SOURCE
#include "channel.h"
#include "compare.h"
#include "run_summary.h"
#include "run_usage.h"
#include "run_vulkan.h"

#include "base/base.h" /* the config table's bounds: macros and an inline function only */

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PRELOAD_NAME "liblagscope-preload.so"

typedef struct options {
  const char *events;
  const char *report_dir;
  const char *port;
  const char *bind;
  const char *metrics_token; /* the user's credential for /metrics: never printed */
  const char *threshold_ms;
  const char *refresh_hz; /* NULL: read from RandR (x11_refresh.h), else config's 60 */
  const char *junit;
  const char *baseline;   /* --baseline: compare this run's hangs with it by signature */
  const char *rules;      /* with --baseline: a fingerprint rules file (compare_rules.c) */
  const char *summary_md; /* with --baseline: the comparison as Markdown */
  const char *json;       /* --json: the run (and comparison) as JSON for scripts */
  const char *tolerance_ms, *tolerance_pct;
  uint32_t budget_ms;
  int64_t budget_startup_ms; /* -1: as budget_ms */
  int no_server, quiet, no_hud, hud_expanded;
  int allow_unwatched; /* a program with no loop lagscope hooks is expected: no exit 5 */
  const char *hud_corner; /* "0".."3", lagscope_hud_corner */
  const char *hud_mode;   /* "1" frame, "2" overlay (hud/linux/x11_overlay.h); NULL: auto */
  const char *pushgateway, *push_instance; /* config.pushgateway_url and _instance */
  char **program; /* PROGRAM and its arguments, NULL-terminated */
} options;

static int bad_option(const char *why, const char *what) {
  fprintf(stderr, "lagscope-run: %s: %s (see lagscope-run --help)\n", why, what);
  return 2;
}

/* A whole number in [min, max] as text, checked; 0 when good. */
static int check_number(const char *name, const char *text, unsigned long min, unsigned long max,
                        unsigned long *value) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v < min || v > max) {
    char what[128];
    snprintf(what, sizeof(what), "%s %s (a whole number in %lu..%lu)", name, text, min, max);
    return bad_option("bad value", what);
  }
  if (value != NULL) *value = v;
  return 0;
}

/* A whole number in the config field's range (LAGSCOPE__CONFIG_FIELDS), as text; 0 when good. */
static int check_field(const char *name, const char *text, lagscope__config_field field) {
  lagscope__config_bounds b = lagscope__config_bounds_of(field);
  return check_number(name, text, (unsigned long)b.min, (unsigned long)b.max, NULL);
}

/* Parses argv into o; 0, 1 for --help (said), or 2 (said). */
static int parse_options(int argc, char **argv, options *o) {
  memset(o, 0, sizeof(*o));
  o->budget_startup_ms = -1;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    unsigned long n;
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (a[0] != '-') break; /* PROGRAM, without "--" */
    if (strcmp(a, "--help") == 0) {
      lagscope__run_usage(stdout);
      return 1;
    }
    if (strcmp(a, "--no-server") == 0) { o->no_server = 1; continue; }
    if (strcmp(a, "--quiet") == 0) { o->quiet = 1; continue; }
    if (strcmp(a, "--no-hud") == 0) { o->no_hud = 1; continue; }
    if (strcmp(a, "--hud-expanded") == 0) { o->hud_expanded = 1; continue; }
    if (strcmp(a, "--allow-unwatched") == 0) { o->allow_unwatched = 1; continue; }
    const char **slot = strcmp(a, "--events") == 0       ? &o->events
                        : strcmp(a, "--report-dir") == 0 ? &o->report_dir
                        : strcmp(a, "--port") == 0       ? &o->port
                        : strcmp(a, "--bind") == 0       ? &o->bind
                        : strcmp(a, "--metrics-token") == 0 ? &o->metrics_token
                        : strcmp(a, "--threshold-ms") == 0 ? &o->threshold_ms
                        : strcmp(a, "--refresh-hz") == 0 ? &o->refresh_hz
                        : strcmp(a, "--junit") == 0      ? &o->junit
                        : strcmp(a, "--baseline") == 0   ? &o->baseline
                        : strcmp(a, "--rules") == 0      ? &o->rules
                        : strcmp(a, "--summary-md") == 0 ? &o->summary_md
                        : strcmp(a, "--json") == 0       ? &o->json
                        : strcmp(a, "--tolerance-ms") == 0 ? &o->tolerance_ms
                        : strcmp(a, "--tolerance-pct") == 0 ? &o->tolerance_pct
                        : strcmp(a, "--pushgateway") == 0 ? &o->pushgateway
                        : strcmp(a, "--push-instance") == 0 ? &o->push_instance
                                                         : NULL;
    int is_budget = strcmp(a, "--budget-ms") == 0, is_corner = strcmp(a, "--hud-corner") == 0;
    int is_startup = strcmp(a, "--budget-startup") == 0, is_mode = strcmp(a, "--hud-mode") == 0;
    if (slot == NULL && !is_budget && !is_corner && !is_startup && !is_mode)
      return bad_option("unknown option", a);
    if (value == NULL || value[0] == '\0') return bad_option("option needs a value", a);
    i++;
    if (is_corner) {
      static const char *const corners[] = {"tl", "tr", "bl", "br"};
      static const char *const numbers[] = {"0", "1", "2", "3"};
      o->hud_corner = NULL;
      for (size_t c = 0; c < sizeof(corners) / sizeof(corners[0]); c++)
        if (strcmp(value, corners[c]) == 0) o->hud_corner = numbers[c];
      if (o->hud_corner == NULL) return bad_option("bad value (tl, tr, bl or br)", value);
      continue;
    }
    if (is_mode) {
      o->hud_mode = strcmp(value, "frame") == 0 ? "1" : strcmp(value, "overlay") == 0 ? "2" : NULL;
      if (o->hud_mode == NULL) return bad_option("bad value (frame or overlay)", value);
      continue;
    }
    if (is_budget || is_startup) {
      if (check_number(a, value, is_budget ? 1 : 0, 3600000, &n)) return 2;
      if (is_budget) o->budget_ms = (uint32_t)n;
      else o->budget_startup_ms = (int64_t)n;
      continue;
    }
    if (slot == &o->port && check_field(a, value, LAGSCOPE__FIELD_server_port)) return 2;
    if (slot == &o->tolerance_ms && check_number(a, value, 0, 3600000, NULL)) return 2;
    if (slot == &o->tolerance_pct && check_number(a, value, 0, 100000, NULL)) return 2;
    if (slot == &o->threshold_ms && check_field(a, value, LAGSCOPE__FIELD_hang_threshold_ms))
      return 2;
    if (slot == &o->refresh_hz && check_field(a, value, LAGSCOPE__FIELD_refresh_hz)) return 2;
    const char *problem; /* the credential's: said without its value */
    if (slot == &o->metrics_token && lagscope__credential_problem(value, &problem) != 0)
      return bad_option(problem, a);
    lagscope__http_url url; /* the config check's rule and words, before the program runs */
    const char *bad = slot == &o->pushgateway ? lagscope__http_url_parse(value, &url) : NULL;
    if (bad != NULL) return bad_option(bad, value);
    *slot = value;
  }
  if (i >= argc) return bad_option("no program to run", "give it after --");
  if (o->baseline == NULL && (o->summary_md || o->tolerance_ms || o->tolerance_pct || o->rules))
    return bad_option("needs --baseline", o->summary_md ? "--summary-md"
                                          : o->rules    ? "--rules"
                                                        : "--tolerance-ms/-pct");
  o->program = argv + i;
  return 0;
}

/* The preload's absolute path: $LAGSCOPE_PRELOAD, else beside this program (the build tree),
 * else in the library folder of the install this program belongs to. */
static int find_preload(char *out, size_t size) {
  const char *given = getenv("LAGSCOPE_PRELOAD");
  if (given != NULL && given[0] != '\0') {
    if (realpath(given, out) == NULL || size < PATH_MAX) return -1;
    return access(out, R_OK);
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return -1;
  self[n] = '\0';
  const char *dir = dirname(self);
  const char *candidates[] = {".", LAGSCOPE_RUN_BIN_TO_LIB};
  for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
    char path[PATH_MAX * 2];
    snprintf(path, sizeof(path), "%s/%s/%s", dir, candidates[i], PRELOAD_NAME);
    if (access(path, R_OK) == 0 && realpath(path, out) != NULL && size >= PATH_MAX) return 0;
  }
  return -1;
}

static int set(const char *name, const char *value) {
  return value == NULL ? 0 : setenv(name, value, 1);
}

/* The channel (channel.h): the private folder, the file the preload appends to, the count. */
typedef struct channel {
  char folder[PATH_MAX + 32];
  char path[PATH_MAX + 64];
  int dir_fd, file_fd, count_fd;
  struct stat file_st, count_st;
  lagscope__channel_status *count;
} channel;

/* The environment the program starts with: the preload first in LD_PRELOAD, the settings. */
static int prepare_environment(const options *o, const char *preload, const channel *ch) {
  const char *before = getenv("LD_PRELOAD");
  char *list = NULL;
  if (asprintf(&list, "%s%s%s", preload, before && before[0] ? " " : "", before ? before : "") < 0)
    return -1;
  int rc = setenv("LD_PRELOAD", list, 1);
  free(list);
  rc |= set("LAGSCOPE_RUN_PRELOAD", preload);
  char status[96], id[64];
  snprintf(status, sizeof(status), "%d:%llu:%llu", ch->count_fd,
           (unsigned long long)ch->count_st.st_dev, (unsigned long long)ch->count_st.st_ino);
  snprintf(id, sizeof(id), "%llu:%llu", (unsigned long long)ch->file_st.st_dev,
           (unsigned long long)ch->file_st.st_ino);
  char run_id[64];
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  snprintf(run_id, sizeof(run_id), "%lld.%09ld-%ld", (long long)now.tv_sec, now.tv_nsec,
           (long)getpid());
  rc |= set("LAGSCOPE_RUN_ID", run_id);
  rc |= set("LAGSCOPE_RUN_CHANNEL", ch->path);
  rc |= set("LAGSCOPE_RUN_CHANNEL_ID", id);
  rc |= set("LAGSCOPE_RUN_STATUS", status);
  rc |= set("LAGSCOPE_RUN_EVENTS", o->events);
  rc |= set("LAGSCOPE_RUN_REPORT_DIR", o->report_dir);
  rc |= set("LAGSCOPE_RUN_PORT", o->port);
  rc |= set("LAGSCOPE_RUN_BIND", o->bind);
  rc |= set("LAGSCOPE_RUN_METRICS_TOKEN", o->metrics_token);
  rc |= set("LAGSCOPE_RUN_THRESHOLD_MS", o->threshold_ms);
  rc |= set("LAGSCOPE_RUN_REFRESH_HZ", o->refresh_hz);
  rc |= set("LAGSCOPE_RUN_SERVER", o->no_server ? "0" : NULL);
  rc |= set("LAGSCOPE_RUN_QUIET", o->quiet ? "1" : NULL);
  rc |= set("LAGSCOPE_RUN_HUD", o->no_hud ? "0" : NULL);
  rc |= set("LAGSCOPE_RUN_HUD_CORNER", o->hud_corner);
  rc |= set("LAGSCOPE_RUN_HUD_MODE", o->hud_mode);
  rc |= set("LAGSCOPE_RUN_HUD_EXPANDED", o->hud_expanded ? "1" : NULL);
  rc |= set("LAGSCOPE_RUN_PUSHGATEWAY", o->pushgateway);
  rc |= set("LAGSCOPE_RUN_PUSH_INSTANCE", o->push_instance);
  return rc | lagscope__run_vulkan_prepare(ch->dir_fd, ch->folder, preload);
}

static pid_t child;
/* SIGINT's and SIGQUIT's actions before lagscope-run ignored them: the program gets them back. */
static struct sigaction int_before, quit_before;

/* SIGTERM and SIGHUP go on to the program, which decides; lagscope-run tells afterwards. */
static void forward_signal(int signo) {
  if (child > 0) kill(child, signo);
}

/* Starts the program; its pid, or -1 with errno from exec (the program could not be run). */
static pid_t start_program(char **program) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &int_before, NULL);
    sigaction(SIGQUIT, &quit_before, NULL);
    execvp(program[0], program);
    int err = errno;
    ssize_t rc = write(report[1], &err, sizeof(err));
    (void)rc;
    _exit(127);
  }
  close(report[1]);
  int err = 0;
  ssize_t got = pid > 0 ? read(report[0], &err, sizeof(err)) : 0;
  close(report[0]);
  if (pid < 0) return -1;
  if (got == (ssize_t)sizeof(err)) {
    waitpid(pid, NULL, 0);
    errno = err;
    return -1;
  }
  return pid;
}

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The program's exit status, the shell's way: 128 + N when signal N ended it. Notes in stops
 * when it stopped and went on, so that a hang its end cut short does not count that time. */
static int wait_program(pid_t pid, lagscope__run_stops *stops) {
  int status;
  for (;;) {
    if (waitpid(pid, &status, WUNTRACED | WCONTINUED) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (WIFSTOPPED(status))
      lagscope__run_stops_note(stops, monotonic_ns(), 1);
    else if (WIFCONTINUED(status))
      lagscope__run_stops_note(stops, monotonic_ns(), 0);
    else
      break;
  }
  lagscope__run_stops_note(stops, monotonic_ns(), 0); /* killed while stopped */
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* With --baseline: this run's hangs (the channel's hang_ended lines, and a hang not ended by
 * its report's last rewrite: compare.c) against the baseline's, by signature; LAGSCOPE_COMPARE_FAILED when a new or regressed one fails, 2 when the baseline
 * cannot be read, else status. With --json, the comparison's JSON in *json (allocated). */
static int compare_with_baseline(const options *o, const char *channel, int status,
                                 char **json) {
  lagscope__compare_options judge = {
      .tolerance_ms = o->tolerance_ms ? strtod(o->tolerance_ms, NULL) : 250,
      .tolerance_pct = o->tolerance_pct ? strtod(o->tolerance_pct, NULL) : 25,
      .budget_ms = o->budget_ms};
  lagscope__compare c = {0};
  char why[512];
  if ((o->rules != NULL && lagscope__compare_read_rules(&c, o->rules, why, sizeof(why)) != 0) ||
      lagscope__compare_read(&c, 0, o->baseline, why, sizeof(why)) != 0 ||
      lagscope__compare_read(&c, 1, channel, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-run: cannot compare: %s\n", why);
    lagscope__compare_free(&c);
    return 2;
  }
  size_t failing = lagscope__compare_judge(&c, &judge);
  lagscope__compare_table(stderr, &c, &judge);
  size_t json_size;
  FILE *json_out = o->json != NULL ? open_memstream(json, &json_size) : NULL;
  if (json_out != NULL) {
    lagscope__compare_json_object(json_out, &c, &judge);
    if (fclose(json_out) != 0) {
      free(*json);
      *json = NULL;
    }
  }
  if (o->junit != NULL && lagscope__compare_junit(o->junit, &c, &judge, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-run: cannot write --junit %s: %s\n", o->junit, why);
    if (status == 0) status = 1;
  }
  if (o->summary_md != NULL &&
      lagscope__compare_markdown(o->summary_md, &c, &judge, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-run: cannot write --summary-md %s: %s\n", o->summary_md, why);
    if (status == 0) status = 1;
  }
  lagscope__compare_free(&c);
  return failing > 0 ? LAGSCOPE_COMPARE_FAILED : status;
}

/* A failed line's reason (channel.h), as the message ends. */
static const char *failure_text(int reason, int err) {
  switch (reason) {
    case LAGSCOPE__CHANNEL_REPLACED: return "another file was at its path";
    case LAGSCOPE__CHANNEL_SHORT: return "a write was cut short (a full disk or a size limit?)";
    default: return strerror(err); /* it could not be opened, or written */
  }
}

/* Why the channel failed, in why, or NULL when every line the preload wrote is in the file it
 * was given, and nothing else (or the preload never ran: nothing in it, nothing counted). */
static const char *channel_failure(const channel *ch, const lagscope__run_summary *v,
                                   const char *program, char *why, size_t size) {
  const lagscope__channel_status *c = ch->count;
  unsigned long long begun = atomic_load(&c->begun), written = atomic_load(&c->written),
                     failed = atomic_load(&c->failed);
  int reason = atomic_load(&c->first_reason), err = atomic_load(&c->first_errno);
  struct stat now;
  if (fstatat(ch->dir_fd, "hangs.jsonl", &now, AT_SYMLINK_NOFOLLOW) != 0 ||
      now.st_dev != ch->file_st.st_dev || now.st_ino != ch->file_st.st_ino)
    snprintf(why, size, "its file %s was removed or replaced during the run", ch->path);
  else if (!atomic_load(&c->attached))
    return v->lines == 0 ? NULL : (snprintf(why, size, "lagscope in %s could not count its "
                                            "lines (the preload said why above)", program), why);
  else if (failed > 0)
    snprintf(why, size, "%llu of %llu lines of lagscope's could not be written to %s: %s",
             failed, begun, ch->path, failure_text(reason, err));
  else if (v->lines < written || v->lines > begun)
    snprintf(why, size, "%s holds %zu lines where lagscope wrote %llu", ch->path, v->lines,
             written);
  else
    return NULL;
  return why;
}

/* The end of tell: --json written (the run, error: why there is no verdict, comparison: the
 * comparison's JSON), the run summary freed; the exit status (1 when the file could not be
 * written and nothing else failed). */
static int finish(const options *o, lagscope__run_summary *v, const char *program, int status,
                  const char *error, const char *comparison) {
  char why[512];
  if (o->json != NULL && lagscope__run_json(o->json, v, program, o->budget_ms, status, error,
                                            comparison, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-run: cannot write --json %s: %s\n", o->json, why);
    if (status == 0) status = 1;
  }
  lagscope__run_summary_free(v);
  return status;
}

/* Tells what the channel holds; the exit status. */
static int tell(const options *o, const channel *ch, const lagscope__run_stops *stops,
                int status) {
  lagscope__run_summary v;
  const char *program = o->program[0];
  const char *slash = strrchr(program, '/');
  if (slash != NULL) program = slash + 1;
  if (lagscope__run_summary_read(ch->path, monotonic_ns(), stops, &v) != 0)
    fprintf(stderr, "lagscope-run: could not read every hang (%s)\n", strerror(errno));
  v.startup_budget_ms = o->budget_startup_ms;
  /* The result files may be pipes whose reader left: an error to say, not a signal to die of. */
  struct sigaction ignore = {.sa_handler = SIG_IGN};
  sigaction(SIGPIPE, &ignore, NULL);
  /* A run whose hangs did not all come back passes no gate: its "no hang" would be a lie. */
  char why[PATH_MAX + 256], error[PATH_MAX + 512];
  if (channel_failure(ch, &v, program, why, sizeof(why)) != NULL) {
    fprintf(stderr, "lagscope-run: the channel from lagscope in %s failed: %s; no verdict (exit "
            "%d)\n", program, why, LAGSCOPE_RUN_CHANNEL_FAILED);
    snprintf(error, sizeof(error), "the channel failed: %s", why);
    return finish(o, &v, program, LAGSCOPE_RUN_CHANNEL_FAILED, error, NULL);
  }
  if (v.off) { /* told not to watch: the program's status, and no verdict */
    fprintf(stderr, "lagscope-run: lagscope was off in %s (LAGSCOPE_AUTOSTART): nothing watched\n",
            program);
    return finish(o, &v, program, status, "lagscope was off (LAGSCOPE_AUTOSTART)", NULL);
  }
  /* A run that lagscope did not watch passes no gate: its "no hang" would be a guess. */
  if (v.not_started != NULL || !v.loops_known) {
    if (v.not_started != NULL)
      snprintf(error, sizeof(error), "lagscope did not start in %s: %s", program, v.not_started);
    else
      snprintf(error, sizeof(error), "lagscope was not loaded into %s (a static or setuid "
               "program, or one that ended before its constructors ran)", program);
    fprintf(stderr, "lagscope-run: %s\n", error);
    return finish(o, &v, program, LAGSCOPE_RUN_NOT_WATCHED, error, NULL);
  }
  v.allow_unwatched = o->allow_unwatched;
  /* No loop of those it hooks seen: nothing was watched, so no gate passes on it (exit 5 in
   * place of the program's 0), unless the user said it is expected. No comparison either: every
   * signature of the baseline would be "fixed". */
  int unwatched = lagscope__run_unwatched(&v) && !o->allow_unwatched;
  if (o->baseline != NULL && !unwatched) { /* the comparison is the gate: known hangs pass */
    if (!o->quiet) lagscope__run_summary_print(stderr, &v, program, 0);
    char *comparison = NULL;
    status = compare_with_baseline(o, ch->path, status, &comparison);
    status = finish(o, &v, program, status, NULL, comparison);
    free(comparison);
    return status;
  }
  size_t over = lagscope__run_over_budget(&v, o->budget_ms);
  if (!o->quiet || over > 0 || unwatched) lagscope__run_summary_print(stderr, &v, program, o->budget_ms);
  if (o->junit != NULL &&
      lagscope__run_junit(o->junit, &v, program, o->budget_ms, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-run: cannot write --junit %s: %s\n", o->junit, why);
    if (status == 0) status = 1;
  }
  if (over > 0) status = LAGSCOPE_RUN_OVER_BUDGET;
  else if (unwatched && status == 0) status = LAGSCOPE_RUN_UNWATCHED;
  if (unwatched) {
    char loops[160];
    lagscope__run_loop_names(loops, sizeof(loops), 0);
    snprintf(error, sizeof(error), "not watched: no %s loop was seen", loops);
  }
  return finish(o, &v, program, status, unwatched ? error : NULL, NULL);
}

/* Why nobody but this user and root can rename or replace what is in path, or NULL when it is
 * safe: path (resolved: no link in it) and every folder above it belong to root or this user,
 * and none that others may write is without the sticky bit (as /tmp has). Else another user
 * could swap the private folder for a link and have the events appended to a file of this
 * user's. */
static const char *unsafe_folder(const char *resolved, char *why, size_t why_size) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s", resolved);
  for (char *end = path + strlen(path);;) {
    struct stat st;
    if (lstat(path[0] != '\0' ? path : "/", &st) != 0 || !S_ISDIR(st.st_mode))
      snprintf(why, why_size, "%s is not a folder", path[0] != '\0' ? path : "/");
    else if (st.st_uid != 0 && st.st_uid != geteuid())
      snprintf(why, why_size, "%s belongs to another user (uid %u)", path, (unsigned)st.st_uid);
    else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
      snprintf(why, why_size, "%s is writable by others and not sticky", path);
    else if (path[0] == '\0')
      return NULL; /* the root, checked */
    else {
      end = strrchr(path, '/');
      *end = '\0';
      continue;
    }
    return why;
  }
}

/* dir with its links resolved into resolved (PATH_MAX), when that is a safe folder (above);
 * 0, or -1 with why. The folder is then made through the resolved path: a link on the way,
 * which another user may swap once checked, is never taken again. */
static int safe_base(const char *dir, char *resolved, char *why, size_t why_size) {
  if (realpath(dir, resolved) == NULL) {
    snprintf(why, why_size, "%s: %s", dir, strerror(errno));
    return -1;
  }
  return unsafe_folder(resolved, why, why_size) == NULL ? 0 : -1;
}

/* Makes lagscope-run's private folder (0700) in $TMPDIR, or in /tmp when $TMPDIR is unsafe
 * (said), and opens it (ch->dir_fd). 0, or -1 (said). */
static int make_private_folder(channel *ch) {
  const char *tmp = getenv("TMPDIR");
  char base[PATH_MAX], why[PATH_MAX + 64];
  int safe = -1;
  if (tmp != NULL && tmp[0] != '\0' && (safe = safe_base(tmp, base, why, sizeof(why))) != 0)
    fprintf(stderr, "lagscope-run: TMPDIR is not safe (%s): using /tmp\n", why);
  if (safe != 0 && safe_base("/tmp", base, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-run: no safe folder for a temporary file: %s\n", why);
    return -1;
  }
  snprintf(ch->folder, sizeof(ch->folder), "%s/lagscope-run-XXXXXX", base);
  if (mkdtemp(ch->folder) == NULL) {
    fprintf(stderr, "lagscope-run: cannot make a temporary folder in %s: %s\n", base,
            strerror(errno));
    return -1;
  }
  ch->dir_fd = open(ch->folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (ch->dir_fd < 0) {
    fprintf(stderr, "lagscope-run: cannot open %s: %s\n", ch->folder, strerror(errno));
    rmdir(ch->folder);
    return -1;
  }
  snprintf(ch->path, sizeof(ch->path), "%s/hangs.jsonl", ch->folder);
  return 0;
}

/* Makes the channel in the private folder: its file (0600, new), and the count of its lines in
 * a sealed memfd, left open (not close-on-exec) for the preload, which maps and closes it
 * (channel.h). Its one page is written here, so that the program's stores into it never fault.
 * 0, or -1 (said). */
static int make_channel(channel *ch) {
  ch->file_fd = openat(ch->dir_fd, "hangs.jsonl",
                       O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  ch->count_fd = memfd_create("lagscope-run-channel", MFD_ALLOW_SEALING);
  static const lagscope__channel_status zero;
  int ok = ch->file_fd >= 0 && ch->count_fd >= 0 && fstat(ch->file_fd, &ch->file_st) == 0 &&
           write(ch->count_fd, &zero, sizeof(zero)) == (ssize_t)sizeof(zero) &&
           fcntl(ch->count_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0 &&
           fstat(ch->count_fd, &ch->count_st) == 0;
  void *page = ok ? mmap(NULL, sizeof(zero), PROT_READ | PROT_WRITE, MAP_SHARED, ch->count_fd, 0)
                  : MAP_FAILED;
  if (page == MAP_FAILED) {
    fprintf(stderr, "lagscope-run: cannot make the channel in %s: %s\n", ch->folder,
            strerror(errno));
    return -1;
  }
  ch->count = page;
  return 0;
}

static void remove_channel(channel *ch) {
  if (unlinkat(ch->dir_fd, "hangs.jsonl", 0) != 0 && errno == EISDIR)
    unlinkat(ch->dir_fd, "hangs.jsonl", AT_REMOVEDIR);
  lagscope__run_vulkan_remove(ch->dir_fd);
  rmdir(ch->folder);
}

/* Readies the --events file, which will hold the viewer's token (its server_started line):
 * made 0600 when missing; an existing one is taken only when it is this user's, and not through
 * a link, and made 0600 when others could read it (said). A character device (/dev/null, a
 * terminal) keeps nothing: taken as it is. 0, or 2 (said). */
static int prepare_events(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd >= 0) {
    close(fd);
    return 0;
  }
  if (errno == EEXIST) /* no write: a FIFO opens at once, without a reader */
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  char why[160] = "";
  if (fd < 0)
    snprintf(why, sizeof(why), "%s", errno == ELOOP ? "a symbolic link (refused: give the file "
                                                      "itself)" : strerror(errno));
  else if (fstat(fd, &st) != 0)
    snprintf(why, sizeof(why), "%s", strerror(errno));
  else if (S_ISCHR(st.st_mode))
    ;
  else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    snprintf(why, sizeof(why), "not a file or a FIFO (refused)");
  else if (st.st_uid != geteuid())
    snprintf(why, sizeof(why), "it belongs to another user (uid %u), who could read the "
             "viewer's token in it (refused)", (unsigned)st.st_uid);
  else if ((st.st_mode & 077) != 0) {
    if (fchmod(fd, st.st_mode & 07700) != 0)
      snprintf(why, sizeof(why), "mode %03o, and it cannot be made 0600: %s",
               (unsigned)(st.st_mode & 0777), strerror(errno));
    else
      fprintf(stderr, "lagscope-run: --events %s was mode %03o: made 0600, as it will hold the "
              "viewer's token\n", path, (unsigned)(st.st_mode & 0777));
  }
  if (fd >= 0) close(fd);
  if (why[0] == '\0') return 0;
  fprintf(stderr, "lagscope-run: --events %s: %s\n", path, why);
  return 2;
}

int main(int argc, char **argv) {
  options o;
  int rc = parse_options(argc, argv, &o);
  if (rc != 0) return rc == 1 ? 0 : rc;
  char preload[PATH_MAX];
  if (find_preload(preload, sizeof(preload)) != 0) {
    fprintf(stderr, "lagscope-run: %s not found beside lagscope-run or in its library folder "
            "(set LAGSCOPE_PRELOAD to its path)\n", PRELOAD_NAME);
    return 127;
  }
  if (o.events != NULL && (rc = prepare_events(o.events)) != 0) return rc;
  static channel ch;
  if (make_private_folder(&ch) != 0) return 1;
  if (make_channel(&ch) != 0 || prepare_environment(&o, preload, &ch) != 0) {
    if (ch.count != NULL) fprintf(stderr, "lagscope-run: cannot set the environment: %s\n",
                                  strerror(errno));
    remove_channel(&ch);
    return 1;
  }
  /* The terminal's Ctrl-C reaches the program too: lagscope-run outlives it to tell. */
  struct sigaction ignore = {.sa_handler = SIG_IGN};
  sigaction(SIGINT, &ignore, &int_before);
  sigaction(SIGQUIT, &ignore, &quit_before);
  struct sigaction forward = {.sa_handler = forward_signal};
  sigaction(SIGTERM, &forward, NULL);
  sigaction(SIGHUP, &forward, NULL);
  child = start_program(o.program);
  close(ch.count_fd); /* the program has its own copy, which the preload closes */
  if (child < 0) {
    fprintf(stderr, "lagscope-run: cannot run %s: %s\n", o.program[0], strerror(errno));
    remove_channel(&ch);
    return 127;
  }
  static lagscope__run_stops stops;
  int status = wait_program(child, &stops);
  status = tell(&o, &ch, &stops, status);
  remove_channel(&ch);
  return status;
}
