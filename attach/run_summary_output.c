/* lagscope-run's result files from its run summary (run_summary.c reads the run and tells it):
 * the JUnit XML, one testcase per signature, and the JSON, both escaped from any bytes; the files
 * opened so that none can block (lagscope__output_open). Shared with lagscope-compare. */
#define _GNU_SOURCE
#include "run_summary.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t lagscope__utf8_next(const unsigned char *p, uint32_t *cp) {
  unsigned c = p[0];
  size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
           : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0) return 0; /* a continuation byte, an overlong lead (c0, c1) or past f4 */
  uint32_t v = n == 1 ? c : c & (0x7fu >> n);
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0; /* also the NUL at a cut sequence's end */
    v = v << 6 | (p[i] & 0x3fu);
  }
  static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < least[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

void lagscope__run_put_xml(FILE *out, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p;) {
    uint32_t cp = 0;
    size_t n = lagscope__utf8_next(p, &cp);
    if (n == 0 || cp == 0xfffe || cp == 0xffff) { /* not UTF-8, or not a character XML allows */
      fputs("\xef\xbf\xbd", out);                  /* U+FFFD */
      p += n ? n : 1;
      continue;
    }
    switch (cp) {
      case '<': fputs("&lt;", out); break;
      case '>': fputs("&gt;", out); break; /* also keeps "]]>" out of a text */
      case '&': fputs("&amp;", out); break;
      case '"': fputs("&quot;", out); break;
      case '\'': fputs("&apos;", out); break;
      default:
        if (cp >= 0x20 || cp == '\n' || cp == '\t') fwrite(p, 1, n, out);
    }
    p += n;
  }
}

