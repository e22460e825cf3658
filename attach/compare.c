/* Two runs compared by hang signature: reading events files and report folders (hostile ones
 * too: a bad line or file is skipped and counted, a huge one refused, a link not followed),
 * grouping, judging against the tolerances and the budget, and the three ways of telling it.
 * compare.h says what each does. */
#define _GNU_SOURCE
#include "compare.h"
#include "run_summary.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_MAX (64u << 20) /* an events file or report larger than this is refused */
#define LINE_MAX_BYTES (16u << 20) /* as the store's bound on one report */

/* ---- reading ------------------------------------------------------------------------------------ */

static int is_signature(const char *s) {
  if (s == NULL || strlen(s) != 16) return 0;
  return strspn(s, "0123456789abcdef") == 16;
}

/* The signature's 16 hex digits as a number, mixed (splitmix64's finaliser): the index's hash. */
static uint64_t signature_hash(const char *signature) {
  uint64_t x = strtoull(signature, NULL, 16);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

/* The slot of signature in the index (open addressing, a power of two): where its group's
 * number + 1 is, or the empty slot (0) where it goes. */
static size_t index_slot(const lagscope__compare *c, const char *signature) {
  size_t mask = c->index_size - 1;
  for (size_t at = (size_t)signature_hash(signature) & mask;; at = (at + 1) & mask) {
    size_t g = c->index[at];
    if (g == 0 || strcmp(c->groups[g - 1].signature, signature) == 0) return at;
  }
}

/* The index made anew, size slots, for every group (after growth, or a sort that moved them).
 * 0, or -1 without memory. Allocates. */
static int reindex(lagscope__compare *c, size_t size) {
  size_t *index = calloc(size, sizeof(*index));
  if (index == NULL) return -1;
  free(c->index);
  c->index = index, c->index_size = size;
  for (size_t i = 0; i < c->count; i++) c->index[index_slot(c, c->groups[i].signature)] = i + 1;
  return 0;
}

/* The signature's group, added if new: through the index, so that reading n signatures takes
 * time in n (a search of the list took 66 s for 200 000). NULL without memory. Allocates. */
static lagscope__compare_group *group_for(lagscope__compare *c, const char *signature) {
  signature = lagscope__compare_merged(c, signature); /* a merge rule's signatures are one */
  if ((c->index == NULL || (c->count + 1) * 2 > c->index_size) &&
      reindex(c, c->index_size >= 64 ? c->index_size * 2 : 64) != 0)
    return NULL;
  size_t at = index_slot(c, signature);
  if (c->index[at] != 0) return &c->groups[c->index[at] - 1];
  if (c->count == c->capacity) {
    size_t capacity = c->capacity > 0 ? c->capacity * 2 : 16;
    lagscope__compare_group *more = realloc(c->groups, capacity * sizeof(*more));
    if (more == NULL) return NULL;
    c->groups = more, c->capacity = capacity;
  }
  lagscope__compare_group *g = &c->groups[c->count++];
  memset(g, 0, sizeof(*g));
  memcpy(g->signature, signature, 17);
  c->index[at] = c->count;
  return g;
}

/* The cause's label as one line for the table, JUnit and Markdown: cut at a character's
 * boundary, control characters (a terminal's escapes) as spaces. Each output escapes the
 * rest its own way. */
static void set_what(lagscope__compare_group *g, const char *what) {
  size_t used = 0;
  for (const unsigned char *p = (const unsigned char *)what; *p != '\0';) {
    uint32_t cp = 0;
    size_t n = lagscope__utf8_next(p, &cp);
    if (n == 0) n = 1; /* not UTF-8: kept as it is, each output replaces it */
    if (used + n >= sizeof(g->what)) break;
    for (size_t i = 0; i < n; i++, p++)
      g->what[used++] = *p < 0x20 || *p == 0x7f ? ' ' : (char)*p;
  }
  g->what[used] = '\0';
}

static const char *string_of(const cJSON *o, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, name);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* A run's id as the table shows it: printable ASCII only, cut to fit. */
static void set_run_id(char out[64], const char *id) {
  size_t n = 0;
  for (; id[n] != '\0' && n < 63; n++) out[n] = id[n] > 0x20 && id[n] < 0x7f ? id[n] : '?';
  out[n] = '\0';
}

/* A hang (an event or a report: both carry these members). 0 when added or not a hang, 1 when
 * skipped as bad, -1 without memory. */
static int add_hang(lagscope__compare *c, int side, const cJSON *o) {
  if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "counted"))) return 0; /* idle */
  const cJSON *duration = cJSON_GetObjectItemCaseSensitive(o, "duration_ms");
  const char *signature = string_of(o, "signature");
  if (!cJSON_IsNumber(duration) || !(duration->valuedouble >= 0) || duration->valuedouble > 1e9)
    return 1;
  if (signature == NULL) {
    c->unsigned_hangs[side]++;
    c->hangs[side]++;
    return 0;
  }
  if (!is_signature(signature)) return 1;
  c->hangs[side]++;
  lagscope__compare_group *g = group_for(c, signature);
  if (g == NULL) return -1;
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(o, "cause");
  const char *what = string_of(cause, "label");
  if (what == NULL) what = string_of(cause, "kind");
  if (g->what[0] == '\0' && what != NULL) set_what(g, what);
  g->count[side]++;
  g->total_ms[side] += duration->valuedouble;
  if (duration->valuedouble > g->max_ms[side]) g->max_ms[side] = duration->valuedouble;
  const char *state = string_of(o, "state");
  if (state != NULL && strcmp(state, "in_progress") == 0) g->open[side]++; /* never ended */
  return 0;
}

