import BoardwalkModel
internal import CSimdjson

/// Reads onboarding events from JSON lines: every shape in `docs/events.md`, detected per line.
///
/// One reader owns one simdjson parser and its buffers and reuses them for every line, so a reader is
/// not thread-safe: give each thread its own. Strings the reader hands out are owned copies; nothing
/// borrowed from the input outlives a call.
///
/// ```swift
/// let reader = try EventReader()
/// let event = try reader.read(#"{"type":"close","action_id":"x","meta":{…}}"#, arrival: now)
/// ```
public final class EventReader {
    /// The limits this reader enforces.
    public let limits: JSONReaderLimits
    let parser: OpaquePointer
    /// A padded copy of a line, for lines whose bytes are not followed by `BW_PADDING` readable bytes.
    var scratch: UnsafeMutableRawBufferPointer
    let strings = RecentStrings()
    /// Where an event is built before it is moved out.
    let slot = UnsafeMutablePointer<Event>.allocate(capacity: 1)
    let layout = EventLayout()

    /// Makes a reader.
    ///
    /// - Throws: ``JSONReadError`` (line 0) when the parser cannot be made: out of memory, or an x86-64 CPU
    ///   without AVX2, which the simdjson kernel compiled into Boardwalk needs.
    public init(limits: JSONReaderLimits = JSONReaderLimits()) throws(JSONReadError) {
        self.limits = limits
        guard
            let p = bw_parser_create(
                max(1, limits.maxLineBytes), max(1, limits.maxDepth), max(0, limits.maxStringBytes),
                max(0, limits.maxChoices))
        else {
            throw JSONReadError(
                code: .limit, line: 0, reason: "cannot create the JSON parser (out of memory, or a CPU without AVX2)")
        }
        parser = p
        scratch = .allocate(byteCount: 4096, alignment: 64)
    }

    deinit {
        bw_parser_destroy(parser)
        scratch.deallocate()
        strings.deallocate()
        slot.deallocate()
    }

    /// The simdjson kernels in use, e.g. `stage 1: icelake, On-Demand: haswell`.
    ///
    /// Stage 1 (finding the structural characters, validating UTF-8) runs the kernel libsimdjson picks for the
    /// CPU at run time; the walks over its result (the fast path and simdjson On-Demand) are compiled into
    /// Boardwalk for one kernel, `haswell` (AVX2) on x86-64.
    public var implementation: String {
        "stage 1: \(String(cString: bw_stage1_implementation_name(parser))), On-Demand: \(String(cString: bw_implementation_name(parser)))"
    }

    /// The unit of a time given as a number; `nil` (the default) tells it by the number's size and rejects a number
    /// whose size could be more than one unit (see ``EpochUnit``). With a unit, every number in the years 1970
    /// through 9999 in that unit is read as it.
    public var timeUnit: EpochUnit? = nil

    /// Whether lines are tried on the fast path first (the default). Off, every line is walked with simdjson
    /// On-Demand, which gives the same results; for tests that compare the two.
    var fastPath = true {
        didSet { bw_parser_set_fast_path(parser, fastPath ? 1 : 0) }
    }

    /// Lines parsed by the fast path and by On-Demand so far.
    var pathCounts: (fast: Int, slow: Int) {
        var fast: UInt64 = 0, slow: UInt64 = 0
        bw_parser_path_counts(parser, &fast, &slow)
        return (Int(fast), Int(slow))
    }

    /// Reads one line (without its newline).
    ///
    /// - Parameters:
    ///   - line: the line's bytes. A trailing `\r` is ignored.
    ///   - lineNumber: the 1-based line number errors report. A UTF-8 byte-order mark is skipped at the
    ///     start of line 1 only.
    ///   - arrival: the time to stamp when the line carries none.
    /// - Throws: ``JSONReadError`` saying where and why the line was rejected.
    /// - Complexity: O(line length). Copies the line once into a padded buffer; ``readLines(in:firstLine:arrival:isFinal:_:)``
    ///   avoids that copy for lines inside a larger buffer.
    public func read(line: UnsafeRawBufferPointer, lineNumber: Int = 1, arrival: Timestamp) throws(JSONReadError)
        -> Event
    {
        try readLine(line, readableAfter: 0, lineNumber: lineNumber, arrival: arrival)
    }

