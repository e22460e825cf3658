/* The usage reader's portable half: /proc text parsers (fed odd input by the tests) and the
 * math that turns two usage readings into CPU percentages and the busiest threads. */
#include "internal.h"

#include <string.h>

/* ---- parsers: bounded, never read past len, NUL or not ---- */

static int parse_u64(const char **p, const char *end, uint64_t *value) {
  const char *s = *p;
  while (s < end && *s == ' ') s++;
  if (s >= end || *s < '0' || *s > '9') return LAGSCOPE_EPARSE;
  uint64_t v = 0;
  for (; s < end && *s >= '0' && *s <= '9'; s++) {
    uint64_t digit = (uint64_t)(*s - '0');
    if (v > (UINT64_MAX - digit) / 10) return LAGSCOPE_EPARSE;
    v = v * 10 + digit;
  }
  *value = v;
  *p = s;
  return LAGSCOPE_OK;
}

static const char *skip_field(const char *s, const char *end) {
  while (s < end && *s == ' ') s++;
  while (s < end && *s != ' ') s++;
  return s;
}

int lagscope__parse_first_u64(const char *text, size_t len, uint64_t *value) {
  return parse_u64(&text, text + len, value);
}

int lagscope__parse_u64s(const char *text, size_t len, uint64_t *values, int count) {
  const char *end = text + len;
  for (int i = 0; i < count; i++)
    if (parse_u64(&text, end, &values[i]) != LAGSCOPE_OK) return LAGSCOPE_EPARSE;
  return LAGSCOPE_OK;
}

/* "pid (comm) state ppid ... utime stime ...": comm may hold spaces and parentheses, so it
 * ends at the last ')'. utime and stime are fields 14 and 15. */
int lagscope__parse_stat(const char *text, size_t len, char *name, size_t name_size,
                         char *state, uint64_t *utime_ticks, uint64_t *stime_ticks) {
  const char *end = text + len;
  const char *open = memchr(text, '(', len);
  if (open == NULL) return LAGSCOPE_EPARSE;
  const char *close = NULL;
  for (const char *s = end; s > open; s--)
    if (s[-1] == ')') {
      close = s - 1;
      break;
    }
  if (close == NULL) return LAGSCOPE_EPARSE;
  size_t name_len = (size_t)(close - open - 1);
  if (name_size > 0) {
    if (name_len >= name_size) name_len = name_size - 1;
    memcpy(name, open + 1, name_len);
    name[name_len] = '\0';
  }
  const char *s = close + 1;
  while (s < end && *s == ' ') s++;
  if (s >= end) return LAGSCOPE_EPARSE;
  *state = *s; /* field 3 */
  for (int field = 3; field < 14; field++) {
    s = skip_field(s, end);
    if (s >= end) return LAGSCOPE_EPARSE;
  }
  if (parse_u64(&s, end, utime_ticks) != 0) return LAGSCOPE_EPARSE;
  if (parse_u64(&s, end, stime_ticks) != 0) return LAGSCOPE_EPARSE;
  return LAGSCOPE_OK;
}

/* Finds "Field:   123 kB" at the start of a line. */
int lagscope__parse_kb_field(const char *text, size_t len, const char *field, uint64_t *bytes) {
  size_t field_len = strlen(field);
  const char *end = text + len;
  for (const char *line = text; line < end;) {
    const char *next = memchr(line, '\n', (size_t)(end - line));
    const char *line_end = next != NULL ? next : end;
    if ((size_t)(line_end - line) > field_len && memcmp(line, field, field_len) == 0) {
      const char *s = line + field_len;
      while (s < line_end && (*s == ' ' || *s == '\t')) s++;
      uint64_t kb;
      if (parse_u64(&s, line_end, &kb) != 0) return LAGSCOPE_EPARSE;
      while (s < line_end && *s == ' ') s++;
      if (line_end - s < 2 || memcmp(s, "kB", 2) != 0) return LAGSCOPE_EPARSE;
      if (kb > UINT64_MAX / 1024) return LAGSCOPE_EPARSE;
      *bytes = kb * 1024;
      return LAGSCOPE_OK;
    }
    line = next != NULL ? next + 1 : end;
  }
  return LAGSCOPE_EPARSE;
}

/* ---- math ---- */

static double percent(uint64_t cpu_ns, uint64_t wall_ns) {
  return wall_ns == 0 ? 0.0 : 100.0 * (double)cpu_ns / (double)wall_ns;
}

static const lagscope__thread_usage *find_thread(const lagscope__usage *s,
                                                  int32_t tid) {
  for (uint32_t i = 0; i < s->threads_len; i++)
    if (s->threads[i].tid == tid) return &s->threads[i];
  return NULL;
}

static int is_own(int32_t tid, const int32_t *own_tids, size_t own_len) {
  for (size_t i = 0; i < own_len; i++)
    if (own_tids[i] == tid) return 1;
  return 0;
}

/* Keeps out->busiest sorted by CPU, highest first, at most LAGSCOPE_BUSIEST_THREADS. */
static void rank_thread(lagscope_metrics *out, const lagscope__thread_usage *t, double cpu) {
  uint32_t n = out->busiest_count;
  if (n == LAGSCOPE_BUSIEST_THREADS && cpu <= out->busiest[n - 1].cpu_percent) return;
  uint32_t i = n < LAGSCOPE_BUSIEST_THREADS ? n : n - 1;
  while (i > 0 && out->busiest[i - 1].cpu_percent < cpu) {
    out->busiest[i] = out->busiest[i - 1];
    i--;
  }
  out->busiest[i].tid = t->tid;
  memcpy(out->busiest[i].name, t->name, sizeof(t->name));
  out->busiest[i].cpu_percent = cpu;
  if (n < LAGSCOPE_BUSIEST_THREADS) out->busiest_count = n + 1;
}

void lagscope__usage_compute(const lagscope__usage *previous,
                               const lagscope__usage *current,
                               const int32_t *own_tids, size_t own_len, lagscope_metrics *out) {
  uint64_t wall = current->time_ns - previous->time_ns;
  uint64_t own_ns = 0;
  out->cpu_percent = current->cpu_ns >= previous->cpu_ns
                         ? percent(current->cpu_ns - previous->cpu_ns, wall)
                         : 0.0;
  out->thread_count = current->thread_count;
  out->rss_bytes = current->rss_bytes;
  out->pss_bytes = current->pss_bytes;
  out->busiest_count = 0;
  for (uint32_t i = 0; i < current->threads_len; i++) {
    const lagscope__thread_usage *t = &current->threads[i];
    const lagscope__thread_usage *before = find_thread(previous, t->tid);
    /* A thread born since the last sample spent all its CPU time in this interval. */
    uint64_t before_ns = before != NULL && before->cpu_ns <= t->cpu_ns ? before->cpu_ns : 0;
    uint64_t used = t->cpu_ns - before_ns;
    if (is_own(t->tid, own_tids, own_len)) own_ns += used;
    rank_thread(out, t, percent(used, wall));
  }
  out->monitor_cpu_percent = percent(own_ns, wall);
}
