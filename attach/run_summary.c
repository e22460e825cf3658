/* lagscope-run's run summary: the channel read, a hang not ended read from its report, the
 * summary told on stderr (run_summary_output.c writes the result files). */
#define _GNU_SOURCE
#include "run_summary.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OWN_FRAMES_MAX 6
#define NAME_FRAMES 3 /* own frames in a hang's stable name */
#define REPORT_MAX (64u << 20) /* a report larger than this is not read (as lagscope-compare) */

/* ---- reading ------------------------------------------------------------------------------ */

static const char *string_member(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

static double number_member(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsNumber(item) ? item->valuedouble : -1;
}

/* The hang with this id, added if new; NULL without memory. Allocates. */
static lagscope__run_hang *hang_for(lagscope__run_summary *v, uint64_t id) {
  for (size_t i = 0; i < v->count; i++)
    if (v->hangs[i].id == id) return &v->hangs[i];
  if (v->count == v->capacity) {
    size_t capacity = v->capacity ? v->capacity * 2 : 8;
    lagscope__run_hang *grown = realloc(v->hangs, capacity * sizeof(*grown));
    if (grown == NULL) return NULL;
    v->hangs = grown;
    v->capacity = capacity;
  }
  lagscope__run_hang *h = &v->hangs[v->count++];
  memset(h, 0, sizeof(*h));
  h->id = id;
  return h;
}

/* Whether a frame is the program's own code, by its "code": lagscope's one rule (the program
 * and the libraries it ships, never lagscope's; core/stack/symbols.c), written by the preload
 * this lagscope-run started, so always there; a frame without it is not claimed. */
static int is_own_frame(const cJSON *frame) {
  const char *code = string_member(frame, "code");
  return code != NULL && strcmp(code, "app") == 0;
}

/* A frame as the summary tells it: "f (file.c:12)", or "module+0xoffset" without a name. */
static void put_frame(FILE *out, const cJSON *frame) {
  const char *function = string_member(frame, "function");
  const char *module = string_member(frame, "module");
  if (function == NULL) {
    const char *slash = strrchr(module, '/');
    const char *offset = string_member(frame, "module_offset");
    fprintf(out, "%s+%s", slash ? slash + 1 : module, offset ? offset : "?");
    return;
  }
  fputs(function, out);
  const char *file = string_member(frame, "file");
  double line = number_member(frame, "line");
  if (file != NULL && line > 0) {
    const char *base = strrchr(file, '/');
    fprintf(out, " (%s:%.0f)", base ? base + 1 : file, line);
  }
}

/* "f (file.c:12) <- g" for the stack's first max frames of the program's own code; names only:
 * "f <- g". Allocates. */
static char *own_frames_as(const cJSON *stack, int max, int names_only) {
  const cJSON *frame;
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  if (out == NULL) return NULL;
  int written = 0;
  cJSON_ArrayForEach(frame, stack) {
    if (written == max || string_member(frame, "module") == NULL || !is_own_frame(frame))
      continue;
    fputs(written ? " <- " : "", out);
    const char *function = string_member(frame, "function");
    if (names_only && function != NULL) fputs(function, out);
    else put_frame(out, frame);
    written++;
  }
  if (fclose(out) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* "f (file.c:12) <- g" for the stack's frames of the program's own code. Allocates. */
static char *own_frames(const cJSON *stack) { return own_frames_as(stack, OWN_FRAMES_MAX, 0); }

/* The stable name of a hang (lagscope__run_hang.name): "kind in f <- g <- h", the top
 * NAME_FRAMES own frames' functions (no file or line: those move with any edit). Allocates. */
static char *stable_name(const cJSON *cause, const cJSON *stack) {
  const char *kind = string_member(cause, "kind");
  char *frames = own_frames_as(stack, NAME_FRAMES, 1), *name = NULL;
  if (frames == NULL) return NULL;
  if (kind == NULL && frames[0] == '\0') name = strdup(""); /* nothing known: named later */
  else if (asprintf(&name, "%s%s%s", kind ? kind : "hang", frames[0] ? " in " : "", frames) < 0)
    name = NULL;
  free(frames);
  return name;
}

static char *cause_text(const cJSON *cause) {
  const char *kind = string_member(cause, "kind");
  const char *summary = string_member(cause, "summary");
  char *text = NULL;
  if (kind == NULL) return strdup("");
  if (asprintf(&text, "%s%s%s", kind, summary ? ": " : "", summary ? summary : "") < 0) return NULL;
  return text;
}

static int read_loops(lagscope__run_summary *v, const cJSON *o) {
  v->loops_known = 1;
#define READ_LOOP(id, key, name, brief, hooks) \
  v->key = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, #key));
  LAGSCOPE__RUN_LOOPS(READ_LOOP)
#undef READ_LOOP
  return 0;
}

/* What a hang_ended event and a hang report both carry: the cause, the own frames, the
 * signature, the cause's label, the report's path (an event's "report_path"; a report's own is
 * given by the caller). 0, or -1 without memory. Allocates. */
static int take_report_fields(lagscope__run_hang *h, const cJSON *o) {
  free(h->cause);
  free(h->own_frames);
  free(h->label);
  free(h->report_path);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(o, "cause");
  const char *label = string_member(cause, "label"), *path = string_member(o, "report_path");
  const char *signature = string_member(o, "signature");
  h->cause = cause_text(cause);
  h->own_frames = own_frames(cJSON_GetObjectItemCaseSensitive(o, "heaviest_stack"));
  h->label = strdup(label != NULL ? label : "");
  free(h->name);
  h->name = stable_name(cause, cJSON_GetObjectItemCaseSensitive(o, "heaviest_stack"));
  h->report_path = strdup(path != NULL ? path : "");
  h->signature[0] = '\0';
  if (signature != NULL && strlen(signature) == 16 && strspn(signature, "0123456789abcdef") == 16)
    memcpy(h->signature, signature, 17);
  return h->cause && h->own_frames && h->label && h->report_path && h->name ? 0 : -1;
}

/* hang_began or hang_ended (ended: 1); 0, 1 when skipped, -1 without memory. Allocates. */
static int read_hang(lagscope__run_summary *v, const cJSON *o, int ended) {
  double id = number_member(o, "hang_id");
  if (id < 1) return 1;
  lagscope__run_hang *h = hang_for(v, (uint64_t)id);
  if (h == NULL) return -1;
  if (number_member(o, "start_ns") > 0) h->start_ns = (uint64_t)number_member(o, "start_ns");
  /* "app_state"; "phase" in the events of a lagscope from before the rename */
  const char *app_state = string_member(o, "app_state");
  if (app_state == NULL) app_state = string_member(o, "phase");
  if (app_state != NULL) h->startup = strcmp(app_state, "startup") == 0;
  if (!ended) return 0;
  if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "counted"))) { /* idle: not a hang */
    size_t at = (size_t)(h - v->hangs);
    free(h->cause);
    free(h->own_frames);
    free(h->label);
    free(h->report_path);
    free(h->name);
    memmove(h, h + 1, (v->count - at - 1) * sizeof(*h));
    v->count--;
    return 0;
  }
  h->ended = 1;
  h->duration_ms = number_member(o, "duration_ms");
  return take_report_fields(h, o);
}

