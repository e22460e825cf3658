/* The /proc parsers, fed odd input: they answer EPARSE and never read past the length; and
 * the samples read from this process. */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_stat(const char *text, char *name, uint64_t *u, uint64_t *s) {
  /* Copy into an exact-size heap block so ASan catches any read past the length. */
  size_t len = strlen(text);
  char *copy = malloc(len > 0 ? len : 1);
  memcpy(copy, text, len);
  char state = 0;
  int rc = lagscope__parse_stat(copy, len, name, LAGSCOPE_THREAD_NAME_MAX, &state, u, s);
  if (rc == 0) CHECK(state == 'S' || state == 'R');
  free(copy);
  return rc;
}

static void test_stat_lines(void) {
  char name[LAGSCOPE_THREAD_NAME_MAX];
  uint64_t u = 0, s = 0;
  CHECK_EQ_INT(parse_stat("42 (demo) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 3 0 9", name,
                          &u, &s), 0);
  CHECK(strcmp(name, "demo") == 0);
  CHECK_EQ_INT(u, 7);
  CHECK_EQ_INT(s, 3);
  /* A name with spaces and parentheses ends at the last ')'. */
  CHECK_EQ_INT(parse_stat("7 (a) b (c)) R 1 1 1 0 -1 0 0 0 0 0 11 12 0", name, &u, &s), 0);
  CHECK(strcmp(name, "a) b (c)") == 0);
  CHECK_EQ_INT(u, 11);
  /* A name longer than the buffer is cut. */
  CHECK_EQ_INT(parse_stat("7 (a-very-long-thread-name-indeed) R 1 1 1 0 -1 0 0 0 0 0 1 2", name,
                          &u, &s), 0);
  CHECK_EQ_INT(strlen(name), LAGSCOPE_THREAD_NAME_MAX - 1);
  const char *odd[] = {"", "42", "42 (demo", "42 demo) S 1", "42 (demo) S 1 2 3",
                       "42 (demo) S 1 42 42 0 -1 4194560 100 0 0 0 x 3",
                       "42 (demo) S 1 42 42 0 -1 4194560 100 0 0 0 99999999999999999999999 3",
                       "\x01\x02\xff(\xfe)\x00"};
  for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
    CHECK_EQ_INT(parse_stat(odd[i], name, &u, &s), LAGSCOPE_EPARSE);
}

static void test_kb_fields(void) {
  const char *rollup = "55d0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:     1234 kB\nPss:   "
                       "  567 kB\nPss_Anon: 9 kB\n";
  uint64_t bytes = 0;
  CHECK_EQ_INT(lagscope__parse_kb_field(rollup, strlen(rollup), "Rss:", &bytes), 0);
  CHECK_EQ_INT(bytes, 1234 * 1024);
  CHECK_EQ_INT(lagscope__parse_kb_field(rollup, strlen(rollup), "Pss:", &bytes), 0);
  CHECK_EQ_INT(bytes, 567 * 1024);
  CHECK_EQ_INT(lagscope__parse_kb_field(rollup, strlen(rollup), "Swap:", &bytes), LAGSCOPE_EPARSE);
  const char *bad[] = {"Rss:", "Rss: kB\n", "Rss: 12\n", "Rss: 12 MB\n", "Rss: -3 kB\n"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    CHECK_EQ_INT(lagscope__parse_kb_field(bad[i], strlen(bad[i]), "Rss:", &bytes), LAGSCOPE_EPARSE);
  /* The length bounds the search: a field past it is not seen. */
  const char *cut = "Rss: 1 kB\nPss: 2 kB\n";
  CHECK_EQ_INT(lagscope__parse_kb_field(cut, 10, "Pss:", &bytes), LAGSCOPE_EPARSE);
  uint64_t v;
  CHECK_EQ_INT(lagscope__parse_first_u64("123 456 7\n", 10, &v), 0);
  CHECK_EQ_INT(v, 123);
  CHECK_EQ_INT(lagscope__parse_first_u64("x", 1, &v), LAGSCOPE_EPARSE);
}

/* The real /proc of this process reads without error and is plausible. */
static void test_this_process(void) {
  static lagscope__usage a, b;
  char why[256] = "";
  CHECK_EQ_INT(lagscope__usage_read(&a, NULL, LAGSCOPE__USAGE_PSS | LAGSCOPE__USAGE_DETAIL,
                                             why, sizeof(why)), 0);
  CHECK(a.rss_bytes > 0 && a.pss_bytes > 0);
  volatile double x = 0;
  for (int i = 0; i < 5000000; i++) x += i; /* spend some CPU */
  /* Without PSS: RSS from statm, close to smaps_rollup's. */
  CHECK_EQ_INT(lagscope__usage_read(&b, &a, 0, why, sizeof(why)), 0);
  CHECK(b.rss_bytes > 0);
  CHECK_EQ_INT(b.pss_bytes, 0);
  CHECK_MSG(b.rss_bytes > a.rss_bytes / 2 && b.rss_bytes < a.rss_bytes * 2, "statm %llu, smaps %llu",
            (unsigned long long)b.rss_bytes, (unsigned long long)a.rss_bytes);
  CHECK_EQ_INT(b.thread_count, 1);
  CHECK_EQ_INT(b.threads_len, 1);
  CHECK(b.cpu_ns > a.cpu_ns);
  lagscope_metrics m;
  memset(&m, 0, sizeof(m));
  lagscope__usage_compute(&a, &b, NULL, 0, &m);
  CHECK(m.cpu_percent > 10);
  CHECK_EQ_INT(m.busiest_count, 1);
  CHECK(m.busiest[0].cpu_percent > 10);
}

/* A thread of this process, named, that spins until told to stop. */
static atomic_int spinner_stop;
static void *spinner(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "spinner-one");
  while (!atomic_load(&spinner_stop)) {
  }
  return NULL;
}

