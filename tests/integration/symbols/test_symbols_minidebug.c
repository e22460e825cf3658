/* A stripped program shipped with MiniDebugInfo, as Fedora ships its programs (issue 32,
 * section 4): its static function has no name left in .symtab (none) or .dynsym, and is named
 * from the xz-compressed .symtab in .gnu_debugdata; the frame is the app's code. Built once, then
 * copied by make-minidebuginfo into three programs that run this same code:
 *
 *   test_symbols_minidebug.mdi        with the section: the static function is named
 *   test_symbols_minidebug.mdi.bare   without it: module + offset, no name (what lagscope
 *                                     gave before it read MiniDebugInfo)
 *   test_symbols_minidebug.mdi.cut    its stream cut in half: module + offset, no crash
 *   test_symbols_minidebug.mdi.elfcut a whole stream of half the ELF (its section headers
 *                                     lost): module + offset, no crash
 *
 * Usage: PROGRAM named|bare|cut|elfcut */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uintptr_t return_address;

__attribute__((noinline)) static void note_return_address(void) {
  return_address = (uintptr_t)__builtin_return_address(0);
  __asm__ volatile("" ::: "memory");
}

/* The static function whose frame must be named: its call's return address is inside it. */
__attribute__((noinline)) static int minidebug_static_work(int x) {
  note_return_address();
  volatile int y = x * 5;
  return y + 1;
}

/* Which of .symtab and .gnu_debugdata this program's file has, so that the test is what it
 * says: a stripped program. */
static void sections(int *symtab, int *debugdata) {
  *symtab = *debugdata = 0;
  elf_version(EV_CURRENT);
  int fd = open("/proc/self/exe", O_RDONLY);
  CHECK(fd >= 0);
  Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
  size_t names;
  CHECK(elf != NULL && elf_getshdrstrndx(elf, &names) == 0);
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    CHECK(gelf_getshdr(scn, &sh) != NULL);
    const char *name = elf_strptr(elf, names, sh.sh_name);
    if (sh.sh_type == SHT_SYMTAB) *symtab = 1;
    if (name != NULL && strcmp(name, ".gnu_debugdata") == 0) *debugdata = 1;
  }
  elf_end(elf);
  close(fd);
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 2, "usage: %s named|bare|cut|elfcut", argv[0]);
  int named = strcmp(argv[1], "named") == 0, bare = strcmp(argv[1], "bare") == 0;
  int symtab, debugdata;
  sections(&symtab, &debugdata);
  CHECK_MSG(!symtab, "%s is not stripped: run the copies make-minidebuginfo makes", argv[0]);
  CHECK_EQ_INT(debugdata, !bare);

  CHECK_EQ_INT(minidebug_static_work(3), 16);
  lagscope__symbols *s = lagscope__symbols_new();
  CHECK(s != NULL);
  lagscope__stack_frame f;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, return_address, 1, &f), 0);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  CHECK(n > 0);
  exe[n] = '\0';
  printf("%s: %s+0x%lx %s+0x%lx code %d\n", argv[1], f.module, (unsigned long)f.module_offset,
         f.function ? f.function : "(none)", (unsigned long)f.function_offset, f.code);
  CHECK_MSG(f.module != NULL && strcmp(f.module, exe) == 0, "module %s", f.module);
  CHECK_EQ_INT(f.code, LAGSCOPE__CODE_APP);
  if (named) {
    CHECK_MSG(f.function != NULL && strcmp(f.function, "minidebug_static_work") == 0,
              "function %s", f.function ? f.function : "(none)");
    CHECK(f.function_offset > 0 && f.function_offset < 256);
  } else {
    CHECK_MSG(f.function == NULL, "named %s without MiniDebugInfo", f.function);
  }
  CHECK(f.file == NULL && f.line == 0); /* MiniDebugInfo has no DWARF */
  lagscope__symbols_free(s);
  printf("minidebug %s: ok\n", argv[1]);
  return 0;
}
