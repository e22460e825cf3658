/* lagscope-compare's grouping by signature (attach/compare.c), on n distinct signatures: the
 * time to read a baseline of n/2 and a run of n and judge them, beside the floor measured in
 * the same run, cJSON parsing the same lines alone (what any reader of them pays). Linear
 * grouping keeps the ratio to the floor flat from 20 000 to 200 000 signatures; the search of
 * the group list it replaced took 66 s for 200 000 (issue 42, item 7).
 *
 * Usage: bench_compare [--max N] (the largest n: 200000; the quick run, 20000). */
#define _GNU_SOURCE
#include "bench.h"
#include "compare.h"

#include <cjson/cJSON.h>
#include <unistd.h>

/* n hang_ended lines, each its own signature, into path; the text, for the floor. Allocates. */
static char *write_lines(const char *path, unsigned from, unsigned n) {
  char *text = NULL;
  size_t size = 0;
  FILE *mem = open_memstream(&text, &size);
  for (unsigned i = from; i < from + n; i++)
    fprintf(mem, "{\"type\":\"hang_ended\",\"signature\":\"%08x%08x\",\"duration_ms\":300,"
            "\"cause\":{\"kind\":\"cpu\",\"label\":\"cpu · f%u\"}}\n", i, i * 48271u, i);
  fclose(mem);
  FILE *out = fopen(path, "w");
  if (out == NULL || fputs(text, out) < 0 || fclose(out) != 0) {
    perror(path);
    exit(1);
  }
  return text;
}

/* The floor: each line parsed and freed, as compare.c's reading does before it groups. */
static double parse_only_ms(char *text) {
  uint64_t t0 = bench_now_ns();
  for (char *line = text, *next; line != NULL && *line != '\0'; line = next) {
    next = strchr(line, '\n');
    if (next != NULL) *next = '\0';
    cJSON_Delete(cJSON_Parse(line));
    if (next != NULL) *next++ = '\n';
  }
  return (double)(bench_now_ns() - t0) / 1e6;
}

int main(int argc, char **argv) {
  unsigned max = bench_arg_uint(argc, argv, "--max", 200000, 2);
  char dir[] = "/tmp/lagscope-bench-compare-XXXXXX";
  if (mkdtemp(dir) == NULL) return 1;
  char half[64], all[64];
  snprintf(half, sizeof half, "%s/half.jsonl", dir);
  snprintf(all, sizeof all, "%s/all.jsonl", dir);
  bench_table_begin("lagscope-compare: n distinct signatures, a baseline of n/2 against n");
  double first_ms = 0;
  unsigned first_n = 0;
  for (unsigned n = max < 20000 ? max : 20000; n <= max; n *= 10) {
    free(write_lines(half, 0, n / 2));
    char *text = write_lines(all, 0, n);
    char why[256], figure[64], value[32], base[48], ratio[16];
    lagscope__compare c = {0};
    lagscope__compare_options o = {.tolerance_ms = 250, .tolerance_pct = 25};
    uint64_t t0 = bench_now_ns();
    if (lagscope__compare_read(&c, 0, half, why, sizeof why) != 0 ||
        lagscope__compare_read(&c, 1, all, why, sizeof why) != 0) {
      fprintf(stderr, "bench_compare: %s\n", why);
      return 1;
    }
    size_t failing = lagscope__compare_judge(&c, &o);
    double ms = (double)(bench_now_ns() - t0) / 1e6;
    /* The floor parses n/2 + n lines too. */
    double floor_ms = parse_only_ms(text);
    free(text);
    text = write_lines(half, 0, n / 2);
    floor_ms += parse_only_ms(text);
    free(text);
    if (c.count != n || failing != n - n / 2) {
      fprintf(stderr, "bench_compare: %zu groups, %zu failing, for %u\n", c.count, failing, n);
      return 1;
    }
    lagscope__compare_free(&c);
    snprintf(figure, sizeof figure, "read and judge, %u signatures", n);
    snprintf(value, sizeof value, "%.0f ms", ms);
    snprintf(base, sizeof base, "%.0f ms cJSON parse only", floor_ms);
    bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, ms, floor_ms), "ratio flat in n");
    if (first_n == 0) first_n = n, first_ms = ms;
    else {
      snprintf(figure, sizeof figure, "growth from %u to %u signatures", first_n, n);
      snprintf(value, sizeof value, "%.1fx", ms / first_ms);
      snprintf(base, sizeof base, "%.0fx more signatures", (double)n / first_n);
      bench_row(figure, value, base, bench_ratio(ratio, sizeof ratio, ms / first_ms,
                                                (double)n / first_n), "≈ 1x (linear)");
    }
  }
  unlink(half);
  unlink(all);
  rmdir(dir);
  return 0;
}