int lagscope__compare_add_open(lagscope__compare *c, int side, const char *signature,
                               const char *what, double duration_ms) {
  if (!is_signature(signature)) {
    c->unsigned_hangs[side]++;
    return 0;
  }
  lagscope__compare_group *g = group_for(c, signature);
  if (g == NULL) return -1;
  if (g->what[0] == '\0' && what != NULL) set_what(g, what);
  if (!(duration_ms >= 0 && duration_ms <= 1e9)) duration_ms = 0;
  g->count[side]++;
  g->open[side]++;
  g->total_ms[side] += duration_ms;
  if (duration_ms > g->max_ms[side]) g->max_ms[side] = duration_ms;
  return 0;
}

/* A run_started line (lagscope-run's preload: the run's first line): its id kept. */
static void add_run(lagscope__compare *c, int side, const cJSON *o) {
  const char *id = string_of(o, "run_id");
  if (c->runs[side]++ == 0 && id != NULL) set_run_id(c->run_id[side], id);
}

/* One line of an events file: hang_ended events count; other events are no hang. */
/* The hangs of an events file's current run that began and have not ended, and where that
 * run's reports are (its run_started line): at the run's end (the next run_started, or the
 * file's end) each is looked for in its report, as lagscope-run does for a hang not ended. */
#define OPEN_LOOKUPS_MAX 256 /* reports looked for per side: a run has at most one open hang */
typedef struct open_hangs {
  long pid;
  char *report_dir;
  uint64_t ids[16];
  size_t count, looked_up;
} open_hangs;

/* Each open hang by its report: under its signature, not ended; else counted apart. 0, or -1
 * without memory. */
static int flush_open(lagscope__compare *c, int side, open_hangs *run) {
  int rc = 0;
  for (size_t i = 0; i < run->count && rc == 0; i++) {
    lagscope__run_hang h = {.id = run->ids[i]};
    if (run->report_dir != NULL && run->looked_up++ < OPEN_LOOKUPS_MAX &&
        lagscope__run_find_report(&h, run->report_dir, run->pid) != 0)
      rc = -1;
    else if (h.recovered && h.signature[0] != '\0')
      rc = lagscope__compare_add_open(c, side, h.signature, h.label[0] ? h.label : h.cause,
                                      h.report_ms);
    else
      c->open_unknown[side]++, c->hangs[side]++;
    lagscope__run_hang_clear(&h);
  }
  run->count = 0;
  return rc;
}

/* hang_began, hang_ended and run_started as they open and close hangs. 0, or -1 without
 * memory. */
