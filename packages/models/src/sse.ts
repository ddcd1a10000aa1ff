import { ModelError } from "@strata/engine";

/**
 * A streaming reader of Server-Sent Events as chat-completion servers send them: `data:` lines,
 * blank-line separated, `[DONE]` at the end. Bounded: a line longer than `maxLine` is an error.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, maxLine = 8 * 1024 * 1024): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    if (buffer.length > maxLine && buffer.indexOf("\n") < 0)
      throw new ModelError("protocol", `a server-sent line is longer than ${maxLine} bytes`, { retryable: false });
    let nl = buffer.indexOf("\n");
    while (nl >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      if (line === "") {
        if (data.length > 0) yield data.join("\n");
        data = [];
      } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      nl = buffer.indexOf("\n");
    }
  }
  buffer += decoder.decode();
  buffer = buffer.replace(/\r$/, "");
  if (buffer.startsWith("data:")) data.push(buffer.slice(5).replace(/^ /, ""));
  if (data.length > 0) yield data.join("\n");
}