static const lagscope__thread_usage *find_thread(const lagscope__usage *s, const char *name) {
  for (uint32_t i = 0; i < s->threads_len; i++)
    if (strcmp(s->threads[i].name, name) == 0) return &s->threads[i];
  return NULL;
}

/* Without DETAIL, a thread's CPU comes from its CPU clock (the same nanoseconds schedstat has)
 * and its name from the previous sample: a new thread's from comm, a renamed one's only at
 * the next read with DETAIL. */
static void test_light_reads(void) {
  static lagscope__usage a, b, c, d;
  char why[256] = "";
  pthread_t t;
  CHECK(pthread_create(&t, NULL, spinner, NULL) == 0);
  for (int i = 0; i < 1000; i++) { /* bounded: until it has named itself */
    CHECK_EQ_INT(lagscope__usage_read(&a, NULL, 0, why, sizeof(why)), 0);
    if (find_thread(&a, "spinner-one") != NULL) break;
    usleep(1000);
  }
  const lagscope__thread_usage *ta = find_thread(&a, "spinner-one");
  CHECK_MSG(ta != NULL, "the new thread's name was read from comm");
  CHECK(a.thread_count >= 2); /* and a sanitizer's own, under TSan */
  CHECK_EQ_INT(ta->state, '\0');
  /* The spinner's CPU, read both ways, grows (bounded: on a busy machine it waits for a CPU). */
  const lagscope__thread_usage *tb = NULL;
  for (int i = 0; i < 5000 && (tb == NULL || tb->cpu_ns <= ta->cpu_ns); i++) {
    usleep(1000);
    CHECK_EQ_INT(lagscope__usage_read(&b, NULL, LAGSCOPE__USAGE_DETAIL, why, sizeof(why)), 0);
    tb = find_thread(&b, "spinner-one");
    CHECK(tb != NULL && tb->tid == ta->tid && tb->state == 'R');
  }
  CHECK_MSG(tb->cpu_ns > ta->cpu_ns, "clock %llu ns, then schedstat %llu ns",
            (unsigned long long)ta->cpu_ns, (unsigned long long)tb->cpu_ns);
  pthread_setname_np(t, "renamed");
  const lagscope__thread_usage *tc = NULL;
  for (int i = 0; i < 5000 && (tc == NULL || tc->cpu_ns <= tb->cpu_ns); i++) {
    usleep(1000);
    CHECK_EQ_INT(lagscope__usage_read(&c, &b, 0, why, sizeof(why)), 0);
    tc = find_thread(&c, "spinner-one");
    CHECK_MSG(tc != NULL && tc->tid == tb->tid, "the name is carried from the previous sample");
  }
  CHECK_MSG(tc->cpu_ns > tb->cpu_ns, "schedstat %llu ns, then clock %llu ns",
            (unsigned long long)tb->cpu_ns, (unsigned long long)tc->cpu_ns);
  CHECK_EQ_INT(lagscope__usage_read(&d, &c, LAGSCOPE__USAGE_DETAIL, why, sizeof(why)), 0);
  CHECK_MSG(find_thread(&d, "renamed") != NULL, "DETAIL reads the name afresh");
  atomic_store(&spinner_stop, 1);
  CHECK(pthread_join(t, NULL) == 0);
}

