/*
 * UTC stamps as reports' ids begin ("20261126T170102.345Z"), written and read by arithmetic on
 * the civil calendar: gmtime_r would read the zone file into malloc'ed memory, on the monitor
 * thread, the first time. Moved out of the hang recorder (which names its reports with them);
 * store recovery reads them back.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* The civil date of a day counted from 1970-01-01 (proleptic Gregorian, in eras of 400
 * years). Arithmetic only: gmtime_r would have glibc read the zone file into malloc'ed memory
 * on this thread, the first time, to convert to UTC. F */
static void civil_from_days(int64_t days, int64_t *year, int *month, int *day) {
  days += 719468; /* from 0000-03-01, so that a leap day ends its year */
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  int64_t day_of_era = days - era * 146097;                               /* [0, 146096] */
  int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  int64_t month_from_march = (5 * day_of_year + 2) / 153;                 /* [0, 11] */
  *day = (int)(day_of_year - (153 * month_from_march + 2) / 5 + 1);
  *month = (int)(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
  *year = year_of_era + era * 400 + (*month <= 2);
}

void lagscope__utc_stamp(int64_t wall_ms, char out[LAGSCOPE__UTC_STAMP_SIZE]) {
  if (wall_ms < 0) wall_ms = 0;
  int64_t seconds = wall_ms / 1000, in_day = seconds % 86400, year;
  int month, day;
  civil_from_days(seconds / 86400, &year, &month, &day);
  snprintf(out, LAGSCOPE__UTC_STAMP_SIZE, "%04d%02d%02dT%02d%02d%02d.%03dZ",
           (int)(year % 10000), month, day, (int)(in_day / 3600), (int)(in_day / 60 % 60),
           (int)(in_day % 60), (int)(wall_ms % 1000));
}

/* Days from 1970-01-01 to a civil date (the inverse of civil_from_days). F */
static int64_t days_from_civil(int64_t year, int month, int day) {
  year -= month <= 2;
  int64_t era = (year >= 0 ? year : year - 399) / 400;
  int64_t year_of_era = year - era * 400;                                     /* [0, 399] */
  int64_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

/* n decimal digits at text into *out; 0 when they are not all digits. F */
static int digits_at(const char *text, int n, int *out) {
  int value = 0;
  for (int i = 0; i < n; i++) {
    if (text[i] < '0' || text[i] > '9') return 0;
    value = value * 10 + (text[i] - '0');
  }
  *out = value;
  return 1;
}

int lagscope__utc_stamp_read(const char *text, int64_t *wall_ms) {
  int year, month, day, hour, minute, second, ms = 0;
  if (strlen(text) < 16 || !digits_at(text, 4, &year) || !digits_at(text + 4, 2, &month) ||
      !digits_at(text + 6, 2, &day) || text[8] != 'T' || !digits_at(text + 9, 2, &hour) ||
      !digits_at(text + 11, 2, &minute) || !digits_at(text + 13, 2, &second))
    return 0;
  const char *end = text + 15;
  if (*end == '.') {
    if (!digits_at(end + 1, 3, &ms)) return 0;
    end += 4;
  }
  if (*end != 'Z' || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 ||
      minute > 59 || second > 60)
    return 0;
  int64_t seconds = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  *wall_ms = seconds * 1000 + ms;
  return 1;
}
