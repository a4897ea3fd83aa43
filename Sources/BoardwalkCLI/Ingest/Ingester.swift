import Boardwalk

#if canImport(Glibc)
    import Glibc
#endif

/// The ingest loop: reads inputs, parses lines, commits batches with their checkpoints, writes rejects.
///
/// Three threads per input when pipelined: the caller's thread reads and finds lines; it and a ``ParseWorker``
/// thread parse each read's lines together; then the caller's thread does everything with an effect, in line
/// order (pending events, rejects, `--strict`, checkpoints, progress); a ``CommitStage`` thread appends each
/// finished batch (with its checkpoint) while the next one is parsed.
/// An input's stage is drained before the next input starts, so its checkpoint is read after everything
/// before it is committed.
///
/// Exactly-once: events with a time of their own are de-duplicated by the store. For a regular file, every batch is
/// committed together with a checkpoint (the file's byte offset after the batch's last line, its line number,
/// and fingerprints of the file's first bytes and of the bytes just before that offset, as this run read them:
/// see ``ConsumedBytes``), so a re-run after a crash or Ctrl-C resumes after the last committed batch and never
/// ingests a line twice, with or without event ids; a file whose fingerprinted bytes changed is read from its
/// start. Standard input has no checkpoint (it cannot be re-read), even when it is a file; only the store's
/// duplicate rules protect it.
final class Ingester {
    struct Options {
        var strict = false
        /// Events per transaction.
        var batchSize = 10_000
        /// How long a pipe may stay quiet before the events held so far are committed.
        var idleCommitMilliseconds: Int32 = 200
        /// Commit on a thread of its own while the next batch is parsed; `false` commits on the caller's
        /// thread between batches (the sequential path).
        var pipelined = true
        /// Batches queued or being committed at once (see ``CommitStage``).
        var batchesInFlight = 2
        /// The read buffer's first size (it doubles for a longer line); small in tests, so that lines and
        /// checkpoint windows straddle reads.
        var readBufferBytes = 1 << 21
        /// The parser's line limit (``JSONReaderLimits/maxLineBytes``): a line that grows past it (a few bytes
        /// of slack for a byte-order mark and a carriage return) is rejected without being held in memory.
        var maxLineBytes = JSONReaderLimits().maxLineBytes
    }

    let sink: IngestSink
    var parser: LineParser
    /// A second parser for a ``ParseWorker`` thread (pipelined runs only); `nil` parses on one thread.
    private var workerParser: LineParser?
    let options: Options
    let rejects: RejectsWriter
    var progress: Progress?
    /// The bytes of every input of the run together, when all have a size: the progress line's total. Its byte
    /// count, like its event count, is the run's so far, across inputs.
    var totalBytes: Int? = nil
    /// Bytes read of the inputs before the current one (where each ended), for the progress line.
    private var bytesBefore = 0
    private(set) var summary = IngestSummary()
    /// The largest read buffer this ingester has used: at most about twice the longer of
    /// ``Options/readBufferBytes`` and ``Options/maxLineBytes``, whatever the lines.
    private(set) var largestReadBuffer = 0
    /// Set by a SIGINT handler: stop after the current batch is committed.
    var shouldStop: () -> Bool = { false }

    /// - Parameter workerParser: a second parser, so that two threads parse each read's lines (with
    ///   `options.pipelined`); without one, lines are parsed on the caller's thread only.
    init(
        sink: IngestSink, parser: LineParser, workerParser: LineParser? = nil, options: Options, rejects: RejectsWriter,
        progress: Progress?
    ) {
        self.sink = sink
        self.parser = parser
        self.workerParser = options.pipelined ? workerParser : nil
        self.options = options
        self.rejects = rejects
        self.progress = progress
    }

    /// A line that `--strict` stopped at.
    struct StrictStop: Error, CustomStringConvertible {
        var input: String
        var message: String
        var description: String { "\(input): \(message) (--strict: nothing of this batch was committed)" }
    }

    /// Ingests one input to its end (or until ``shouldStop``).
    ///
    /// Returns (or throws) only once every batch handed to the commit stage is committed. When both stages
    /// fail, the commit stage's error wins: its batch came first in the input, and the sequential loop would
    /// have stopped there.
    func ingest(_ input: InputFile) throws {
        summary.inputs += 1
        input.interrupted = shouldStop
        defer { bytesBefore += input.fileOffset }
        let stage = CommitStage(sink: sink, threaded: options.pipelined, capacity: options.batchesInFlight)
        var parseFailure: (any Error)? = nil
        do {
            if input.isRegularFile, input.prefix(BatchFormat.magic.count) == BatchFormat.magic {
                try ingestBatchFile(input, stage: stage)
            } else {
                try ingestLines(input, stage: stage)
            }
        } catch {
            parseFailure = error
        }
        let outcome = stage.finish()
        summary.ingested += outcome.inserted
        summary.duplicates += outcome.duplicates
        handedOver = 0
        if var moved = outcome.failure as? CheckpointMoved {
            moved.input = input.name
            moved.isBatchFile = ingestingBatchFile
            throw moved
        }
        if let failure = outcome.failure ?? parseFailure { throw failure }
    }

