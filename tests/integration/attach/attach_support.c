/* test_attach's shared helpers: the case's folder and screen, lagscope-run run to its end or
 * until its metrics, the events read back, and what a stuck program's main thread is blocked
 * in (/proc). Declared in attach_support.h. */
#define _GNU_SOURCE
#include "attach_support.h"

spawn_proc xvfb;
char folder[256];    /* this case's temporary folder */
char events[320];    /* --events FILE */
char junit[320];     /* --junit FILE */

void make_folder(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(folder, sizeof folder, "%s/lagscope-attach-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  CHECK(mkdtemp(folder) != NULL);
  snprintf(events, sizeof events, "%s/events.jsonl", folder);
  snprintf(junit, sizeof junit, "%s/hangs.xml", folder);
}

/* The case's folder and what its runs left in it (reports, their state files). */
void remove_folder(void) {
  char command[400];
  snprintf(command, sizeof command, "rm -rf '%s'", folder);
  CHECK(system(command) == 0);
}

/* A virtual screen for the case: DISPLAY points at it. */
void with_screen(void) {
  char display[32], why[4096];
  CHECK_MSG(xvfb_start(&xvfb, LAGSCOPE_XVFB_PATH, display, sizeof display, WAIT_MS, why, sizeof why) == 0,
            "%s", why);
  setenv("DISPLAY", display, 1);
  unsetenv("WAYLAND_DISPLAY");
}

void skip_without(const char *path) {
  if (access(path, X_OK) == 0) return;
  printf("SKIP: %s is not installed\n", path);
  exit(SKIP);
}

/* The events file's whole lines, parsed (lines that are not JSON objects fail the test). A last
 * line without its newline is still being appended and is left for the next read: a write of
 * over a page shows to a reader in steps. */
cJSON *read_events(void) {
  cJSON *all = cJSON_CreateArray();
  FILE *in = fopen(events, "r");
  if (in == NULL) return all;
  char *line = NULL;
  size_t size = 0;
  ssize_t length;
  while ((length = getline(&line, &size, in)) > 0 && line[length - 1] == '\n') {
    cJSON *json = cJSON_Parse(line);
    CHECK_MSG(cJSON_IsObject(json), "not a JSON object in %s: %.200s", events, line);
    cJSON_AddItemToArray(all, json);
  }
  free(line);
  fclose(in);
  return all;
}

int count_type(const cJSON *all, const char *type) {
  int n = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, all) n += strcmp(spawn_json_type(e), type) == 0;
  return n;
}

const cJSON *last_of_type(const cJSON *all, const char *type) {
  const cJSON *e, *found = NULL;
  cJSON_ArrayForEach(e, all) if (strcmp(spawn_json_type(e), type) == 0) found = e;
  return found;
}

int metrics_count(void) {
  cJSON *all = read_events();
  int got = count_type(all, "metrics");
  cJSON_Delete(all);
  return got;
}

/* Waits until the events file holds n metrics lines (at most WAIT_MS). */
void await_metrics(int n) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    int got = count_type(all, "metrics");
    cJSON_Delete(all);
    if (got >= n) return;
    CHECK_MSG(spawn_now_ns() < deadline, "only %d of %d metrics lines in %d ms", got, n, WAIT_MS);
    spawn_sleep_ms(50);
  }
}

int run_at_default_corner;

/* lagscope-run's arguments: the viewer on loopback, port 0; the case's events file; the HUD at
 * the top left, where the cases' shots look for it (unless run_at_default_corner; a later
 * --hud-corner in extra wins); extra; "--"; the program's. Returns argv (static). */
char **run_args(char *const extra[], char *const program[]) {
  static char *argv[64];
  int n = 0;
  char *fixed[] = {LAGSCOPE_RUN_PATH, "--port", "0", "--bind", "127.0.0.1", "--events", events};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) argv[n++] = fixed[i];
  if (!run_at_default_corner) argv[n++] = "--hud-corner", argv[n++] = "tl";
  for (int i = 0; extra != NULL && extra[i] != NULL; i++) argv[n++] = extra[i];
  argv[n++] = "--";
  for (int i = 0; program[i] != NULL; i++) argv[n++] = program[i];
  argv[n] = NULL;
  return argv;
}