FILE *lagscope__output_open(const char *path, char *why, size_t why_size) {
  /* O_NONBLOCK: a FIFO that no one reads fails the open (ENXIO) instead of waiting for ever. */
  int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
  struct stat st;
  if (fd < 0) {
    int err = errno;
    int known = err == ENXIO && stat(path, &st) == 0;
    snprintf(why, why_size, "%s",
             known && S_ISFIFO(st.st_mode) ? "a FIFO that no one reads (refused: writing to it "
                                             "would wait for ever for a reader)"
             : known && S_ISSOCK(st.st_mode) ? "a socket (refused: not a file)"
             : err == EISDIR ? "a folder" : strerror(err));
    errno = err;
    return NULL;
  }
  const char *refused = NULL;
  if (fstat(fd, &st) != 0) refused = strerror(errno);
  else if (S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) refused = strerror(errno);
  else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
    refused = "not a file, a character device or a pipe (refused)";
  /* A pipe with a reader (/dev/stdout into `| tee`): written as a shell would, waiting for it. */
  else if (S_ISFIFO(st.st_mode) && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
    refused = strerror(errno);
  FILE *out = refused == NULL ? fdopen(fd, "w") : NULL;
  if (out == NULL) {
    snprintf(why, why_size, "%s", refused != NULL ? refused : strerror(errno));
    close(fd);
    errno = EINVAL;
  }
  return out;
}

/* Closes what lagscope__output_open opened: 0, or -1 with why (a write failed). */
int lagscope__output_close(FILE *out, char *why, size_t why_size) {
  int failed = ferror(out);
  int err = failed ? EIO : 0;
  if (fclose(out) != 0) failed = 1, err = errno;
  if (failed) snprintf(why, why_size, "%s", strerror(err));
  return failed ? -1 : 0;
}

/* Whether hangs a and b go in one testcase: the same signature, or the same hang. */
static int same_case(const lagscope__run_hang *a, const lagscope__run_hang *b) {
  return a == b || (a->signature[0] != '\0' && strcmp(a->signature, b->signature) == 0);
}

/* Whether hang i is the first of its testcase (its signature's first hang). */
static int first_of_case(const lagscope__run_summary *v, size_t i) {
  for (size_t j = 0; j < i; j++)
    if (same_case(&v->hangs[j], &v->hangs[i])) return 0;
  return 1;
}

static int case_fails(const lagscope__run_summary *v, size_t first, uint32_t budget_ms) {
  for (size_t i = first; i < v->count; i++)
    if (same_case(&v->hangs[first], &v->hangs[i]) && (budget_ms == 0 || lagscope__run_hang_is_over(v, &v->hangs[i], budget_ms)))
      return 1;
  return 0;
}

/* Testcases (one per signature), and of them failing. */
static size_t count_cases(const lagscope__run_summary *v, uint32_t budget_ms, size_t *failing) {
  size_t cases = 0;
  *failing = 0;
  for (size_t i = 0; i < v->count; i++)
    if (first_of_case(v, i)) {
      cases++;
      *failing += (size_t)case_fails(v, i, budget_ms);
    }
  return cases;
}

/* One hang as the failure and the body tell it. */
static void hang_message(char *out, size_t size, const lagscope__run_hang *h, uint32_t budget_ms,
                         int over) {
  snprintf(out, size, "hang %llu: a hang of %.0f ms%s%s%s%s%s%s%s", (unsigned long long)h->id,
           h->duration_ms, h->startup ? " in the start-up" : "",
           budget_ms && over ? ", over the budget" : "",
           h->ended ? "" : " (not ended: the program ended during it)", h->cause[0] ? "; " : "",
           h->cause, h->own_frames[0] ? "; in " : "", h->own_frames);
}

static void put_property(FILE *out, const char *name, const char *value) {
  fprintf(out, "        <property name=\"%s\" value=\"", name);
  lagscope__run_put_xml(out, value);
  fputs("\"/>\n", out);
}

/* The testcase of the signature of hang first: named by its kind and top own frames (the same
 * from run to run: a CI history follows it; " [signature]" added when an earlier testcase has
 * that name), its time the hangs' total, the signature and the reports' paths in properties,
 * each hang in the body, a failure when one is over the budget (every one without). */
static void put_signature_case(FILE *out, const lagscope__run_summary *v, size_t first,
                               const char *program, uint32_t budget_ms) {
  const lagscope__run_hang *h0 = &v->hangs[first];
  double total = 0;
  size_t hangs = 0, not_ended = 0;
  for (size_t i = first; i < v->count; i++)
    if (same_case(h0, &v->hangs[i]))
      total += v->hangs[i].duration_ms, hangs++, not_ended += !v->hangs[i].ended;
  int clash = 0;
  for (size_t j = 0; j < first; j++)
    clash |= first_of_case(v, j) && strcmp(v->hangs[j].name, h0->name) == 0;
  fputs("    <testcase classname=\"lagscope-run.", out);
  lagscope__run_put_xml(out, program);
  fputs("\" name=\"", out);
  lagscope__run_put_xml(out, h0->name);
  if (clash) fprintf(out, " [%s]", h0->signature[0] ? h0->signature : "unsigned");
  fprintf(out, "\" time=\"%.3f\">\n      <properties>\n", total / 1000);
  put_property(out, "signature", h0->signature);
  char number[32];
  snprintf(number, sizeof(number), "%zu", hangs);
  put_property(out, "hangs", number);
  snprintf(number, sizeof(number), "%zu", not_ended);
  put_property(out, "not_ended", number);
  for (size_t i = first; i < v->count; i++)
    if (same_case(h0, &v->hangs[i]) && v->hangs[i].report_path[0] != '\0')
      put_property(out, "report", v->hangs[i].report_path);
  fputs("      </properties>\n", out);
  char message[4096];
  for (size_t i = first; i < v->count; i++) {
    const lagscope__run_hang *h = &v->hangs[i];
    int over = budget_ms == 0 || lagscope__run_hang_is_over(v, h, budget_ms);
    if (!same_case(h0, h) || !over) continue;
    hang_message(message, sizeof(message), h, budget_ms, 1);
    fputs("      <failure type=\"hang\" message=\"", out);
    lagscope__run_put_xml(out, message);
    fputs("\">", out);
    lagscope__run_put_xml(out, message);
    fputs("</failure>\n", out);
    break; /* one failure a testcase; every hang is in the body */
  }
  fputs("      <system-out>", out);
  for (size_t i = first; i < v->count; i++) {
    const lagscope__run_hang *h = &v->hangs[i];
    if (!same_case(h0, h)) continue;
    hang_message(message, sizeof(message), h, budget_ms, lagscope__run_hang_is_over(v, h, budget_ms));
    lagscope__run_put_xml(out, message);
    fputs("\n", out);
  }
  fputs("</system-out>\n    </testcase>\n", out);
}

int lagscope__run_junit(const char *path, const lagscope__run_summary *v, const char *program,
                        uint32_t budget_ms, char *why, size_t why_size) {
  FILE *out = lagscope__output_open(path, why, why_size);
  if (out == NULL) return -1;
  size_t failures;
  size_t cases = count_cases(v, budget_ms, &failures);
  size_t errors = lagscope__run_unwatched(v) && !v->allow_unwatched;
  size_t tests = cases + (failures == 0 ? 1 : 0);
  fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  char error_count[32] = ""; /* said only when there is one: the files of before, unchanged */
  if (errors > 0) snprintf(error_count, sizeof(error_count), " errors=\"%zu\"", errors);
  fprintf(out, "<testsuites name=\"lagscope-run\" tests=\"%zu\" failures=\"%zu\"%s>\n", tests,
          failures, error_count);
  fputs("  <testsuite name=\"", out);
  lagscope__run_put_xml(out, program);
  fprintf(out, "\" tests=\"%zu\" failures=\"%zu\"%s>\n", tests, failures, error_count);
  for (size_t i = 0; i < v->count; i++)
    if (first_of_case(v, i)) put_signature_case(out, v, i, program, budget_ms);
  if (errors) {
    char loops[160];
    lagscope__run_loop_names(loops, sizeof(loops), 0);
    fputs("    <testcase classname=\"lagscope-run.", out);
    lagscope__run_put_xml(out, program);
    fputs("\" name=\"watched\">\n      <error type=\"unwatched\" message=\"lagscope saw no ", out);
    lagscope__run_put_xml(out, loops);
    fputs(" loop in ", out);
    lagscope__run_put_xml(out, program);
    fputs(": nothing was watched (exit 5; --allow-unwatched when that is expected)\"/>\n"
          "    </testcase>\n", out);
  } else if (failures == 0) {
    fputs("    <testcase classname=\"lagscope-run.", out);
    lagscope__run_put_xml(out, program);
    if (budget_ms > 0)
      fprintf(out, "\" name=\"no hang over %u ms\"/>\n", budget_ms);
    else
      fputs("\" name=\"no hang\"/>\n", out);
  }
  fputs("  </testsuite>\n</testsuites>\n", out);
  return lagscope__output_close(out, why, why_size);
}

void lagscope__put_json_string(FILE *out, const char *text) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p;) {
    uint32_t cp = 0;
    size_t n = lagscope__utf8_next(p, &cp);
    if (n == 0) {
      fputs("\xef\xbf\xbd", out); /* U+FFFD */
      p++;
      continue;
    }
    if (cp == '"' || cp == '\\') fprintf(out, "\\%c", (int)cp);
    else if (cp < 0x20 || cp == 0x7f) fprintf(out, "\\u%04x", (unsigned)cp);
    else fwrite(p, 1, n, out);
    p += n;
  }
  fputc('"', out);
}