    /// Whether the input being ingested is a batch file (for ``CheckpointMoved``'s message).
    private var ingestingBatchFile = false

    /// Events of the current input handed to the commit stage (for progress: they are not counted in
    /// ``summary`` until the stage reports).
    private var handedOver = 0

    private func handOver(_ events: [Event], checkpoint: BatchCheckpoint?, to stage: CommitStage) throws {
        handedOver += events.count
        try stage.submit(PendingBatch(events: events, checkpoint: checkpoint))
    }

    // MARK: NDJSON

    /// The checkpoint key of a regular file: its device and inode, so a renamed file keeps its checkpoint;
    /// the fingerprint in the value tells a different file that reuses the inode.
    private func checkpointKey(_ input: InputFile) -> String? {
        guard input.isRegularFile, let id = input.identity else { return nil }
        return "ingest:\(id.device):\(id.inode)"
    }

    private func ingestLines(_ input: InputFile, stage: CommitStage) throws {
        ingestingBatchFile = false
        let key = checkpointKey(input)
        var lineNumber = 0
        // What the store holds under the key, which the next batch replaces (whether or not it applies to the
        // file as it is now).
        var committed = try key.flatMap { try sink.checkpoint(for: $0) }
        // Resumed right after a last line that had no newline (stored as a line): the bytes up to the next newline
        // belong to that line, already counted, not to a new one (else every later line number is one too high).
        var continuingLine = false
        // CSV: records (a quoted field may hold line breaks), the first of them the header.
        let records = parser.hasHeader
        // The bytes the checkpoints of this run fingerprint, as read (never read again at commit time: the file
        // may have been rewritten since).
        var consumed = ConsumedBytes()
        if let saved = committed, let cp = FileCheckpoint(saved) {
            // Read once, checked, and kept: resuming, these are the bytes before the offset that this run consumed.
            let window = min(cp.offset, FileCheckpoint.fingerprintBytes)
            let head = input.prefix(window)
            let before = input.bytes(in: (cp.offset - window)..<cp.offset)
            if cp.fits(size: input.size ?? 0, head: head, before: before) {
                if records && cp.line > 0 { try readHeaderAgain(input) }
                try input.seek(to: cp.offset)
                lineNumber = cp.line
                summary.resumedLines += cp.line
                continuingLine = before.last.map { $0 != 0x0A } == true
                consumed = ConsumedBytes(offset: cp.offset, head: head, before: before)
            } else if cp.line > 0 || cp.offset > 0 {
                // Not the bytes an earlier run read: everything is read again, and event ids keep what that run
                // stored from being stored twice.
                summary.restarted.append(.init(input: input.name, line: cp.line, isBatchFile: false))
            }
        }
        // Zeroed once: the parser may read past a line into the rest of the buffer (never past its end).
        var storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(64, options.readBufferBytes), alignment: 64)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        defer { storage.deallocate() }  // reads `storage` at exit, after any growth
        largestReadBuffer = max(largestReadBuffer, storage.count)
        let worker = workerParser.flatMap { ParseWorker(parser: $0) }
        // A local copy: called through the stored property, every line paid a dynamic exclusivity check.
        var parser = self.parser
        defer { self.parser = parser }
        // Ends the worker's thread (dropping results an early exit left untaken) and keeps its parser for the
        // next input.
        defer {
            if let worker { workerParser = worker.finish() }
        }
        var lines: [Range<Int>] = []
        var carried = 0  // bytes of an unfinished line kept at the start of the buffer
        // A line past the parser's limit: its bytes are dropped as they are read, not kept until its newline (a
        // 300 MB line once took 800 MB of buffer), and it is rejected when its end is found.
        var overLong: OverLongLine? = nil
        var pending: [Event] = []
        pending.reserveCapacity(options.batchSize)
        var handedOffset = input.offset
        var pendingOffset = input.offset

