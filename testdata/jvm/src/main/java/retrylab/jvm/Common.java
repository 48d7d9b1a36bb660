package retrylab.jvm;

/**
 * The request loop the retrylab chaos harness expects of an external client
 * (docs/chaos.md, "External clients"), shared by the JVM SDK clients here,
 * as testdata/sdk/node/common.mjs is by the Node ones.
 *
 * <p>RETRYLAB_REQUESTS requests are made one after another, each through the
 * SDK's own default retry loop; one line per request goes to stdout; the exit
 * code is 0 when every request succeeded, else 1. A failed request prints its
 * error's class and message to stderr (never the API key: the SDKs do not put
 * it in messages, and the harness redacts every output file anyway). No trace
 * is written: the SDKs do not expose how many attempts a request took, and
 * retrylab checks them from its own request journal (docs/sdk-clients.md).
 */
final class Common {
  private Common() {}

  /** One request: returns a short description of the answer, or throws. */
  interface Request {
    String run(int i) throws Exception;
  }

  /** Thrown when a stream ended cleanly without its final event. */
  static final class IncompleteStreamException extends Exception {
    private static final long serialVersionUID = 1L;

    IncompleteStreamException(String message) {
      super(message);
    }
  }

  static int requests() {
    String v = System.getenv("RETRYLAB_REQUESTS");
    if (v == null) {
      return 1;
    }
    try {
      int n = Integer.parseInt(v.trim());
      return n > 0 ? n : 1;
    } catch (NumberFormatException e) {
      return 1;
    }
  }

  /** The model to ask for: RETRYLAB_MODEL, else fallback. */
  static String model(String fallback) {
    String m = System.getenv("RETRYLAB_MODEL");
    return m == null || m.isEmpty() ? fallback : m;
  }

  /** "Class: message (cause: Class: message)" on one line. */
  static String errorLine(Throwable err) {
    StringBuilder b = new StringBuilder();
    b.append(err.getClass().getName()).append(": ").append(err.getMessage());
    Throwable cause = err.getCause();
    for (int depth = 0; cause != null && cause != err && depth < 3; depth++) {
      b.append(" (cause: ").append(cause.getClass().getName()).append(": ").append(cause.getMessage()).append(')');
      err = cause;
      cause = cause.getCause();
    }
    return b.toString().replaceAll("\\s*\\n\\s*", " ");
  }

  /** Runs one(i) for i = 1..RETRYLAB_REQUESTS and exits: 0 when all succeeded, else 1. */
  static void run(String label, Request one, Runnable close) {
    int n = requests();
    int failed = 0;
    for (int i = 1; i <= n; i++) {
      long start = System.nanoTime();
      try {
        String what = one.run(i);
        System.out.printf("%s request %d/%d: ok in %dms: %s%n", label, i, n, (System.nanoTime() - start) / 1_000_000, what);
      } catch (Exception e) {
        failed++;
        System.out.printf("%s request %d/%d: failed in %dms%n", label, i, n, (System.nanoTime() - start) / 1_000_000);
        System.err.printf("%s request %d/%d: %s%n", label, i, n, errorLine(e));
      }
      System.out.flush();
      System.err.flush();
    }
    // The SDKs' OkHttp dispatcher and connection pool keep non-daemon
    // threads for a while: close the client, then exit without waiting.
    close.run();
    System.exit(failed == 0 ? 0 : 1);
  }
}
