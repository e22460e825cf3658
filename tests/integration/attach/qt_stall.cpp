/* A Qt program (built for Qt 5 as qt_stall, for Qt 6 as qt6_stall) that knows nothing of
 * lagscope, for lagscope-run's tests: a label, one stall of 700 ms on the CPU in attach_qt_stall
 * from a QTimer 1 s after the start, the end 2 s later;
 * `qt_stall AFTER_MS STALL_MS`: the stall AFTER_MS after the start, STALL_MS long, in a 320x240
 * window (room for the HUD over it);
 * `qt_stall AFTER_MS STALL_MS RUN_MS`: the same, the label repainted on every tick of a 16 ms
 * timer (an animation), the end RUN_MS after the start, and then on stdout the paints it saw
 * and its own cadence ("qt_stall: N paints, K per second outside the stall").
 * Qt runs its loop on GLib's dispatcher, which is how lagscope-run reaches it. */
#include <QApplication>
#include <QLabel>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <ctime>

static double now_ms() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000.0 + now.tv_nsec / 1e6;
}

__attribute__((noinline)) static void attach_qt_stall(int ms) {
  timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000.0 + (now.tv_nsec - start.tv_nsec) / 1e6 < ms);
}

/* A label that counts its paints: the frames the program drew. */
class CountingLabel : public QLabel {
 public:
  using QLabel::QLabel;
  unsigned paints = 0;
  double first_ms = 0, last_ms = 0;

 protected:
  void paintEvent(QPaintEvent *event) override {
    QLabel::paintEvent(event);
    last_ms = now_ms();
    if (paints++ == 0) first_ms = last_ms;
  }
};

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  CountingLabel label("about to stall");
  label.setWindowTitle("qt_stall");
  int after_ms = argc >= 3 ? atoi(argv[1]) : 1000, stall_ms = argc >= 3 ? atoi(argv[2]) : 700;
  int run_ms = argc == 4 ? atoi(argv[3]) : after_ms + 2000;
  if (argc >= 3) label.resize(320, 240);
  label.show();
  double stall_took_ms = 0;
  QTimer::singleShot(after_ms, [stall_ms, &stall_took_ms] {
    double start = now_ms();
    attach_qt_stall(stall_ms);
    stall_took_ms = now_ms() - start;
  });
  QTimer animation;
  unsigned ticks = 0;
  if (argc == 4) {
    QObject::connect(&animation, &QTimer::timeout,
                     [&label, &ticks] { label.setText(QString("tick %1").arg(++ticks)); });
    animation.start(16);
  }
  QTimer::singleShot(run_ms, &app, &QApplication::quit);
  int status = app.exec();
  if (argc == 4) {
    double drawing_s = (label.last_ms - label.first_ms - stall_took_ms) / 1000.0;
    printf("qt_stall: %u paints, %.1f per second outside the stall\n", label.paints,
           drawing_s > 0 ? (label.paints - 1) / drawing_s : 0.0);
  }
  return status;
}
