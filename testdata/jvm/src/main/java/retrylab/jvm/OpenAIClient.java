package retrylab.jvm;

import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;

/**
 * The official OpenAI Java SDK (com.openai:openai-java, pinned in pom.xml),
 * unchanged and with its defaults, as a retrylab external client:
 * OpenAIOkHttpClient.fromEnv() reads OPENAI_BASE_URL and OPENAI_API_KEY from
 * the environment the harness sets, and the SDK retries with its own loop
 * (RetryingHttpClient: 2 retries, 0.5s × 2^n up to 8s minus up to 25%,
 * Retry-After / retry-after-ms, x-should-retry). Each request streams
 * (chat().completions().createStreaming) and is read to its end. See
 * docs/sdk-clients.md.
 */
public final class OpenAIClient {
  private OpenAIClient() {}

  public static void main(String[] args) {
    com.openai.client.OpenAIClient client = OpenAIOkHttpClient.fromEnv();
    String model = Common.model("gpt-4o-mini");
    Common.run("openai-java", i -> {
      ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
          .model(model)
          .addUserMessage("Say hello.")
          .build();
      StringBuilder text = new StringBuilder();
      String finish = null;
      try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
        for (ChatCompletionChunk chunk : (Iterable<ChatCompletionChunk>) stream.stream()::iterator) {
          for (ChatCompletionChunk.Choice c : chunk.choices()) {
            c.delta().content().ifPresent(text::append);
            if (c.finishReason().isPresent()) {
              finish = c.finishReason().get().toString();
            }
          }
        }
      }
      if (finish == null) {
        throw new Common.IncompleteStreamException("stream ended without finish_reason after " + text.length() + " characters");
      }
      return text.length() + " characters, finish_reason " + finish;
    }, client::close);
  }
}
