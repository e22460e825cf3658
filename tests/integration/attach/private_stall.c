/* A program built as Debian builds mousepad, for lagscope-run's tests: its main only calls into
 * its private library (private_stall_lib.c), which the build puts in a folder whose path begins
 * with /usr/lib/ (tests/integration/attach/CMakeLists.txt), as libmousepad.so.0 lies beside
 * GTK in /usr/lib/x86_64-linux-gnu. It knows nothing of lagscope. */
int private_stall_main(int argc, char **argv);

int main(int argc, char **argv) { return private_stall_main(argc, argv); }