/* Waits for lagscope-run to end and closes it: its exit code, its stderr in err (printed). */
int wait_run(spawn_proc *p, char *err, size_t size) {
  int code = spawn_wait(p, WAIT_MS);
  spawn_stderr(p, err, size);
  spawn_close(p);
  printf("lagscope-run exited %d; its stderr:\n%s\n", code, err);
  return code;
}

/* Runs lagscope-run to its end; its exit code, its stderr in err. */
int run_to_end(char *const extra[], char *const program[], char *err, size_t size) {
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  int code = wait_run(&p, err, size);
  return code;
}

/* Runs a program that does not end by itself until n metrics lines came, then calls look (if
 * given) while it still runs, then SIGTERM to lagscope-run, which passes it on; returns
 * lagscope-run's exit code. */
int run_for_metrics(char *const extra[], char *const program[], int n, void (*look)(void),
                    char *err, size_t size) {
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  await_metrics(n);
  if (look != NULL) look();
  spawn_signal(&p, SIGTERM);
  int code = wait_run(&p, err, size);
  return code;
}

/* A frame of the stack is function (C), or function with its parameters (C++, demangled). */
int stack_has(const cJSON *stack, const char *function) {
  const cJSON *frame;
  size_t n = strlen(function);
  cJSON_ArrayForEach(frame, stack) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(frame, "function");
    if (cJSON_IsString(f) && strncmp(f->valuestring, function, n) == 0 &&
        (f->valuestring[n] == '\0' || f->valuestring[n] == '('))
      return 1;
  }
  return 0;
}

char *read_file(const char *path) {
  FILE *in = fopen(path, "r");
  CHECK_MSG(in != NULL, "no file %s", path);
  static char text[65536];
  size_t n = fread(text, 1, sizeof text - 1, in);
  text[n] = '\0';
  fclose(in);
  return text;
}

/* The watchdog found nothing wrong with the hooks: no lost ping, no answer off the main
 * thread. */
void check_hooks_right(const cJSON *all) {
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "error") != 0) continue;
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
    CHECK_MSG(!cJSON_IsString(code) || (strcmp(code->valuestring, "ELOST") != 0 &&
                                        strcmp(code->valuestring, "ETHREAD") != 0),
              "the watchdog found a hook wrong: %s", cJSON_PrintUnformatted(e));
  }
}

/* The wall clock in ms, as events' start_wall_ms (CLOCK_REALTIME). */
int64_t wall_ms_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The cause label of hang hang_id's hang_ended, or NULL when it never ended. */
static const char *ended_label(const cJSON *all, double hang_id) {
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "hang_ended") != 0 ||
        spawn_json_number(e, "hang_id", -1) != hang_id)
      continue;
    const cJSON *cause = cJSON_GetObjectItemCaseSensitive(e, "cause");
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(cause, "label");
    return cJSON_IsString(label) ? label->valuestring : "";
  }
  return NULL;
}

/* No hang began from since_wall_ms on, and the hooks were right. One exception: a hang whose
 * every sample went unanswered ("unknown · not sampled"). On a loaded machine the program's
 * main thread can wait for a CPU past the threshold; lagscope then could not sample it and
 * says so, and such a hang is the machine's, not a ping the hooks lost (the main thread
 * would then be sampled idle in its loop). It is printed, not failed. */
void check_no_hang_since(const cJSON *all, int64_t since_wall_ms) {
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "hang_began") != 0) continue;
    const cJSON *start = cJSON_GetObjectItemCaseSensitive(e, "start_wall_ms");
    CHECK_MSG(cJSON_IsNumber(start), "a hang_began without start_wall_ms");
    if (start->valuedouble < (double)since_wall_ms) continue;
    const char *label = ended_label(all, spawn_json_number(e, "hang_id", -1));
    if (label != NULL && strcmp(label, "unknown · not sampled") == 0) {
      printf("a hang lagscope could not sample (the machine's load), not counted: %s\n",
             cJSON_PrintUnformatted(e));
      continue;
    }
    CHECK_MSG(0, "a hang began %.0f ms after the mark (%s): %s",
              since_wall_ms == INT64_MIN ? 0.0 : start->valuedouble - (double)since_wall_ms,
              label != NULL ? label : "never ended", cJSON_PrintUnformatted(e));
  }
  check_hooks_right(all);
}

/* No hang began at all (the mark: the start), and the hooks were right. */
void check_no_hang(const cJSON *all) { check_no_hang_since(all, INT64_MIN); }

