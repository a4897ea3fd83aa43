import BoardwalkModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension EventReader {
    /// Reads every newline-terminated line of `buffer` (and, when `isFinal`, the unterminated rest), calling
    /// `body` with each line's number and its event or error, in order.
    ///
    /// Lines are parsed in place: only a line that ends within `BW_PADDING` (64) bytes of the buffer's end is
    /// copied, into the reader's padded scratch buffer.
    ///
    /// - Parameters:
    ///   - buffer: NDJSON bytes, e.g. a chunk of a file.
    ///   - firstLine: the number of the buffer's first line (1 for the start of a stream).
    ///   - arrival: the time stamped on events whose line carries none.
    ///   - isFinal: whether the buffer ends the stream; if not, an unterminated last line is left unread.
    ///   - body: called once per line.
    /// - Returns: the bytes consumed (through the last newline, or all of them when `isFinal`) and the number of
    ///   lines read. Hand the unconsumed rest back with the next chunk (``NDJSONStream`` does this).
    /// - Complexity: O(buffer length).
    @discardableResult
    public func readLines(
        in buffer: UnsafeRawBufferPointer, firstLine: Int = 1, arrival: Timestamp, isFinal: Bool = true,
        _ body: (_ line: Int, _ result: Result<Event, JSONReadError>) throws -> Void
    ) rethrows -> (consumed: Int, lines: Int) {
        guard let base = buffer.baseAddress else { return (0, 0) }
        let n = buffer.count
        var start = 0
        var line = firstLine
        while start < n {
            let end: Int
            if let p = memchr(base + start, 0x0A, n - start) {
                end = base.distance(to: UnsafeRawPointer(p))
            } else {
                guard isFinal else { break }
                end = n
            }
            let result: Result<Event, JSONReadError>
            do throws(JSONReadError) {
                result = .success(
                    try readLine(
                        UnsafeRawBufferPointer(start: base + start, count: end - start), readableAfter: n - end,
                        lineNumber: line, arrival: arrival))
            } catch {
                result = .failure(error)
            }
            try body(line, result)
            line += 1
            start = end + 1
        }
        return (min(start, n), line - firstLine)
    }
}

/// Feeds NDJSON to an ``EventReader`` in chunks of any size (file reads, stdin), keeping the line that
/// straddles two chunks and counting lines across them.
///
/// ```swift
/// let stream = NDJSONStream(reader: try EventReader())
/// while let chunk = read() { chunk.withUnsafeBytes { stream.feed($0, arrival: now) { line, result in … } } }
/// stream.finish(arrival: now) { line, result in … }
/// ```
public final class NDJSONStream {
    /// The reader that parses each line.
    public let reader: EventReader
    /// Lines read so far.
    public private(set) var linesRead = 0
    private var carry: [UInt8] = []

    /// A stream that parses its lines with `reader`.
    public init(reader: EventReader) { self.reader = reader }

    /// Reads the complete lines of `chunk` (with any partial line left from the previous chunk).
    /// - Complexity: O(chunk length); only the line that straddles chunks is copied.
    public func feed(
        _ chunk: UnsafeRawBufferPointer, arrival: Timestamp,
        _ body: (_ line: Int, _ result: Result<Event, JSONReadError>) throws -> Void
    ) rethrows {
        var rest = chunk
        if !carry.isEmpty {
            guard let base = chunk.baseAddress, let p = memchr(base, 0x0A, chunk.count) else {
                carry.append(contentsOf: chunk)
                return
            }
            let end = base.distance(to: UnsafeRawPointer(p))
            carry.append(contentsOf: UnsafeRawBufferPointer(start: base, count: end + 1))
            try readCarry(arrival: arrival, body)
            rest = UnsafeRawBufferPointer(rebasing: chunk[(end + 1)...])
        }
        let (consumed, lines) = try reader.readLines(
            in: rest, firstLine: linesRead + 1, arrival: arrival, isFinal: false, body)
        linesRead += lines
        if consumed < rest.count { carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[consumed...])) }
    }

    /// Reads the last line if the input did not end with a newline.
    public func finish(arrival: Timestamp, _ body: (_ line: Int, _ result: Result<Event, JSONReadError>) throws -> Void)
        rethrows
    {
        if !carry.isEmpty { try readCarry(arrival: arrival, body) }
    }

    private func readCarry(
        arrival: Timestamp, _ body: (_ line: Int, _ result: Result<Event, JSONReadError>) throws -> Void
    ) rethrows {
        let bytes = carry
        carry.removeAll(keepingCapacity: true)
        let lines = try bytes.withUnsafeBytes { buffer in
            try reader.readLines(in: buffer, firstLine: linesRead + 1, arrival: arrival, isFinal: true, body).lines
        }
        linesRead += lines
    }
}
