/* A library stripped after the build (strip --strip-all): .dynsym keeps the exported names,
 * the static function has none left. */
__attribute__((noinline)) static int stripped_hidden(int x) {
  volatile int y = x * 7;
  y += 3;
  return y;
}

int stripped_exported(int x) { return stripped_hidden(x) + 1; }

int (*stripped_hidden_address(void))(int) { return stripped_hidden; }