/* lagscope failed to start in the program: why. 0, or -1 without memory. Allocates. */
static int read_not_started(lagscope__run_summary *v, const cJSON *o) {
  const char *why = string_member(o, "why");
  free(v->not_started);
  v->not_started = strdup(why != NULL ? why : "no reason given");
  return v->not_started != NULL ? 0 : -1;
}

/* The error events the preload passes on: the overlay's (lagscope__run_overlay_error); the
 * last is kept. 0, 1 when the line is not one, -1 without memory. */
static int read_error(lagscope__run_summary *v, const cJSON *o) {
  const char *message = string_member(o, "message");
  if (message == NULL) return 1;
  if (!lagscope__run_overlay_error(message)) return 0;
  free(v->overlay_failed);
  v->overlay_failed = strdup(message);
  return v->overlay_failed != NULL ? 0 : -1;
}

int lagscope__run_overlay_error(const char *message) {
  static const char prefix[] = "no HUD overlay"; /* LAGSCOPE__HUD_X11_FAILED (x11_overlay.h) */
  return message != NULL && strncmp(message, prefix, sizeof(prefix) - 1) == 0;
}

/* The preload's first line: which run this is, the program's pid and its report folder. 0,
 * 1 when the line is not one, -1 without memory. Allocates. */
static int read_started(lagscope__run_summary *v, const cJSON *o) {
  const char *id = string_member(o, "run_id"), *dir = string_member(o, "report_dir");
  double pid = number_member(o, "pid");
  if (id == NULL || !(pid >= 1 && pid < 1e9)) return 1;
  snprintf(v->run_id, sizeof(v->run_id), "%s", id);
  v->pid = (long)pid;
  free(v->report_dir);
  v->report_dir = dir != NULL ? strdup(dir) : NULL;
  return dir == NULL || v->report_dir != NULL ? 0 : -1;
}

