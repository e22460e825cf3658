/* lagscope__utc_stamp against gmtime_r and strftime, the oracle: every day from 1970 to 2400
 * (leap days, 2100's that is not, 2000's that is) at a varying time of day, and the edges of a
 * day and of a second. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static void expect_same(int64_t wall_ms) {
  char ours[LAGSCOPE__UTC_STAMP_SIZE], oracle[64], when[32];
  lagscope__utc_stamp(wall_ms, ours);
  time_t seconds = (time_t)(wall_ms / 1000);
  struct tm utc;
  CHECK(gmtime_r(&seconds, &utc) != NULL);
  strftime(when, sizeof(when), "%Y%m%dT%H%M%S", &utc);
  snprintf(oracle, sizeof(oracle), "%s.%03dZ", when, (int)(wall_ms % 1000));
  CHECK_MSG(strcmp(ours, oracle) == 0, "%lld ms: %s, gmtime_r says %s", (long long)wall_ms, ours,
            oracle);
  int64_t back = -1; /* and read back: a hang_lost's start from its id (store_recover.c) */
  CHECK_MSG(lagscope__utc_stamp_read(ours, &back) && back == wall_ms, "%s read as %lld", ours,
            (long long)back);
}

int main(void) {
  const int64_t day_ms = 86400000;
  for (int64_t day = 0; day < 157000; day++) /* 1970-01-01 to 2399 */
    expect_same(day * day_ms + (day * 7919 * 1000 + day % 1000) % day_ms);
  int64_t edges[] = {0, 999, 1000, day_ms - 1, day_ms, 951782400000 /* 2000-02-29 */,
                     4107542400000 /* 2100-03-01 */, 1795711965167};
  for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) expect_same(edges[i]);
  char stamp[LAGSCOPE__UTC_STAMP_SIZE];
  lagscope__utc_stamp(1795712462345, stamp);
  CHECK_MSG(strcmp(stamp, "20261126T170102.345Z") == 0, "%s", stamp);
  int64_t read = -1; /* an older id's stamp, without ms; and what is no stamp */
  CHECK(lagscope__utc_stamp_read("20240101T000000Z-7-2", &read) && read == 1704067200000);
  CHECK(!lagscope__utc_stamp_read("20240101T000000", &read));
  CHECK(!lagscope__utc_stamp_read("20241301T000000Z", &read));
  CHECK(!lagscope__utc_stamp_read("2024010XT000000Z", &read));
  CHECK(!lagscope__utc_stamp_read("20240101T000000.12Z", &read));
  CHECK(!lagscope__utc_stamp_read("", &read));
  printf("ok: utc stamps of 157000 days as gmtime_r gives them, and read back\n");
  return 0;
}