/* The busiest threads are ranked by CPU used between two samples. */
static void test_ranking(void) {
  static lagscope__usage a, b;
  a.time_ns = 0, b.time_ns = 1000000000;
  for (int i = 0; i < 12; i++) {
    a.threads[i].tid = b.threads[i].tid = 100 + i;
    snprintf(b.threads[i].name, sizeof(b.threads[i].name), "t%d", i);
    a.threads[i].cpu_ns = 1000000u * (uint64_t)i;
    b.threads[i].cpu_ns = a.threads[i].cpu_ns + 10000000u * (uint64_t)((i * 7) % 12);
  }
  a.threads_len = b.threads_len = b.thread_count = 12;
  int32_t own[] = {105};
  lagscope_metrics m;
  memset(&m, 0, sizeof(m));
  lagscope__usage_compute(&a, &b, own, 1, &m);
  CHECK_EQ_INT(m.busiest_count, LAGSCOPE_BUSIEST_THREADS);
  for (uint32_t i = 1; i < m.busiest_count; i++)
    CHECK(m.busiest[i - 1].cpu_percent >= m.busiest[i].cpu_percent);
  CHECK_EQ_INT(m.busiest[0].tid, 105); /* (5 * 7) % 12 = 11, the most */
  CHECK_NEAR(m.busiest[0].cpu_percent, 11.0, 1e-9);
  CHECK_NEAR(m.monitor_cpu_percent, 11.0, 1e-9);
}

/* The default app name, the report folder's last part: the process's name made safe as a
 * folder's, from a /proc root whose comm holds an odd name. */
static void folder_safe_name(const char *comm, const char *expected) {
  char root[] = "/tmp/lagscope-name-XXXXXX", path[64], name[64];
  CHECK(mkdtemp(root) != NULL);
  snprintf(path, sizeof(path), "%s/comm", root);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(comm, f);
  fclose(f);
  lagscope__process_set_root(root);
  lagscope_config config = lagscope_config_default();
  lagscope__app_name(&config, name, sizeof(name));
  lagscope__process_set_root(NULL);
  CHECK_MSG(strcmp(name, expected) == 0, "app name of \"%s\": %s, expected %s", comm, name,
            expected);
  unlink(path);
  rmdir(root);
}

/* statm's and schedstat's numbers; a missing or odd one is refused, never read past len. */
static void test_numbers(void) {
  uint64_t v[3];
  const char *schedstat = "123456789 42 7\n";
  CHECK_EQ_INT(lagscope__parse_u64s(schedstat, strlen(schedstat), v, 3), 0);
  CHECK(v[0] == 123456789u && v[1] == 42u && v[2] == 7u);
  const char *statm = "4096 1024 512 10 0 300 0\n";
  CHECK_EQ_INT(lagscope__parse_u64s(statm, strlen(statm), v, 2), 0);
  CHECK(v[0] == 4096u && v[1] == 1024u);
  CHECK_EQ_INT(lagscope__parse_u64s("18446744073709551615 0", 22, v, 2), 0);
  CHECK(v[0] == UINT64_MAX && v[1] == 0);
  const char *odd[] = {"", "12", "12 x", "-1 2", "18446744073709551616 1", "12\n3"};
  for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
    CHECK_EQ_INT(lagscope__parse_u64s(odd[i], strlen(odd[i]), v, 2), LAGSCOPE_EPARSE);
  CHECK_EQ_INT(lagscope__parse_u64s("12 34", 2, v, 2), LAGSCOPE_EPARSE); /* len ends it */
}

static void test_app_names(void) {
  folder_safe_name("demo-app_1.2\n", "demo-app_1.2");
  folder_safe_name("../etc passwd\n", "_._etc_passwd");
  folder_safe_name("\n", "app");
  folder_safe_name(".hidden\n", "_hidden");
}

static const test_case cases[] = {
    TEST_CASE(app_names),
    TEST_CASE(numbers),
    TEST_CASE(stat_lines),
    TEST_CASE(kb_fields),
    TEST_CASE(this_process),
    TEST_CASE(light_reads),
    TEST_CASE(ranking),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