        func commit() throws {
            guard !pending.isEmpty || pendingOffset != handedOffset else { return }
            // The fingerprints cover bytes before the checkpoint only, so a log that grows keeps its checkpoint
            // while a file replaced by another, or rewritten with different lines before that point, does not.
            // They are of the bytes whose lines this batch holds: the buffer holds the file from
            // `consumed.bufferStart` to `input.offset`.
            let checkpoint = key.map {
                let buffer = UnsafeRawBufferPointer(rebasing: storage[0..<(input.offset - consumed.bufferStart)])
                let value = consumed.checkpoint(offset: pendingOffset, line: lineNumber, buffer: buffer).bytes
                return BatchCheckpoint(key: $0, value: value, expected: committed)
            }
            // Batches commit in order, each only if the one before did: the next one replaces this one's value.
            if let checkpoint { committed = checkpoint.value }
            // The batch moves to the commit stage; a fresh buffer of the same capacity takes its place.
            let batch = pending
            pending = []
            pending.reserveCapacity(options.batchSize)
            try handOver(batch, checkpoint: checkpoint, to: stage)
            handedOffset = pendingOffset
        }

        // Line `lineNumber` rejected: listed, then the run stops (--strict) or goes on.
        func reject(_ error: any Error, text: UnsafeRawBufferPointer, unfinished: Bool) throws {
            var reason = "\(error)"
            if unfinished { reason += " (the file's last line, without a newline: the next run reads it again)" }
            summary.rejected += 1
            try rejects.reject(input: input.name, line: lineNumber, reason: reason, text: text)
            if options.strict {
                pending.removeAll()
                throw StrictStop(input: input.name, message: reason)
            }
        }