static int track_open(lagscope__compare *c, int side, open_hangs *run, const char *type,
                      const cJSON *o) {
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "hang_id");
  uint64_t hang = cJSON_IsNumber(id) && id->valuedouble >= 1 && id->valuedouble < 1e15
                      ? (uint64_t)id->valuedouble : 0;
  if (strcmp(type, "run_started") == 0) {
    if (flush_open(c, side, run) != 0) return -1;
    const char *dir = string_of(o, "report_dir");
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(o, "pid");
    free(run->report_dir);
    run->report_dir = dir != NULL ? strdup(dir) : NULL;
    run->pid = cJSON_IsNumber(pid) && pid->valuedouble >= 1 && pid->valuedouble < 1e9
                   ? (long)pid->valuedouble : 0;
    if (dir != NULL && run->report_dir == NULL) return -1;
  } else if (strcmp(type, "hang_began") == 0 && hang != 0) {
    if (run->count == sizeof(run->ids) / sizeof(run->ids[0])) { /* not one run's: the oldest */
      memmove(run->ids, run->ids + 1, --run->count * sizeof(run->ids[0]));
      c->open_unknown[side]++, c->hangs[side]++;
    }
    run->ids[run->count++] = hang;
  } else if (strcmp(type, "hang_ended") == 0 && hang != 0) {
    for (size_t i = 0; i < run->count; i++)
      if (run->ids[i] == hang) {
        memmove(run->ids + i, run->ids + i + 1, (run->count - i - 1) * sizeof(run->ids[0]));
        run->count--;
        break;
      }
  }
  return 0;
}

static int add_line(lagscope__compare *c, int side, open_hangs *run, const char *line) {
  cJSON *o = cJSON_Parse(line);
  const char *type = string_of(o, "type");
  int rc = type == NULL ? 1 : strcmp(type, "hang_ended") == 0 ? add_hang(c, side, o) : 0;
  if (type != NULL && strcmp(type, "run_started") == 0) add_run(c, side, o);
  if (type != NULL && rc >= 0 && track_open(c, side, run, type, o) != 0) rc = -1;
  if (type != NULL && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "seq")))
    c->events[side]++; /* an event of lagscope's: a run, even one without run_started */
  cJSON_Delete(o);
  return rc;
}

/* A report file as the store writes it, in any state: one still in_progress is a hang whose
 * program was killed before a next launch recovered it, as long as it was seen. */
static int add_report(lagscope__compare *c, int side, const char *text) {
  cJSON *o = cJSON_Parse(text);
  const char *state = string_of(o, "state");
  int known = state != NULL && (strcmp(state, "ended") == 0 || strcmp(state, "in_progress") == 0 ||
                                strcmp(state, "ended_by_termination") == 0);
  int rc = known ? add_hang(c, side, o) : 1;
  c->reports[side] += (size_t)known;
  cJSON_Delete(o);
  return rc;
}

/* The whole regular file fd as a NUL-terminated text, or NULL (why set). */
static char *read_all(int fd, const char *path, char *why, size_t why_size) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)FILE_MAX) {
    snprintf(why, why_size, "%s: not a regular file of at most %u MiB", path, FILE_MAX >> 20);
    return NULL;
  }
  char *text = malloc((size_t)st.st_size + 1);
  size_t len = 0;
  while (text != NULL && len < (size_t)st.st_size) {
    ssize_t n = read(fd, text + len, (size_t)st.st_size - len);
    if (n <= 0) break; /* shorter than it was: what is there */
    len += (size_t)n;
  }
  if (text == NULL) snprintf(why, why_size, "%s: no memory", path);
  else text[len] = '\0';
  return text;
}

