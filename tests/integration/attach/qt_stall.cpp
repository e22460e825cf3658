/* A Qt 5 program that knows nothing of lagscope, for lagscope-run's tests: a label, one stall of
 * 700 ms on the CPU in attach_qt_stall from a QTimer 1 s after the start, the end 2 s later.
 * Qt runs its loop on GLib's dispatcher, which is how lagscope-run reaches it. */
#include <QApplication>
#include <QLabel>
#include <QTimer>

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
  label.show();
  QTimer::singleShot(1000, [] { attach_qt_stall(700); });
  QTimer::singleShot(3000, &app, &QApplication::quit);
  return app.exec();
}
