/**
 * Splits a byte stream into lines (watch streams are JSON lines, logs are text lines), across
 * chunk boundaries and multi-byte characters.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder();
  private buffer = '';

  /** The complete lines `chunk` finishes (without their newline). */
  push(chunk: Uint8Array): string[] {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    const parts = this.buffer.split('\n');
    this.buffer = parts.pop() ?? '';
    return parts;
  }

  /** What is left after the stream's last newline ('' for nothing). */
  end(): string {
    const rest = this.buffer + this.decoder.decode();
    this.buffer = '';
    return rest;
  }
}