static int read_events(lagscope__compare *c, int side, int fd, const char *path, char *why,
                       size_t why_size) {
  char *text = read_all(fd, path, why, why_size);
  if (text == NULL) return -1;
  open_hangs run = {0};
  int rc = 0;
  for (char *line = text, *next; rc >= 0 && line != NULL && *line != '\0'; line = next) {
    next = strchr(line, '\n');
    if (next != NULL) *next++ = '\0';
    if (line[0] == '\0') continue;
    rc = strlen(line) > LINE_MAX_BYTES ? 1 : add_line(c, side, &run, line);
    if (rc > 0) c->skipped[side] += (size_t)rc;
  }
  if (rc >= 0) rc = flush_open(c, side, &run);
  free(run.report_dir);
  free(text);
  if (rc < 0) snprintf(why, why_size, "%s: no memory", path);
  return rc < 0 ? -1 : 0;
}

static int has_suffix(const char *name, const char *suffix) {
  size_t n = strlen(name), s = strlen(suffix);
  return n > s && strcmp(name + n - s, suffix) == 0;
}

/* Every "*.json" of the folder but dot files (the store's temporaries), opened without
 * following a link. */
static int read_folder(lagscope__compare *c, int side, int dirfd, const char *path, char *why,
                       size_t why_size) {
  DIR *dir = fdopendir(dirfd);
  if (dir == NULL) {
    snprintf(why, why_size, "%s: %s", path, strerror(errno));
    close(dirfd);
    return -1;
  }
  int rc = 0;
  for (struct dirent *e; rc == 0 && (e = readdir(dir)) != NULL;) {
    if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".json")) continue;
    int fd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    char ignored[256];
    char *text = fd >= 0 ? read_all(fd, e->d_name, ignored, sizeof(ignored)) : NULL;
    if (fd >= 0) close(fd);
    int added = text != NULL ? add_report(c, side, text) : 1;
    free(text);
    if (added < 0) {
      snprintf(why, why_size, "%s: no memory", path);
      rc = -1;
    } else {
      c->skipped[side] += (size_t)added;
    }
  }
  closedir(dir);
  return rc;
}

int lagscope__compare_read(lagscope__compare *c, int side, const char *path, char *why,
                           size_t why_size) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(why, why_size, "%s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  int folder = S_ISDIR(st.st_mode);
  int rc = folder ? read_folder(c, side, fd, path, why, why_size)
                  : read_events(c, side, fd, path, why, why_size);
  if (!folder) close(fd);
  if (rc == 0 && c->runs[side] == 0 && c->events[side] == 0 && c->reports[side] == 0 &&
      c->hangs[side] == 0) {
    snprintf(why, why_size, "%s holds no run of lagscope's: %s", path,
             folder ? "no hang report in it (a clean run leaves none: compare its --events file)"
                    : "no run_started line, no event, no hang (an empty file, or not lagscope's "
                      "events: one JSON event a line)");
    return LAGSCOPE_COMPARE_NO_RUN;
  }
  return rc;
}

void lagscope__compare_free(lagscope__compare *c) {
  lagscope__compare_free_rules(c);
  free(c->groups);
  free(c->index);
  memset(c, 0, sizeof(*c));
}

/* ---- judging ------------------------------------------------------------------------------------ */

const char *lagscope__compare_status_name(lagscope__compare_status s) {
  static const char *const names[] = {"unchanged", "new", "regressed", "fixed"};
  return (unsigned)s < 4 ? names[s] : "unchanged";
}

/* Grown past both tolerances: a few ms more in a long total, or a large share of a tiny one,
 * is noise. */
static int grew(const lagscope__compare_group *g, const lagscope__compare_options *o) {
  double more = g->total_ms[1] - g->total_ms[0];
  return more > o->tolerance_ms && more > g->total_ms[0] * o->tolerance_pct / 100.0;
}

/* Failing and changed first, then by this run's total time, longest first. */
static int by_weight(const void *a, const void *b) {
  const lagscope__compare_group *x = a, *y = b;
  if (x->failing != y->failing) return y->failing - x->failing;
  int xc = x->status != LAGSCOPE__COMPARE_UNCHANGED, yc = y->status != LAGSCOPE__COMPARE_UNCHANGED;
  if (xc != yc) return yc - xc;
  double xt = x->total_ms[1] + x->total_ms[0], yt = y->total_ms[1] + y->total_ms[0];
  return xt < yt ? 1 : xt > yt ? -1 : strcmp(x->signature, y->signature);
}