/* The frames the last metrics line counted since the start. */
double frames_counted(const cJSON *all) {
  return spawn_json_number(last_of_type(all, "metrics"), "total_frames", -1);
}

/* 1 when frame's module ends in module_tail. */
int in_module(const cJSON *frame, const char *module_tail) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(frame, "module");
  size_t len = cJSON_IsString(m) ? strlen(m->valuestring) : 0, n = strlen(module_tail);
  return len >= n && strcmp(m->valuestring + len - n, module_tail) == 0;
}

int hangs_began(void) {
  cJSON *all = read_events();
  int n = count_type(all, "hang_began");
  cJSON_Delete(all);
  return n;
}

/* Waits (bounded) until a metrics line says the app drew a frame and is not hung. */
void await_drawn_and_answering(void) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    const cJSON *last = last_of_type(all, "metrics");
    int ready = last != NULL && frames_counted(all) >= 1 &&
                !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(last, "hang_in_progress"));
    cJSON_Delete(all);
    if (ready) return;
    CHECK_MSG(spawn_now_ns() < deadline, "no frame drawn with the main thread answering in %d ms", WAIT_MS);
    spawn_sleep_ms(50);
  }
}

/* Runs xdotool with args; it must succeed. */
void xdotool(char *const args[]) {
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_XDOTOOL_PATH, args, SPAWN_CAPTURE_STDERR) == 0);
  int code = spawn_wait(&p, WAIT_MS);
  char err[2048];
  spawn_stderr(&p, err, sizeof err);
  spawn_close(&p);
  CHECK_MSG(code == 0, "xdotool %s failed (%d): %s", args[1], code, err);
}

/* The one child of parent (lagscope-run's program), waiting (bounded) for it; -1 when none. */
pid_t child_of(pid_t parent) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)parent, (int)parent);
  const char *text = read_file(path);
  return atoi(text) > 0 ? (pid_t)atoi(text) : -1;
}

/* What the main thread of process pid is blocked in, from /proc/PID/syscall: its call's number
 * and first two arguments; 0, or -1 while it runs (or the file cannot be read). */
static int main_thread_call(pid_t pid, long *nr, unsigned long *arg0, unsigned long *arg1) {
  char path[64], text[256];
  snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
  FILE *in = fopen(path, "r");
  if (in == NULL) return -1;
  size_t n = fread(text, 1, sizeof text - 1, in);
  fclose(in);
  text[n] = '\0';
  return sscanf(text, "%ld %lx %lx", nr, arg0, arg1) == 3 ? 0 : -1;
}

/* The path pid's descriptor fd is open on ("" when it has none). */
static void fd_target(pid_t pid, unsigned long fd, char *out, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/%d/fd/%lu", (int)pid, fd);
  ssize_t n = readlink(link, out, size - 1);
  out[n > 0 ? n : 0] = '\0';
}

/* The NUL-terminated string at address in pid's memory (we are its ancestor: allowed to read
 * it, as Yama's default rule says); "" when it cannot be read. */
static void string_at(pid_t pid, unsigned long address, char *out, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
  out[0] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = pread(fd, out, size - 1, (off_t)address);
  close(fd);
  out[n > 0 ? n : 0] = '\0';
}

/* Waits (bounded) until pid's main thread is blocked in read() on a descriptor open on path
 * (want_read), or in openat() of path; the moment it was seen so, in spawn_now_ns's ns. */
uint64_t await_blocked_on(pid_t pid, int want_read, const char *path) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  char target[512] = "";
  long nr = -1;
  for (;;) {
    unsigned long arg0 = 0, arg1 = 0;
    if (main_thread_call(pid, &nr, &arg0, &arg1) == 0) {
      if (want_read && nr == SYS_read) fd_target(pid, arg0, target, sizeof target);
      else if (!want_read && nr == SYS_openat) string_at(pid, arg1, target, sizeof target);
      else target[0] = '\0';
      if (target[0] != '\0' && strcmp(target, path) == 0) return spawn_now_ns();
    }
    if (spawn_now_ns() >= deadline) save_screen("l3afpad-not-blocked.png");
    CHECK_MSG(spawn_now_ns() < deadline, "the program never blocked in %s() on %s in %d ms (last: call %ld on '%s')",
              want_read ? "read" : "openat", path, WAIT_MS, nr, target);
    spawn_sleep_ms(2);
  }
}

