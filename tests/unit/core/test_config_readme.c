/* The configuration table of docs/guide.md ("Configuration"; it was the README's, hence the
 * name) against the field table (LAGSCOPE__CONFIG_FIELDS in core/base/base.h): each row's
 * default and range, as the guide writes them, and no guide row that is neither in the table
 * nor one of the fields kept by hand. Every difference is printed, one line each.
 * Usage: test_config_readme path/to/docs/guide.md */
#include "check.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define TABLE_HEADER "| field | default | range | meaning |"
#define ROWS_MAX 64
#define EN_DASH "\u2013"
#define MINUS "\u2212"
#define AT_LEAST "\u2265"

/* The guide's rows that no table row makes: the field table's comment says why they are by
 * hand. */
static const char *const by_hand[] = {
    "`post_main`, `post_main_user`", "`on_event`, `on_event_user`", "`report_dir`",
    "`app_name`", "`app_version`", "`hud_corner`", "`log`, `log_user`", "`server_bind`",
    "`metrics_token`", "`pushgateway_url`", "`pushgateway_instance`",
};

typedef struct text {
  char s[128];
} text;

typedef struct readme_row {
  char field[128], default_text[512], range[128];
  int matched;
} readme_row;

static void trim(char *s) {
  size_t start = strspn(s, " "), len = strlen(s);
  while (len > start && (s[len - 1] == ' ' || s[len - 1] == '\n')) len--;
  memmove(s, s + start, len - start);
  s[len - start] = '\0';
}

/* The next '|'-separated cell of line at *at, trimmed, into out. */
static void next_cell(const char **at, char *out, size_t size) {
  const char *end = strchr(*at, '|');
  size_t len = end != NULL ? (size_t)(end - *at) : strlen(*at);
  snprintf(out, size, "%.*s", (int)len, *at);
  trim(out);
  *at = end != NULL ? end + 1 : *at + len;
}

/* The rows of the guide's table; -1 when there is no table. */
static int read_rows(const char *path, readme_row *rows, int max) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  char line[2048];
  int in_table = 0, n = 0;
  while (fgets(line, sizeof(line), f) != NULL) {
    if (!in_table) {
      in_table = strncmp(line, TABLE_HEADER, strlen(TABLE_HEADER)) == 0;
      continue;
    }
    if (line[0] != '|') break;
    if (strncmp(line, "|---", 4) == 0 || n == max) continue;
    const char *at = line + 1;
    next_cell(&at, rows[n].field, sizeof(rows[n].field));
    next_cell(&at, rows[n].default_text, sizeof(rows[n].default_text));
    next_cell(&at, rows[n].range, sizeof(rows[n].range));
    rows[n++].matched = 0;
  }
  fclose(f);
  return in_table ? n : -1;
}

/* A number as the guide writes it: bytes in MiB or KiB when whole. */
static text number(double v, const char *unit) {
  text t;
  if (strcmp(unit, "bytes") == 0 && v >= 1048576.0 && (uint64_t)v % 1048576u == 0)
    snprintf(t.s, sizeof(t.s), "%.15g MiB", v / 1048576.0);
  else if (strcmp(unit, "bytes") == 0 && v >= 1024.0 && (uint64_t)v % 1024u == 0)
    snprintf(t.s, sizeof(t.s), "%.15g KiB", v / 1024.0);
  else
    snprintf(t.s, sizeof(t.s), "%.15g", v);
  return t;
}

static text between(double lo, double hi, const char *unit) {
  text t;
  if (lo == 0 && hi == 1)
    snprintf(t.s, sizeof(t.s), "0, 1");
  else
    snprintf(t.s, sizeof(t.s), "%.40s" EN_DASH "%.40s", number(lo, unit).s, number(hi, unit).s);
  return t;
}

static text joined(const char *a, const char *b, const char *c) {
  text t;
  snprintf(t.s, sizeof(t.s), "%.40s%.40s%.40s", a, b, c);
  return t;
}

/* A row's range as the guide writes it, by its check (the field table's comment). */
#define RANGE_RANGE_(min, max, unit) between(min, max, unit)
#define RANGE_POW2_(min, max, unit) joined("power of two, ", between(min, max, unit).s, "")
#define RANGE_AT_MOST_(min, max, unit) joined(number(min, unit).s, EN_DASH, #max)
#define RANGE_BELOW_(min, max, unit) joined(number(min, unit).s, EN_DASH #max " " MINUS " 1", "")
#define RANGE_AT_LEAST_(min, max, unit) joined(AT_LEAST " ", number(min, unit).s, "")
#define RANGE_RT_SIGNAL_(min, max, unit) joined("0, or SIGRTMIN" EN_DASH "SIGRTMAX", "", "")
#define RANGE_ON_OFF_(min, max, unit) between(0, 1, unit)

/* Compares one table row with the guide's; 1 if they agree. */
static int compare(readme_row *rows, int n, const char *name, const char *default_text,
                   const char *range) {
  char field[128];
  snprintf(field, sizeof(field), "`%s`", name);
  for (int i = 0; i < n; i++) {
    if (strcmp(rows[i].field, field) != 0) continue;
    rows[i].matched = 1;
    int same = 1;
    if (strcmp(rows[i].default_text, default_text) != 0) {
      fprintf(stderr, "  %s: default: guide \"%s\", table \"%s\"\n", name, rows[i].default_text,
              default_text);
      same = 0;
    }
    if (strcmp(rows[i].range, range) != 0) {
      fprintf(stderr, "  %s: range: guide \"%s\", table \"%s\"\n", name, rows[i].range, range);
      same = 0;
    }
    return same;
  }
  fprintf(stderr, "  %s: no guide row (the table has default \"%s\", range \"%s\")\n", name,
          default_text, range);
  return 0;
}

static int is_by_hand(const char *field) {
  for (size_t i = 0; i < sizeof(by_hand) / sizeof(by_hand[0]); i++)
    if (strcmp(field, by_hand[i]) == 0) return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s docs/guide.md\n", argv[0]);
    return 2;
  }
  static readme_row rows[ROWS_MAX];
  int n = read_rows(argv[1], rows, ROWS_MAX);
  if (n < 0) {
    fprintf(stderr, "%s: no line \"%s\"\n", argv[1], TABLE_HEADER);
    return 1;
  }
  int agree = 1, compared = 0;
  fprintf(stderr, "%s's configuration table against LAGSCOPE__CONFIG_FIELDS (core/base/base.h):\n",
          argv[1]);
#define COMPARE_ROW_(name, type, default_value, check, min, max, unit, status)                \
  agree &= compare(rows, n, #name, number((double)(type)(default_value), unit).s,            \
                   RANGE_##check##_(min, max, unit).s);                                      \
  compared++;
  LAGSCOPE__CONFIG_FIELDS(COMPARE_ROW_)
#undef COMPARE_ROW_
  for (int i = 0; i < n; i++) {
    if (rows[i].matched || is_by_hand(rows[i].field)) continue;
    fprintf(stderr, "  %s: a guide row that is neither in the table nor kept by hand\n",
            rows[i].field);
    agree = 0;
  }
  CHECK(agree);
  printf("config_readme: ok: %d rows agree with the table, %d kept by hand\n", compared,
         n - compared);
  return 0;
}
