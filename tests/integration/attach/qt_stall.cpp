/* A Qt 5 program that knows nothing of lagscope, for lagscope-run's tests: a label, one stall of
 * 700 ms on the CPU in attach_qt_stall from a QTimer 1 s after the start, the end 2 s later;
 * `qt_stall AFTER_MS STALL_MS`: the stall AFTER_MS after the start, STALL_MS long, in a 320x240
 * window (room for the HUD over it).
 * Qt runs its loop on GLib's dispatcher, which is how lagscope-run reaches it. */
#include <QApplication>
#include <QLabel>
#include <QTimer>

#include <cstdlib>
#include <ctime>

__attribute__((noinline)) static void attach_qt_stall(int ms) {
  timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000.0 + (now.tv_nsec - start.tv_nsec) / 1e6 < ms);
}

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  QLabel label("about to stall");
  label.setWindowTitle("qt_stall");
  int after_ms = argc == 3 ? atoi(argv[1]) : 1000, stall_ms = argc == 3 ? atoi(argv[2]) : 700;
  if (argc == 3) label.resize(320, 240);
  label.show();
  QTimer::singleShot(after_ms, [stall_ms] { attach_qt_stall(stall_ms); });
  QTimer::singleShot(after_ms + 2000, &app, &QApplication::quit);
  return app.exec();
}