    /// Reads one line that lies inside a larger buffer, parsing it in place.
    ///
    /// The same as ``read(line:lineNumber:arrival:)``, except that when at least 64 (`BW_PADDING`) readable bytes
    /// follow the line (of any content: the rest of the buffer), the line is parsed where it is instead of being
    /// copied into a padded buffer first.
    ///
    /// On some malformed lines simdjson's On-Demand reads the byte right after the line, and which error it reports
    /// (not whether there is one) can depend on that byte; in a file read in place it is the line's newline, as
    /// the copying overloads make it.
    ///
    /// - Parameters:
    ///   - readableAfter: how many bytes after `line` may be read (not changed; only the first can change which
    ///     error a malformed line gets).
    /// - Complexity: O(line length), without a copy of the line when `readableAfter >= 64`.
    public func read(
        line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int = 1, arrival: Timestamp
    ) throws(JSONReadError) -> Event {
        try readLine(line, readableAfter: max(0, readableAfter), lineNumber: lineNumber, arrival: arrival)
    }

    /// Reads one line given as a `String`; see ``read(line:lineNumber:arrival:)``.
    public func read(_ line: String, lineNumber: Int = 1, arrival: Timestamp) throws(JSONReadError) -> Event {
        var line = line
        let result: Result<Event, JSONReadError> = line.withUTF8 { bytes in
            do throws(JSONReadError) {
                return .success(
                    try readLine(
                        UnsafeRawBufferPointer(bytes), readableAfter: 0, lineNumber: lineNumber, arrival: arrival))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads a line whose bytes are followed by `readableAfter` more readable bytes (of any content).
    func readLine(_ raw: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp)
        throws(JSONReadError) -> Event
    {
        guard var base = raw.baseAddress else {
            throw JSONReadError(code: .emptyLine, line: lineNumber, reason: "empty line")
        }
        var count = raw.count
        var after = readableAfter
        var shift = 0
        if count > 0, base.load(fromByteOffset: count - 1, as: UInt8.self) == 0x0D {
            count -= 1
            after += 1
        }
        if count >= 3, base.load(as: UInt8.self) == 0xEF, base.load(fromByteOffset: 1, as: UInt8.self) == 0xBB,
            base.load(fromByteOffset: 2, as: UInt8.self) == 0xBF
        {
            guard lineNumber == 1 else {
                throw JSONReadError(
                    code: .syntax, line: lineNumber, column: 1,
                    reason: "a byte-order mark is allowed only at the start of line 1")
            }
            base += 3
            count -= 3
            shift = 3
        }
        if count > limits.maxLineBytes {
            throw JSONReadError(
                code: .limit, line: lineNumber,
                reason: "line is \(count) bytes long; the limit is \(limits.maxLineBytes)")
        }
        var blank = true
        for i in 0..<count {
            let c = base.load(fromByteOffset: i, as: UInt8.self)
            if c != 0x20 && c != 0x09 { blank = false; break }
        }
        if blank { throw JSONReadError(code: .emptyLine, line: lineNumber, reason: "empty line") }
        let status: bw_status
        if after >= Int(BW_PADDING) {
            status = bw_parse(parser, base.assumingMemoryBound(to: UInt8.self), count, count + after)
        } else {
            let needed = count + Int(BW_PADDING)
            if scratch.count < needed {
                scratch.deallocate()
                scratch = .allocate(byteCount: max(needed, scratch.count * 2), alignment: 64)
            }
            scratch.baseAddress!.copyMemory(from: base, byteCount: count)
            // The byte after the line is a newline, as it is in a file read in place: simdjson's On-Demand reads
            // the byte at the line's end on some malformed lines, and which error it reports depends on it (a
            // stale `}` there from a longer earlier line turned "invalid JSON" into "unexpected content after the
            // object"; the full test suite saw the two readers of a comparison disagree that way once).
            scratch.storeBytes(of: 0x0A, toByteOffset: count, as: UInt8.self)
            status = bw_parse(parser, scratch.baseAddress!.assumingMemoryBound(to: UInt8.self), count, scratch.count)
        }
        let view = LineView(
            status: status, slots: bw_slots(parser), choices: bw_choices(parser), line: lineNumber, shift: shift,
            limits: limits, layout: layout)
        if status.error != Int32(BW_OK.rawValue) {
            throw view.parseError(bytes: UnsafeRawBufferPointer(start: base, count: count))
        }
        try view.event(arrival: arrival, timeUnit: timeUnit, strings: strings, into: slot)
        return slot.move()
    }
}
