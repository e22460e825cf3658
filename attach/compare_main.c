/* lagscope-compare [options] A B: the hangs of two runs (B against the baseline A) compared by
 * signature: each of A and B an events file (lagscope-run --events, the demo's --events jsonl)
 * or a folder of hang reports. Prints the table; --junit and --summary-md write it for CI.
 * Exit: 0, 3 when a new or regressed signature is over the budget, 2 for a bad option or a
 * side that cannot be read or holds no run. docs/guide.md, "Comparing two runs". */
#include "compare.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
  fputs("usage: lagscope-compare [options] BASELINE THIS-RUN\n"
        "Each an events file (one JSON event a line) or a folder of hang reports.\n"
        "  --tolerance-ms N    a signature's total time may grow by N ms (default 250)\n"
        "  --tolerance-pct P   and by P % of the baseline's (default 25) and stay unchanged\n"
        "  --budget-ms N       a new or regressed signature fails when one of its hangs in\n"
        "                      this run is longer than N ms (default 0: every one fails)\n"
        "  --junit FILE        write JUnit XML, one testcase per signature\n"
        "  --summary-md FILE   write a Markdown table (a CI job's summary)\n"
        "  --json FILE         write the comparison as JSON (for scripts)\n"
        "  --rules FILE        fingerprint rules: 'merge SIG SIG...' counts signatures as one,\n"
        "                      'accept SIG...' never fails the gate ('#' comments)\n"
        "  --help              this text\n"
        "Exit: 0; 3 when a new or regressed signature fails; 2 for bad usage or input, or a\n"
        "side that holds no run (an empty file or folder, a file not lagscope's), or a bad\n"
        "--rules file (its line said).\n",
        out);
}

static int bad(const char *why, const char *what) {
  fprintf(stderr, "lagscope-compare: %s: %s (see lagscope-compare --help)\n", why, what);
  return 2;
}

/* A number in [0, max], whole or not; 0 when good. */
static int number(const char *name, const char *text, double max, double *out) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(v >= 0) || v > max) {
    char what[128];
    snprintf(what, sizeof(what), "%s %s (a number in 0..%g)", name, text, max);
    return bad("bad value", what);
  }
  *out = v;
  return 0;
}

typedef struct compare_options {
  lagscope__compare_options judge;
  const char *junit, *summary_md, *json, *rules, *sides[2];
} compare_options;

static int parse(int argc, char **argv, compare_options *o) {
  int sides = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0) {
      usage(stdout);
      return 1;
    }
    if (a[0] != '-' || strcmp(a, "-") == 0) {
      if (sides == 2) return bad("more than two runs", a);
      o->sides[sides++] = a;
      continue;
    }
    if (i + 1 >= argc) return bad("no value", a);
    const char *v = argv[++i];
    double n;
    if (strcmp(a, "--junit") == 0) o->junit = v;
    else if (strcmp(a, "--summary-md") == 0) o->summary_md = v;
    else if (strcmp(a, "--json") == 0) o->json = v;
    else if (strcmp(a, "--rules") == 0) o->rules = v;
    else if (strcmp(a, "--tolerance-ms") == 0) {
      if (number(a, v, 3600000, &o->judge.tolerance_ms)) return 2;
    } else if (strcmp(a, "--tolerance-pct") == 0) {
      if (number(a, v, 100000, &o->judge.tolerance_pct)) return 2;
    } else if (strcmp(a, "--budget-ms") == 0) {
      if (number(a, v, 3600000, &n)) return 2;
      o->judge.budget_ms = (uint32_t)n;
    } else {
      return bad("unknown option", a);
    }
  }
  return sides == 2 ? 0 : bad("two runs are needed", "BASELINE THIS-RUN");
}

int main(int argc, char **argv) {
  compare_options o = {.judge = {.tolerance_ms = 250, .tolerance_pct = 25}};
  int rc = parse(argc, argv, &o);
  if (rc != 0) return rc == 1 ? 0 : rc;
  lagscope__compare c = {0};
  char why[512];
  if (o.rules != NULL && lagscope__compare_read_rules(&c, o.rules, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-compare: bad --rules file: %s (exit 2)\n", why);
    lagscope__compare_free(&c);
    return 2;
  }
  for (int side = 0; side < 2; side++)
    if ((rc = lagscope__compare_read(&c, side, o.sides[side], why, sizeof(why))) != 0) {
      fprintf(stderr, "lagscope-compare: %s%s (exit 2)\n",
              rc == LAGSCOPE_COMPARE_NO_RUN ? "no run to compare: " : "cannot read ", why);
      lagscope__compare_free(&c);
      return 2;
    }
  size_t failing = lagscope__compare_judge(&c, &o.judge);
  lagscope__compare_table(stdout, &c, &o.judge);
  fflush(stdout); /* before a result file that may be /dev/stdout */
  signal(SIGPIPE, SIG_IGN); /* a result pipe whose reader left: an error to say, not a death */
  rc = failing > 0 ? LAGSCOPE_COMPARE_FAILED : 0;
  if (o.junit != NULL && lagscope__compare_junit(o.junit, &c, &o.judge, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-compare: cannot write --junit %s: %s\n", o.junit, why);
    rc = 2;
  }
  if (o.summary_md != NULL &&
      lagscope__compare_markdown(o.summary_md, &c, &o.judge, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-compare: cannot write --summary-md %s: %s\n", o.summary_md, why);
    rc = 2;
  }
  if (o.json != NULL && lagscope__compare_json(o.json, &c, &o.judge, why, sizeof(why)) != 0) {
    fprintf(stderr, "lagscope-compare: cannot write --json %s: %s\n", o.json, why);
    rc = 2;
  }
  lagscope__compare_free(&c);
  return rc;
}
