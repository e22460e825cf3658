/* A library the dlopen test loads after creating its symbolicator. Built with -g. */
static const int plugin_hidden_line = __LINE__ + 1;
__attribute__((noinline)) static int plugin_hidden(int x) {
  volatile int y = x * 5;
  return y + plugin_hidden_line;
}

int plugin_add(int a, int b) { return a + b + plugin_hidden(a); }

int (*plugin_hidden_address(void))(int) { return plugin_hidden; }

int plugin_hidden_first_line(void) { return plugin_hidden_line; }
