/* Every exported function of libc (its .dynsym, read here with libelf) resolves to the same
 * symbol as dladdr: the same start, and the same name or an alias defined at that start
 * (dladdr picks among aliases in hash order; lagscope prefers global, then fewer leading
 * underscores). Both at the function's start and in its middle. libdw is not loaded for
 * them. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct function {
  uintptr_t address;
  size_t size;
  const char *name;
} function;

typedef struct library {
  char path[512];
  uintptr_t bias;
} library;

static int find_libc(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  library *l = data;
  if (info->dlpi_name == NULL || strstr(info->dlpi_name, "/libc.so") == NULL) return 0;
  snprintf(l->path, sizeof(l->path), "%s", info->dlpi_name);
  l->bias = info->dlpi_addr;
  return 1;
}

static int by_address(const void *a, const void *b) {
  uintptr_t x = ((const function *)a)->address, y = ((const function *)b)->address;
  return (x > y) - (x < y);
}

/* Is name one of the functions defined at address? */
static int is_alias(const function *f, size_t n, uintptr_t address, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (f[i].address == address && strcmp(f[i].name, name) == 0) return 1;
  return 0;
}

int main(void) {
  library libc = {"", 0};
  dl_iterate_phdr(find_libc, &libc);
  CHECK_MSG(libc.path[0] != '\0', "libc is not loaded");

  elf_version(EV_CURRENT);
  int fd = open(libc.path, O_RDONLY);
  CHECK(fd >= 0);
  Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
  CHECK(elf != NULL);
  Elf_Scn *scn = NULL;
  GElf_Shdr sh;
  while ((scn = elf_nextscn(elf, scn)) != NULL)
    if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == SHT_DYNSYM) break;
  CHECK(scn != NULL);
  Elf_Data *data = elf_getdata(scn, NULL);
  size_t count = sh.sh_size / sh.sh_entsize, n = 0;
  function *f = calloc(count, sizeof(function));
  CHECK(f != NULL);
  for (size_t i = 1; i < count; i++) {
    GElf_Sym sym;
    CHECK(gelf_getsym(data, (int)i, &sym) != NULL);
    int type = GELF_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
        sym.st_value == 0)
      continue;
    f[n++] = (function){libc.bias + sym.st_value, sym.st_size,
                        elf_strptr(elf, sh.sh_link, sym.st_name)};
  }
  qsort(f, n, sizeof(function), by_address);
  CHECK(n > 500);

  lagscope__symbols *s = lagscope__symbols_new();
  CHECK(s != NULL);
  size_t same_name = 0, alias = 0, checked = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && f[i].address == f[i - 1].address) continue;
    for (int middle = 0; middle < 2; middle++) {
      if (middle && f[i].size < 2) continue;
      uintptr_t address = f[i].address + (middle ? f[i].size / 2 : 0);
      Dl_info dl;
      CHECK(dladdr((void *)address, &dl) != 0 && dl.dli_sname != NULL);
      lagscope__stack_frame info;
      CHECK_EQ_INT(lagscope__symbols_resolve(s, address, 0, &info), 0);
      CHECK_MSG(info.function != NULL, "no name for %s+%zu", f[i].name, address - f[i].address);
      CHECK_MSG(strcmp(info.module, libc.path) == 0, "module %s", info.module);
      checked++;
      if (strcmp(info.function, dl.dli_sname) == 0) {
        same_name++;
        continue;
      }
      /* Different names: then the same start, and both names defined there. */
      uintptr_t start = address - info.function_offset;
      CHECK_MSG(start == (uintptr_t)dl.dli_saddr, "%s vs dladdr's %s", info.function,
                dl.dli_sname);
      CHECK_MSG(is_alias(f, n, start, info.function) && is_alias(f, n, start, dl.dli_sname),
                "%s vs dladdr's %s", info.function, dl.dli_sname);
      alias++;
    }
  }
  printf("%zu addresses in %s: %zu the same name as dladdr, %zu an alias at the same start\n",
         checked, libc.path, same_name, alias);
  CHECK(same_name > checked / 2);
  /* libc has no DWARF of its own to read (a debug package's is compressed): libdw, loaded only
   * for lines, was not loaded. */
  CHECK_MSG(dlopen("libdw.so.1", RTLD_NOW | RTLD_NOLOAD) == NULL,
            "libdw was loaded for objects without DWARF to read");
  lagscope__symbols_free(s);
  elf_end(elf);
  close(fd);
  free(f);
  return 0;
}
