import Boardwalk

/// Turns one NDJSON line into an event.
protocol LineParser {
    /// - Parameters:
    ///   - line: the line's bytes, without its newline.
    ///   - readableAfter: how many bytes after the line may be read (the rest of the read buffer), so a parser
    ///     that needs padding can parse in place.
    ///   - lineNumber: 1-based, for the error.
    ///   - arrival: the time for a line that carries none.
    /// - Throws: an error whose description says where and why (it starts with `line N`).
    mutating func parse(_ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp) throws
        -> Event
}