/* lagscope could not watch for a while: counted. 0, or 1 when the line is not one. */
static int read_blind(lagscope__run_summary *v, const cJSON *o) {
  double ms = number_member(o, "duration_ms");
  if (!(ms >= 0 && ms < 1e12)) return 1;
  v->blind_spells++;
  v->blind_ms += ms;
  return 0;
}

/* One line of the channel; 0 when understood, 1 when skipped, -1 without memory. */
static int read_line(lagscope__run_summary *v, const char *line) {
  cJSON *o = cJSON_Parse(line);
  const char *type = string_member(o, "type");
  int rc = 0; /* another event: nothing to tell */
  if (type == NULL)
    rc = 1;
  else if (strcmp(type, "run_loops") == 0)
    rc = read_loops(v, o);
  else if (strcmp(type, "run_started") == 0)
    rc = read_started(v, o);
  else if (strcmp(type, "hang_began") == 0 || strcmp(type, "hang_ended") == 0)
    rc = read_hang(v, o, strcmp(type, "hang_ended") == 0);
  else if (strcmp(type, "run_error") == 0)
    rc = read_not_started(v, o);
  else if (strcmp(type, "run_off") == 0)
    v->off = 1;
  else if (strcmp(type, "monitor_blind") == 0)
    rc = read_blind(v, o);
  else if (strcmp(type, "error") == 0)
    rc = read_error(v, o);
  cJSON_Delete(o);
  return rc;
}

void lagscope__run_stops_note(lagscope__run_stops *s, uint64_t now_ns, int stopped) {
  if (stopped == s->stopped) return; /* a second report of the same state */
  s->stopped = stopped;
  if (stopped) {
    s->start_ns[s->count % LAGSCOPE_RUN_STOPS_KEPT] = now_ns;
    s->end_ns[s->count % LAGSCOPE_RUN_STOPS_KEPT] = 0;
    s->count++;
  } else {
    s->end_ns[(s->count - 1) % LAGSCOPE_RUN_STOPS_KEPT] = now_ns;
  }
}

uint64_t lagscope__run_stopped_within(const lagscope__run_stops *s, uint64_t from_ns,
                                      uint64_t to_ns) {
  uint64_t total = 0;
  uint64_t kept = s->count < LAGSCOPE_RUN_STOPS_KEPT ? s->count : LAGSCOPE_RUN_STOPS_KEPT;
  for (uint64_t i = s->count - kept; i < s->count; i++) {
    uint64_t start = s->start_ns[i % LAGSCOPE_RUN_STOPS_KEPT];
    uint64_t end = s->end_ns[i % LAGSCOPE_RUN_STOPS_KEPT];
    if (end == 0 || end > to_ns) end = to_ns;
    if (start < from_ns) start = from_ns;
    if (end > start) total += end - start;
  }
  return total;
}

/* The report file fd as one NUL-terminated text (a regular file of at most REPORT_MAX), or
 * NULL. Allocates. */
static char *read_report(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)REPORT_MAX) return NULL;
  char *text = malloc((size_t)st.st_size + 1);
  size_t len = 0;
  while (text != NULL && len < (size_t)st.st_size) {
    ssize_t n = read(fd, text + len, (size_t)st.st_size - len);
    if (n <= 0) break;
    len += (size_t)n;
  }
  if (text != NULL) text[len] = '\0';
  return text;
}

/* The report named name in dir_fd, when it is the report of hang h of the program (pid):
 * its cause, frames, signature and label go to h. 1 when taken, 0 when not that hang's, -1
 * without memory. Opened without following a link, without waiting (a FIFO). Allocates. */
static int take_report(lagscope__run_hang *h, long pid, int dir_fd, const char *dir,
                       const char *name) {
  int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  char *text = fd >= 0 ? read_report(fd) : NULL;
  if (fd >= 0) close(fd);
  cJSON *o = text != NULL ? cJSON_Parse(text) : NULL;
  free(text);
  const cJSON *app = cJSON_GetObjectItemCaseSensitive(o, "app");
  int rc = 0;
  if (o != NULL && number_member(o, "hang_id") == (double)h->id &&
      number_member(app, "pid") == (double)pid && cJSON_IsObject(cJSON_GetObjectItem(o, "cause"))) {
    rc = take_report_fields(h, o) == 0 ? 1 : -1;
    h->report_ms = number_member(o, "duration_ms");
    free(h->report_path);
    if (rc == 1 && asprintf(&h->report_path, "%s/%s", dir, name) < 0) h->report_path = NULL;
    if (h->report_path == NULL) rc = -1;
    h->recovered = rc == 1;
  }
  cJSON_Delete(o);
  return rc;
}