size_t lagscope__compare_judge(lagscope__compare *c, const lagscope__compare_options *o) {
  size_t failing = 0;
  for (size_t i = 0; i < c->count; i++) {
    lagscope__compare_group *g = &c->groups[i];
    g->status = g->count[0] == 0   ? LAGSCOPE__COMPARE_NEW
                : g->count[1] == 0 ? LAGSCOPE__COMPARE_FIXED
                : grew(g, o)       ? LAGSCOPE__COMPARE_REGRESSED
                                   : LAGSCOPE__COMPARE_UNCHANGED;
    int worse = g->status == LAGSCOPE__COMPARE_NEW || g->status == LAGSCOPE__COMPARE_REGRESSED;
    /* A hang not ended lasted at least its time: over any budget. */
    g->accepted = lagscope__compare_accepted(c, g->signature);
    g->failing = worse && !g->accepted &&
                 (o->budget_ms == 0 || g->max_ms[1] > o->budget_ms || g->open[1] > 0);
    failing += (size_t)g->failing;
  }
  if (c->count > 1) qsort(c->groups, c->count, sizeof(c->groups[0]), by_weight);
  free(c->index); /* the groups moved: made anew if more are read */
  c->index = NULL, c->index_size = 0;
  return failing;
}

/* ---- telling ------------------------------------------------------------------------------------ */

static size_t with_status(const lagscope__compare *c, lagscope__compare_status s) {
  size_t n = 0;
  for (size_t i = 0; i < c->count; i++) n += c->groups[i].status == s;
  return n;
}

static void counts_line(FILE *out, const lagscope__compare *c, const lagscope__compare_options *o) {
  fprintf(out, "%zu signature%s: %zu new, %zu regressed, %zu fixed, %zu unchanged (tolerance %g ms "
          "and %g %%, budget %s", c->count, c->count == 1 ? "" : "s",
          with_status(c, LAGSCOPE__COMPARE_NEW), with_status(c, LAGSCOPE__COMPARE_REGRESSED),
          with_status(c, LAGSCOPE__COMPARE_FIXED), with_status(c, LAGSCOPE__COMPARE_UNCHANGED),
          o->tolerance_ms, o->tolerance_pct, o->budget_ms > 0 ? "" : "none: every new or regressed one fails");
  if (o->budget_ms > 0) fprintf(out, "%u ms", o->budget_ms);
  fprintf(out, ")\n");
}

void lagscope__compare_table(FILE *out, const lagscope__compare *c,
                             const lagscope__compare_options *o) {
  fprintf(out, "lagscope-compare: ");
  counts_line(out, c, o);
  if (c->count > 0)
    fprintf(out, "  %-15s %-16s %17s %17s  %s\n", "status", "signature", "baseline", "this run",
            "what");
  for (size_t i = 0; i < c->count; i++) {
    const lagscope__compare_group *g = &c->groups[i];
    char status[24], base[32], now[32];
    snprintf(status, sizeof(status), "%s%s", lagscope__compare_status_name(g->status),
             g->failing ? " FAIL" : g->accepted ? " accepted" : "");
    snprintf(base, sizeof(base), "%u x %.0f ms", g->count[0], g->total_ms[0]);
    snprintf(now, sizeof(now), "%u x %.0f ms", g->count[1], g->total_ms[1]);
    fprintf(out, "  %-15s %-16s %17s %17s  %s", status, g->signature, base, now,
            g->what[0] != '\0' ? g->what : "?");
    if (g->open[1] > 0) fprintf(out, " (%u not ended: over any budget)", g->open[1]);
    fputc('\n', out);
  }
  if (c->run_id[0][0] != '\0' || c->run_id[1][0] != '\0')
    fprintf(out, "  (baseline: run %s; this run: run %s)\n",
            c->run_id[0][0] ? c->run_id[0] : "?", c->run_id[1][0] ? c->run_id[1] : "?");
  for (int side = 0; side < 2; side++) {
    if (c->skipped[side] > 0)
      fprintf(out, "  (%s: %zu lines or files were not lagscope's hangs: skipped)\n",
              side == 0 ? "baseline" : "this run", c->skipped[side]);
    if (c->open_unknown[side] > 0)
      fprintf(out, "  (%s: %zu hangs not ended whose report was not found: not compared)\n",
              side == 0 ? "baseline" : "this run", c->open_unknown[side]);
    if (c->unsigned_hangs[side] > 0)
      fprintf(out, "  (%s: %zu hangs without a signature, from an older lagscope: not compared)\n",
              side == 0 ? "baseline" : "this run", c->unsigned_hangs[side]);
  }
}