/* Sleeps until at_ns (spawn_now_ns's clock). */
void sleep_until(uint64_t at_ns) {
  uint64_t now = spawn_now_ns();
  if (at_ns > now) spawn_sleep_ms((int)((at_ns - now + 999999u) / 1000000u));
}

/* The hang_ended of the hang that covered at_ns (spawn_now_ns's clock, CLOCK_MONOTONIC as
 * the events' start_ns), or NULL. */
const cJSON *hang_covering(const cJSON *all, uint64_t at_ns) {
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "hang_ended") != 0) continue;
    double start = spawn_json_number(e, "start_ns", -1), length = spawn_json_number(e, "duration_ns", -1);
    if (start >= 0 && length >= 0 && start <= (double)at_ns && (double)at_ns <= start + length) return e;
  }
  return NULL;
}

/* Waits (bounded) until the hang that covered at_ns has ended; its hang_id. The program's other
 * hangs, if any (its first frame, or its dialog built on a loaded machine), are its own. */
int await_hang_over(uint64_t at_ns) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    const cJSON *ended = hang_covering(all, at_ns);
    int id = ended != NULL ? (int)spawn_json_number(ended, "hang_id", -1) : -1;
    cJSON_Delete(all);
    if (id > 0) return id;
    CHECK_MSG(spawn_now_ns() < deadline, "no hang ended over the block in %d ms", WAIT_MS);
    spawn_sleep_ms(20);
  }
}

/* The hang_ended of hang id, or NULL. */
const cJSON *hang_ended_of(const cJSON *all, int id) {
  const cJSON *e;
  cJSON_ArrayForEach(e, all)
    if (strcmp(spawn_json_type(e), "hang_ended") == 0 && (int)spawn_json_number(e, "hang_id", -1) == id)
      return e;
  return NULL;
}

/* A GTK program's settings, recent files and caches in the case's folder (no dconf: no D-Bus
 * session here), not the user's: l3afpad's and mousepad's. */
void gtk_settings_in_folder(void) {
  setenv("XDG_CONFIG_HOME", folder, 1);
  setenv("XDG_DATA_HOME", folder, 1);
  setenv("XDG_CACHE_HOME", folder, 1);
  setenv("GSETTINGS_BACKEND", "memory", 1);
}

/* Once a metrics line says the program drew with its watched thread answering (a software
 * Vulkan's first frames can take seconds on a loaded machine), and one more, shot_area of the
 * window titled shot_title. */
void take_drawn_shot(void) {
  await_drawn_and_answering();
  await_metrics(metrics_count() + 1);
  take_area_shot();
}

/* The HUD at its default place in a shot 180 x 80 of the top-left corner. */
static const box default_hud = {8, 8, 8 + HUD_W, 8 + HUD_H};

void check_hud_and_none_without(const hud_case *c) {
  char err[16384], path[128];
  int code = run_for_metrics(NULL, c->program, c->metrics, c->look, err, sizeof err);
  printf("lagscope-run said:\n%s\n", err);
  /* The program ends at lagscope-run's SIGTERM: on it (128 + 15), or by itself when it quits. */
  CHECK_MSG(code == 0 || code == 128 + SIGTERM, "lagscope-run's exit %d", code);
  if (c->check_run != NULL) c->check_run(err);
  snprintf(path, sizeof path, "%s_hud.png", c->name);
  save_artifact(&area_shot, path);
  c->check(&area_shot, default_hud);
  shot_free(&area_shot);

  /* --no-hud: the corner is the program's own, and the reference is not there. */
  char *extra[] = {"--no-hud", NULL};
  unlink(events); /* this run's events only */
  code = run_for_metrics(extra, c->program, c->metrics, c->look, err, sizeof err);
  CHECK_MSG(code == 0 || code == 128 + SIGTERM, "lagscope-run's exit %d with --no-hud", code);
  snprintf(path, sizeof path, "%s_no_hud.png", c->name);
  save_artifact(&area_shot, path);
  double match = reference_match(&area_shot, default_hud, 16);
  printf("without the HUD: %.1f %% alike\n", match * 100);
  CHECK_MSG(match < HUD_MATCH, "a HUD with --no-hud: %.1f %% alike", match * 100);
  shot_free(&area_shot);
}