/* A hang not ended (the program was killed, or timed out, during it): its cause, phases and
 * own frames from the report the hang recorder rewrote while it lasted, named
 * "<time>-<pid>-<hang id>.json" in the run's report folder. 0 (found or not: h->recovered),
 * -1 without memory. */
static int recover_open_hang(lagscope__run_hang *h, const lagscope__run_summary *v) {
  if (v->report_dir == NULL || v->pid <= 0) return 0;
  char suffix[64];
  snprintf(suffix, sizeof(suffix), "-%ld-%llu.json", v->pid, (unsigned long long)h->id);
  int dir_fd = open(v->report_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dir = dir_fd >= 0 ? fdopendir(dir_fd) : NULL;
  if (dir == NULL) {
    if (dir_fd >= 0) close(dir_fd);
    return 0;
  }
  int rc = 0;
  size_t n = strlen(suffix);
  for (struct dirent *e; rc == 0 && (e = readdir(dir)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] != '.' && len > n && strcmp(e->d_name + len - n, suffix) == 0)
      rc = take_report(h, v->pid, dir_fd, v->report_dir, e->d_name);
  }
  closedir(dir);
  return rc < 0 ? -1 : 0;
}

int lagscope__run_find_report(lagscope__run_hang *h, const char *report_dir, long pid) {
  lagscope__run_summary v = {.report_dir = (char *)report_dir, .pid = pid};
  return recover_open_hang(h, &v);
}

void lagscope__run_hang_clear(lagscope__run_hang *h) {
  free(h->cause);
  free(h->own_frames);
  free(h->label);
  free(h->report_path);
  free(h->name);
  memset(h, 0, sizeof(*h));
}

int lagscope__run_summary_read(const char *path, uint64_t exit_ns,
                               const lagscope__run_stops *stops, lagscope__run_summary *out) {
  memset(out, 0, sizeof(*out));
  out->startup_budget_ms = -1;
  FILE *in = fopen(path, "re");
  if (in == NULL) return errno == ENOENT ? 0 : -1;
  char *line = NULL;
  size_t size = 0;
  int rc = 0;
  while (rc == 0 && getline(&line, &size, in) >= 0) {
    out->lines++;
    int got = read_line(out, line);
    if (got < 0) rc = -1;
    if (got > 0) out->bad_lines++;
  }
  free(line);
  fclose(in);
  for (size_t i = 0; i < out->count; i++) {
    lagscope__run_hang *h = &out->hangs[i];
    if (!h->ended && exit_ns > h->start_ns) {
      uint64_t stopped = stops != NULL ? lagscope__run_stopped_within(stops, h->start_ns, exit_ns) : 0;
      h->stopped_ms = (double)stopped / 1e6;
      h->duration_ms = (double)(exit_ns - h->start_ns - stopped) / 1e6;
    }
    if (!h->ended && rc == 0 && recover_open_hang(h, out) != 0) rc = -1;
    if (h->cause == NULL) h->cause = strdup("");
    if (h->own_frames == NULL) h->own_frames = strdup("");
    if (h->label == NULL) h->label = strdup("");
    if (h->report_path == NULL) h->report_path = strdup("");
    if (h->name == NULL || h->name[0] == '\0') { /* no report: the best there is */
      free(h->name);
      h->name = strdup(h->ended ? "hang (no report)" : "hang not ended (no report)");
    }
    if (!h->cause || !h->own_frames || !h->label || !h->report_path || !h->name) rc = -1;
  }
  if (rc < 0) errno = ENOMEM;
  return rc;
}

void lagscope__run_summary_free(lagscope__run_summary *v) {
  for (size_t i = 0; i < v->count; i++) {
    free(v->hangs[i].cause);
    free(v->hangs[i].own_frames);
    free(v->hangs[i].label);
    free(v->hangs[i].report_path);
    free(v->hangs[i].name);
  }
  free(v->hangs);
  free(v->not_started);
  free(v->overlay_failed);
  free(v->report_dir);
  memset(v, 0, sizeof(*v));
}

/* ---- telling ------------------------------------------------------------------------------ */

/* Over the budget: budget_ms, or for a hang in the start-up the start-up budget when one was
 * given (0: none is over it). */
int lagscope__run_hang_is_over(const lagscope__run_summary *v, const lagscope__run_hang *h,
                               uint32_t budget_ms) {
  if (budget_ms == 0) return 0;
  if (h->startup && v->startup_budget_ms == 0) return 0;
  double budget = h->startup && v->startup_budget_ms > 0 ? (double)v->startup_budget_ms
                                                          : (double)budget_ms;
  return h->duration_ms > budget;
}

