/* Qt: lagscope hooked into Qt's event loop (docs/guide.md "Qt").
 *
 * The ping is a queued call on the application object, which lives on the main thread:
 * QMetaObject::invokeMethod(qApp, …, Qt::QueuedConnection) is thread-safe and runs in every
 * event loop of that thread, nested ones included (a QDialog::exec, a QMessageBox). A QtQuick
 * app counts frames with QQuickWindow::frameSwapped; widgets draw on demand and have none. */
#include "example.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QTimer>

/* lagscope's post_main: on the monitor thread. */
static int post_to_qt(lagscope_main_fn fn, void *arg, void *user) {
  (void)user;
  bool queued = QMetaObject::invokeMethod(qApp, [fn, arg] { fn(arg); }, Qt::QueuedConnection);
  return queued ? 0 : -1;
}

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  example_options o = example_parse(argc, argv);
  lagscope_config config = lagscope_config_default();
  config.post_main = post_to_qt; /* lagscope_start on this, the main, thread */
  if (example_start(&o, &config) != LAGSCOPE_OK) return 1;

  QLabel label("Watched by lagscope");
  label.setWindowTitle("lagscope: Qt example");
  label.show();
  if (o.stall_ms) QTimer::singleShot(1000, [&o] { example_stall(o.stall_ms); });
  if (o.seconds) QTimer::singleShot(int(o.seconds) * 1000, &app, &QApplication::quit);
  int rc = app.exec();
  lagscope_stop();
  return rc;
}
