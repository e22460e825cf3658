/* lagscope-run's --help (run_usage.c). */
#ifndef LAGSCOPE_ATTACH_RUN_USAGE_H
#define LAGSCOPE_ATTACH_RUN_USAGE_H

#include <stdio.h>

/* The usage text, options and exit codes, to out. F */
void lagscope__run_usage(FILE *out);

#endif
