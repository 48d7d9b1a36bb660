package retrylab.jvm;

import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;

/**
 * The official Anthropic Java SDK (com.anthropic:anthropic-java, pinned in
 * pom.xml), unchanged and with its defaults, as a retrylab external client:
 * AnthropicOkHttpClient.fromEnv() reads ANTHROPIC_BASE_URL and
 * ANTHROPIC_API_KEY from the environment the harness sets, and the SDK
 * retries with its own loop (RetryingHttpClient: 2 retries, 0.5s × 2^n up to
 * 8s minus up to 25%, Retry-After / retry-after-ms, x-should-retry). Each
 * request streams (messages().createStreaming) and is read to its end. See
 * docs/sdk-clients.md.
 */
public final class AnthropicClient {
  private AnthropicClient() {}

  public static void main(String[] args) {
    com.anthropic.client.AnthropicClient client = AnthropicOkHttpClient.fromEnv();
    String model = Common.model("claude-haiku-4-5");
    Common.run("anthropic-java", i -> {
      MessageCreateParams params = MessageCreateParams.builder()
          .model(model)
          .maxTokens(256)
          .addUserMessage("Say hello.")
          .build();
      StringBuilder text = new StringBuilder();
      String stopReason = null;
      boolean stopped = false;
      try (StreamResponse<RawMessageStreamEvent> stream = client.messages().createStreaming(params)) {
        for (RawMessageStreamEvent ev : (Iterable<RawMessageStreamEvent>) stream.stream()::iterator) {
          if (ev.isContentBlockDelta()) {
            ev.asContentBlockDelta().delta().text().ifPresent(t -> text.append(t.text()));
          } else if (ev.isMessageDelta()) {
            var r = ev.asMessageDelta().delta().stopReason();
            if (r.isPresent()) {
              stopReason = r.get().toString();
            }
          } else if (ev.isMessageStop()) {
            stopped = true;
          }
        }
      }
      if (!stopped || stopReason == null) {
        throw new Common.IncompleteStreamException("stream ended without "
            + (stopped ? "stop_reason" : "message_stop") + " after " + text.length() + " characters");
      }
      return text.length() + " characters, stop_reason " + stopReason;
    }, client::close);
  }
}
