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
    /// Whether an input's first line is a header (CSV) rather than an event: it is handed to ``readHeader(_:input:)``,
    /// and a resumed input's header is read again from the file's start. Its lines are records that a quoted field may
    /// continue over line breaks (``CSVRecord/end(in:from:to:)``).
    var hasHeader: Bool { get }
    /// Takes an input's header line.
    /// - Throws: an error that stops the run: the input is not what the parser reads.
    mutating func readHeader(_ line: UnsafeRawBufferPointer, input: String) throws
}

extension LineParser {
    var hasHeader: Bool { false }
    mutating func readHeader(_ line: UnsafeRawBufferPointer, input: String) throws {}
}