static void put_json_hang(FILE *out, const lagscope__run_summary *v, const lagscope__run_hang *h,
                          uint32_t budget_ms) {
  fprintf(out, "{\"id\":%llu,\"name\":", (unsigned long long)h->id);
  lagscope__put_json_string(out, h->name);
  fputs(",\"signature\":", out);
  lagscope__put_json_string(out, h->signature);
  fputs(",\"cause\":", out);
  lagscope__put_json_string(out, h->cause);
  fputs(",\"own_frames\":", out);
  lagscope__put_json_string(out, h->own_frames);
  fprintf(out, ",\"duration_ms\":%.3f,\"ended\":%s,\"startup\":%s,\"over_budget\":%s,"
          "\"report_path\":", h->duration_ms, h->ended ? "true" : "false",
          h->startup ? "true" : "false", lagscope__run_hang_is_over(v, h, budget_ms) ? "true" : "false");
  lagscope__put_json_string(out, h->report_path);
  fputc('}', out);
}

int lagscope__run_json(const char *path, const lagscope__run_summary *v, const char *program,
                       uint32_t budget_ms, int status, const char *error, const char *comparison,
                       char *why, size_t why_size) {
  FILE *out = lagscope__output_open(path, why, why_size);
  if (out == NULL) return -1;
  fputs("{\"tool\":\"lagscope-run\",\"program\":", out);
  lagscope__put_json_string(out, program);
  fputs(",\"run_id\":", out);
  lagscope__put_json_string(out, v->run_id);
  fprintf(out, ",\"exit\":%d,\"watched\":%s,\"allow_unwatched\":%s,\"budget_ms\":%u,\"error\":",
          status, v->loops_known && !lagscope__run_unwatched(v) ? "true" : "false",
          v->allow_unwatched ? "true" : "false", budget_ms);
  if (error != NULL) lagscope__put_json_string(out, error);
  else fputs("null", out);
  fprintf(out, ",\"over_budget\":%zu,\"hangs\":[", lagscope__run_over_budget(v, budget_ms));
  for (size_t i = 0; i < v->count; i++) {
    if (i > 0) fputc(',', out);
    put_json_hang(out, v, &v->hangs[i], budget_ms);
  }
  fprintf(out, "],\"blind_spells\":%zu,\"blind_ms\":%.3f,\"bad_lines\":%zu", v->blind_spells,
          v->blind_ms, v->bad_lines);
  if (comparison != NULL) fprintf(out, ",\"comparison\":%s", comparison);
  fputs("}\n", out);
  return lagscope__output_close(out, why, why_size);
}