int lagscope__run_unwatched(const lagscope__run_summary *v) {
#define LOOP_SEEN(id, key, name, brief, hooks) || v->key
  return v->loops_known && !(0 LAGSCOPE__RUN_LOOPS(LOOP_SEEN));
#undef LOOP_SEEN
}

size_t lagscope__run_over_budget(const lagscope__run_summary *v, uint32_t budget_ms) {
  size_t over = 0;
  for (size_t i = 0; i < v->count; i++) over += lagscope__run_hang_is_over(v, &v->hangs[i], budget_ms);
  return over;
}

/* ", the start-up's 2000 ms" after the budget, when the start-up has its own. */
static void startup_budget_text(const lagscope__run_summary *v, char *out, size_t size) {
  out[0] = '\0';
  if (v->startup_budget_ms == 0) snprintf(out, size, "; start-up hangs do not count");
  else if (v->startup_budget_ms > 0)
    snprintf(out, size, ", %lld ms in the start-up", (long long)v->startup_budget_ms);
}

/* Where a hang not ended got its cause: the report's last rewrite, or why it has none. */
static void put_open_source(FILE *out, const lagscope__run_summary *v,
                            const lagscope__run_hang *h) {
  if (h->recovered)
    fprintf(out, "    not ended: its cause and frames as of its report's last rewrite, %s\n",
            h->report_path);
  else if (v->report_dir != NULL)
    fprintf(out, "    not ended: no report of it in %s (its cause is not known)\n", v->report_dir);
  else
    fprintf(out, "    not ended: its report's folder is not known (its cause is not known)\n");
}

void lagscope__run_summary_print(FILE *out, const lagscope__run_summary *v, const char *program,
                           uint32_t budget_ms) {
  size_t over = lagscope__run_over_budget(v, budget_ms);
  if (v->count == 0 && lagscope__run_unwatched(v))
    fprintf(out, "lagscope-run: %s: not watched (no hang could be seen)\n", program);
  else if (v->count == 0)
    fprintf(out, "lagscope-run: %s: no hang\n", program);
  else if (budget_ms > 0) {
    char startup[64];
    startup_budget_text(v, startup, sizeof(startup));
    fprintf(out, "lagscope-run: %s: %zu hang%s, %zu over the budget of %u ms%s\n", program,
            v->count, v->count == 1 ? "" : "s", over, budget_ms, startup);
  }
  else
    fprintf(out, "lagscope-run: %s: %zu hang%s\n", program, v->count, v->count == 1 ? "" : "s");
  for (size_t i = 0; i < v->count; i++) {
    const lagscope__run_hang *h = &v->hangs[i];
    char ended[96] = "";
    if (!h->ended && h->stopped_ms >= 1)
      snprintf(ended, sizeof(ended), " (the program ended during it; %.0f ms stopped not counted)",
               h->stopped_ms);
    else if (!h->ended)
      snprintf(ended, sizeof(ended), " (the program ended during it)");
    fprintf(out, "  hang %llu: %.0f ms%s%s%s%s%s\n", (unsigned long long)h->id, h->duration_ms,
            h->startup ? " (start-up)" : "", ended, lagscope__run_hang_is_over(v, h, budget_ms) ? ", over budget" : "",
            h->cause[0] ? ", " : "", h->cause);
    if (h->own_frames[0]) fprintf(out, "    in %s\n", h->own_frames);
    if (!h->ended) put_open_source(out, v, h);
  }
  char loops[160];
  lagscope__run_loop_names(loops, sizeof(loops), 0);
  if (lagscope__run_unwatched(v))
    fprintf(out,
            "lagscope-run: no %s loop was seen in %s: from "
            "outside, lagscope sees only hangs of such a loop. To watch another loop, start "
            "lagscope in the program's code (docs/guide.md, \"Your own loop\").%s\n",
            loops, program, v->allow_unwatched ? " Allowed (--allow-unwatched)."
                                        : " Not watched: exit 5 (--allow-unwatched when that is "
                                          "expected).");
  if (v->blind_spells > 0)
    fprintf(out,
            "lagscope-run: lagscope could not watch %s's main thread for %.0f ms in %zu spell%s "
            "(its own work, or a CPU it waited for, under load): a stall in them may be missing "
            "above\n",
            program, v->blind_ms, v->blind_spells, v->blind_spells == 1 ? "" : "s");
  if (v->overlay_failed != NULL)
    fprintf(out, "lagscope-run: %s: %s\n", program, v->overlay_failed);
  if (v->bad_lines > 0)
    fprintf(out, "lagscope-run: %zu line%s of the preload's channel could not be read\n",
            v->bad_lines, v->bad_lines == 1 ? "" : "s");
}