        while true {
            if !pending.isEmpty, !input.waitForInput(milliseconds: options.idleCommitMilliseconds) {
                try commit()
            }
            if carried == storage.count {
                // One line longer than the buffer: grow (the reader's own limit rejects absurd lines).
                let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: storage.count * 2, alignment: 64)
                bigger.initializeMemory(as: UInt8.self, repeating: 0)
                bigger.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[0..<carried]))
                storage.deallocate()
                storage = bigger
                largestReadBuffer = max(largestReadBuffer, storage.count)
            }
            let n = try input.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[carried...]))
            if !input.isRegularFile, input.offset == n, n >= BatchFormat.magic.count,
                Array(UnsafeRawBufferPointer(rebasing: storage[0..<BatchFormat.magic.count])) == BatchFormat.magic
            {
                // A batch file on standard input: its first read shows the magic bytes.
                try ingestBatchFile(input, head: Array(UnsafeRawBufferPointer(rebasing: storage[0..<n])), stage: stage)
                return
            }
            summary.bytes += n
            let end = carried + n
            if key != nil {
                consumed.didRead(UnsafeRawBufferPointer(rebasing: storage[carried..<end]), endingAt: input.offset)
            }
            let atEOF = n == 0
            let base = storage.baseAddress!
            var start = 0
            if var long = overLong {
                // Still in a line past the limit: look for its end in this read.
                let newline = memchr(base, 0x0A, end).map { base.distance(to: $0) }
                let read = newline ?? end
                long.bytes += read
                let shown = RejectsWriter.shownBytes + 1
                if long.prefix.count < shown {
                    long.prefix.append(
                        contentsOf: UnsafeRawBufferPointer(rebasing: storage[0..<min(read, shown - long.prefix.count)]))
                }
                if newline == nil && !atEOF {
                    if key != nil { consumed.drop(UnsafeRawBufferPointer(rebasing: storage[0..<end])) }
                    overLong = long
                    if shouldStop() {  // Ctrl-C inside the line: what came before it was handed over at its start
                        try commit()
                        return
                    }
                    continue
                }
                overLong = nil
                if long.isContinuation {
                    continuingLine = false  // the rest of a line an earlier run stored: not a line of its own
                } else {
                    lineNumber += 1
                    summary.lines += 1
                    // As the parser says it of a line it holds (a file's unterminated last line is read again by
                    // the next run, as any rejected one).
                    let unfinished = newline == nil && input.isRegularFile
                    let error = JSONReadError(
                        code: .limit, line: lineNumber,
                        reason: "line is \(long.bytes) bytes long; the limit is \(options.maxLineBytes)")
                    try long.prefix.withUnsafeBytes { try reject(error, text: $0, unfinished: unfinished) }
                    if unfinished {
                        lineNumber -= 1
                        summary.unfinishedLines += 1
                        break
                    }
                }
                if let newline {
                    start = newline + 1
                    pendingOffset = input.offset - (end - start)
                } else {
                    break  // the input ended inside it
                }
            }
            // The complete lines of this read (and at the end of the input, an unterminated last one).
            lines.removeAll(keepingCapacity: true)
            while start < end {
                // memchr is vectorized. A CSV record ends at a line feed outside quotes.
                let newline: Int
                if records {
                    if let p = CSVRecord.end(in: base, from: start, to: end) {
                        newline = p
                    } else if atEOF {
                        newline = end
                    } else {
                        break
                    }
                } else if let p = memchr(base + start, 0x0A, end - start) {
                    newline = base.distance(to: p)
                } else if atEOF {
                    newline = end
                } else {
                    break
                }
                lines.append(start..<newline)
                start = newline + 1
            }
            if continuingLine, let first = lines.first, first.lowerBound == 0 {
                lines.removeFirst()
                continuingLine = false
            }
            let arrival = Query.wallClock()  // lines without a time get the time of the read that brought them
            let readable = storage.count  // the parser may read past a line up to the buffer's end
            // With a worker, both threads parse this read's lines first; this thread then takes the results in
            // line order, as if it had parsed each line itself.
            var parsedAhead = 0
            if let worker, lines.count >= Ingester.minimumLinesToSplit {
                worker.parseAll(
                    lines, base: base, readable: readable, firstLine: lineNumber + 1, arrival: arrival,
                    with: &parser)
                parsedAhead = lines.count
            }
            for k in lines.indices {
                let range = lines[k]
                lineNumber += 1
                summary.lines += 1
                let line = UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
                // A file's last line without a newline is a line like any other (as the same bytes from a pipe
                // are): stored when it parses, rejected when it does not. A writer may still be finishing it, so
                // a rejected one is not skipped past: the checkpoint stays before it, and the next run reads it
                // again (whole, once the writer is done).
                let unfinished = atEOF && range.upperBound == end && input.isRegularFile
                var leftForLater = false
                // A rejected line: listed, then the run stops (--strict) or goes on.
                func failed(_ error: any Error) throws {
                    if unfinished { leftForLater = true }
                    try reject(error, text: line, unfinished: unfinished)
                }
                if k < parsedAhead {
                    switch worker!.take(k) {  // moved out of the table, without a copy
                    case .blank: break
                    case .event(let event): pending.append(event)
                    case .failure(let error): try failed(error)
                    }
                } else if !ParsedLine.isBlank(line, lineNumber: lineNumber) {
                    if lineNumber == 1 {
                        if records {
                            try parser.readHeader(line, input: input.name)
                            pendingOffset = input.offset - (end - min(end, range.upperBound + 1))
                            continue
                        }
                        // A CSV given as NDJSON: one hint, rather than every line rejected as invalid JSON.
                        if Ingester.looksLikeCSVHeader(line) { throw RuntimeError(csvHint(input, line)) }
                    }
                    // Parsed here and appended directly: no `ParsedLine` between, no copy of the event.
                    do {
                        pending.append(
                            try parser.parse(
                                line, readableAfter: readable - range.upperBound, lineNumber: lineNumber,
                                arrival: arrival))
                    } catch {
                        try failed(error)
                    }
                }
                if leftForLater {
                    lineNumber -= 1  // the checkpoint's line count stays before it, as its offset does
                    summary.unfinishedLines += 1
                    break
                }
                pendingOffset = input.offset - (end - min(end, range.upperBound + 1))
                if pending.count >= options.batchSize {
                    try commit()
                    if shouldStop() { return }
                }
                progress?.update(
                    events: summary.ingested + handedOver + pending.count, bytes: bytesBefore + input.fileOffset,
                    total: totalBytes)
            }
            if atEOF { break }
            // Keep the unfinished line for the next read.
            carried = end - start
            if key != nil { consumed.drop(UnsafeRawBufferPointer(rebasing: storage[0..<start])) }
            if start > 0, carried > 0 {
                (base).copyMemory(from: UnsafeRawPointer(base + start), byteCount: carried)
            }
            if carried > options.maxLineBytes + 4 {
                // Past the limit: the parser would reject it. Commit what is pending first, while the bytes its
                // checkpoint fingerprints are still in the buffer; then drop the line's bytes as they come.
                try commit()
                overLong = OverLongLine(
                    bytes: carried,
                    prefix: Array(
                        UnsafeRawBufferPointer(rebasing: storage[0..<min(carried, RejectsWriter.shownBytes + 1)])),
                    isContinuation: continuingLine)
                if key != nil { consumed.drop(UnsafeRawBufferPointer(rebasing: storage[0..<carried])) }
                carried = 0
            }
            if shouldStop() {
                try commit()
                return
            }
        }
        try commit()
    }

    /// Reads a resumed CSV file's header from its start again: the records after the checkpoint are read by it.
    private func readHeaderAgain(_ input: InputFile) throws {
        let head = input.prefix(options.maxLineBytes + 4)
        try head.withUnsafeBytes { bytes in
            let end = CSVRecord.end(in: bytes.baseAddress!, from: 0, to: bytes.count) ?? bytes.count
            try parser.readHeader(UnsafeRawBufferPointer(rebasing: bytes[0..<end]), input: input.name)
        }
    }

    /// Whether an NDJSON input's first line is a CSV header instead: not a JSON object, and two or more
    /// comma-separated names (letters, digits, `_`, spaces, quotes), as `export --format csv` and spreadsheets write.
    static func looksLikeCSVHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        var bytes = line[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        while let b = bytes.first, b == 0x20 || b == 0x09 { bytes = bytes.dropFirst() }
        while let b = bytes.last, b == 0x0D || b == 0x20 || b == 0x09 { bytes = bytes.dropLast() }
        guard let first = bytes.first, first != UInt8(ascii: "{"), first != UInt8(ascii: "[") else { return false }
        let names = bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard names.count >= 2 else { return false }
        return names.allSatisfy { name in
            !name.isEmpty
                && name.allSatisfy {
                    ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == UInt8(ascii: "_")
                        || $0 == 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "-")
                }
        }
    }

    /// The error for a CSV read as NDJSON: what its first line is, and the option to read it with.
    private func csvHint(_ input: InputFile, _ line: UnsafeRawBufferPointer) -> String {
        let text = String(decoding: line.prefix(60), as: UTF8.self)
        return "'\(input.name)' is CSV, not NDJSON: its first line is a header (\(text)\(line.count > 60 ? "…" : "")); "
            + "ingest it with --format csv (which reads what 'boardwalk export --format csv' writes)"
    }

    /// A line longer than ``Options/maxLineBytes`` whose end has not been read yet.
    struct OverLongLine {
        /// Its bytes read so far.
        var bytes: Int
        /// Its first bytes, for the rejects file (which shows ``RejectsWriter/shownBytes`` of a line).
        var prefix: [UInt8]
        /// The rest of a line an earlier run stored (resumed after it without its newline): skipped, not rejected.
        var isContinuation: Bool
    }

    /// Reads with fewer complete lines than this are parsed on one thread: a hand-over costs more than it saves.
    static let minimumLinesToSplit = 64

    // MARK: Batch files

    /// - Parameter head: bytes already read from the start of a stream (standard input).
    private func ingestBatchFile(_ input: InputFile, head: [UInt8] = [], stage: CommitStage) throws {
        ingestingBatchFile = true
        let key = checkpointKey(input)
        var skip = 0
        var committed = try key.flatMap { try sink.checkpoint(for: $0) }
        // For batch files, `line` counts events, and `offset` is the file's size (0 in the older 24-byte checkpoints,
        // which have no tail fingerprint): the file is whole, so its last bytes are checked too.
        if let saved = committed, let cp = FileCheckpoint(saved) {
            if cp.fits(input, batchFile: true) {
                skip = cp.line
            } else if cp.line > 0 {
                summary.restarted.append(.init(input: input.name, line: cp.line, isBatchFile: true))
            }
        }
        var bytes: [UInt8] = head
        if let size = input.size { bytes.reserveCapacity(size) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let n = try input.read(into: chunk)
            if n == 0 { break }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
        }
        summary.bytes += bytes.count
        let fingerprint = FileCheckpoint.fingerprint(bytes.prefix(FileCheckpoint.fingerprintBytes))
        let tail = FileCheckpoint.fingerprint(bytes.suffix(FileCheckpoint.fingerprintBytes))
        let events: [Event]
        do {
            events = try BatchReader.events(in: bytes)
        } catch {
            throw RuntimeError("\(input.name): not a valid batch file: \(error)")
        }
        summary.resumedEvents += min(skip, events.count)
        var index = min(skip, events.count)
        while index < events.count {
            let end = min(events.count, index + options.batchSize)
            let checkpoint = key.map {
                BatchCheckpoint(
                    key: $0,
                    value: FileCheckpoint(offset: bytes.count, line: end, fingerprint: fingerprint, tail: tail).bytes,
                    expected: committed)
            }
            if let checkpoint { committed = checkpoint.value }
            try handOver(Array(events[index..<end]), checkpoint: checkpoint, to: stage)
            index = end
            progress?.update(
                events: summary.ingested + handedOver, bytes: bytesBefore + input.fileOffset, total: totalBytes)
            if shouldStop() { return }
        }
    }
}