static void failure_message(FILE *out, const lagscope__compare_group *g,
                            const lagscope__compare_options *o) {
  fprintf(out, "%s: %u hang%s, %.0f ms in all (baseline: %u, %.0f ms), the longest %.0f ms",
          lagscope__compare_status_name(g->status), g->count[1], g->count[1] == 1 ? "" : "s",
          g->total_ms[1], g->count[0], g->total_ms[0], g->max_ms[1]);
  if (g->open[1] > 0)
    fprintf(out, "; %u not ended (the program ended during it: over any budget)", g->open[1]);
  if (o->budget_ms > 0) fprintf(out, " (budget %u ms)", o->budget_ms);
}

int lagscope__compare_junit(const char *path, const lagscope__compare *c,
                            const lagscope__compare_options *o, char *why, size_t why_size) {
  FILE *out = lagscope__output_open(path, why, why_size);
  if (out == NULL) return -1;
  size_t failures = 0;
  for (size_t i = 0; i < c->count; i++) failures += (size_t)c->groups[i].failing;
  fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
          "  <testsuite name=\"lagscope-compare\" tests=\"%zu\" failures=\"%zu\">\n",
          c->count, failures);
  for (size_t i = 0; i < c->count; i++) {
    const lagscope__compare_group *g = &c->groups[i];
    fprintf(out, "    <testcase classname=\"lagscope.signatures\" name=\"%s ", g->signature);
    lagscope__run_put_xml(out, g->what);
    fprintf(out, "\" time=\"%.3f\">\n", g->total_ms[1] / 1000.0);

    if (g->failing) {
      fprintf(out, "      <failure message=\"");
      failure_message(out, g, o);
      fprintf(out, "\"/>\n");
    }
    /* After the failure: the lines of before keep their order (a script may read the line
     * before <failure> as its testcase's). */
    fprintf(out, "      <properties>\n        <property name=\"signature\" value=\"%s\"/>\n"
            "        <property name=\"status\" value=\"%s\"/>\n"
            "        <property name=\"not_ended\" value=\"%u\"/>\n      </properties>\n",
            g->signature, lagscope__compare_status_name(g->status), g->open[1]);
    fprintf(out, "      <system-out>%s: baseline %u × %.0f ms, this run %u × %.0f ms</system-out>\n",
            lagscope__compare_status_name(g->status), g->count[0], g->total_ms[0], g->count[1],
            g->total_ms[1]);
    fprintf(out, "    </testcase>\n");
  }
  fprintf(out, "  </testsuite>\n</testsuites>\n");
  return lagscope__output_close(out, why, why_size);
}

/* A table cell of GitHub's Markdown, as plain text whatever the label holds: every ASCII
 * punctuation character backslash-escaped (CommonMark's rule: then none is markup; "\\|" is
 * also the table's escaped pipe), '<', '>' and '&' as entities (no HTML, no entity of the
 * label's), a line end or control character as a space, what is not UTF-8 as U+FFFD. */
static void put_cell(FILE *out, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p != '\0';) {
    uint32_t cp = 0;
    size_t n = lagscope__utf8_next(p, &cp);
    if (n == 0) {
      fputs("\xef\xbf\xbd", out);
      p++;
      continue;
    }
    if (cp == '<') fputs("&lt;", out);
    else if (cp == '>') fputs("&gt;", out);
    else if (cp == '&') fputs("&amp;", out);
    else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) fputc(' ', out);
    else if (cp < 0x80 && strchr("!\"#$%'()*+,-./:;=?@[\\]^_`{|}~", (int)cp) != NULL)
      fprintf(out, "\\%c", (int)cp);
    else fwrite(p, 1, n, out);
    p += n;
  }
}

int lagscope__compare_markdown(const char *path, const lagscope__compare *c,
                               const lagscope__compare_options *o, char *why, size_t why_size) {
  FILE *out = lagscope__output_open(path, why, why_size);
  if (out == NULL) return -1;
  fprintf(out, "### lagscope: hangs by signature\n\n");
  counts_line(out, c, o);
  if (c->count > 0)
    fprintf(out, "\n| status | signature | what | baseline | this run | change |\n"
                 "|---|---|---|---:|---:|---:|\n");
  for (size_t i = 0; i < c->count; i++) {
    const lagscope__compare_group *g = &c->groups[i];
    fprintf(out, "| %s%s%s | `%s` | ", g->failing ? "**" : "",
            lagscope__compare_status_name(g->status), g->failing ? " (fails)**" : "", g->signature);
    put_cell(out, g->what[0] != '\0' ? g->what : "?");
    fprintf(out, " | %u × %.0f ms | %u × %.0f ms | %+.0f ms |\n", g->count[0], g->total_ms[0],
            g->count[1], g->total_ms[1], g->total_ms[1] - g->total_ms[0]);
  }
  return lagscope__output_close(out, why, why_size);
}

static void put_side(FILE *out, const lagscope__compare_group *g, int side) {
  fprintf(out, "{\"count\":%u,\"total_ms\":%.3f,\"max_ms\":%.3f,\"not_ended\":%u}", g->count[side],
          g->total_ms[side], g->max_ms[side], g->open[side]);
}

void lagscope__compare_json_object(FILE *out, const lagscope__compare *c,
                                   const lagscope__compare_options *o) {
  size_t failing = 0;
  for (size_t i = 0; i < c->count; i++) failing += (size_t)c->groups[i].failing;
  fprintf(out, "{\"tolerance_ms\":%g,\"tolerance_pct\":%g,\"budget_ms\":%u,\"runs\":{\"baseline\":",
          o->tolerance_ms, o->tolerance_pct, o->budget_ms);
  lagscope__put_json_string(out, c->run_id[0]);
  fputs(",\"this_run\":", out);
  lagscope__put_json_string(out, c->run_id[1]);
  fprintf(out, "},\"failing\":%zu,\"new\":%zu,\"regressed\":%zu,\"fixed\":%zu,\"unchanged\":%zu,"
          "\"skipped\":[%zu,%zu],\"unsigned_hangs\":[%zu,%zu],\"signatures\":[",
          failing, with_status(c, LAGSCOPE__COMPARE_NEW), with_status(c, LAGSCOPE__COMPARE_REGRESSED),
          with_status(c, LAGSCOPE__COMPARE_FIXED), with_status(c, LAGSCOPE__COMPARE_UNCHANGED),
          c->skipped[0], c->skipped[1], c->unsigned_hangs[0], c->unsigned_hangs[1]);
  for (size_t i = 0; i < c->count; i++) {
    const lagscope__compare_group *g = &c->groups[i];
    fprintf(out, "%s{\"signature\":\"%s\",\"status\":\"%s\",\"failing\":%s,\"accepted\":%s,\"what\":",
            i ? "," : "", g->signature, lagscope__compare_status_name(g->status),
            g->failing ? "true" : "false", g->accepted ? "true" : "false");
    lagscope__put_json_string(out, g->what);
    fputs(",\"baseline\":", out);
    put_side(out, g, 0);
    fputs(",\"this_run\":", out);
    put_side(out, g, 1);
    fputc('}', out);
  }
  fputs("]}", out);
}

int lagscope__compare_json(const char *path, const lagscope__compare *c,
                           const lagscope__compare_options *o, char *why, size_t why_size) {
  FILE *out = lagscope__output_open(path, why, why_size);
  if (out == NULL) return -1;
  fputs("{\"tool\":\"lagscope-compare\",\"comparison\":", out);
  lagscope__compare_json_object(out, c, o);
  fputs("}\n", out);
  return lagscope__output_close(out, why, why_size);
}
