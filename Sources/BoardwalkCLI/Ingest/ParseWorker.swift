import Boardwalk
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What parsing one line gave.
enum ParsedLine {
    /// Spaces, tabs and `\r` only (after line 1's byte-order mark): counted, not parsed, not rejected.
    case blank
    case event(Event)
    case failure(any Error)

    /// Whether `line` holds only spaces, tabs and `\r`, after the UTF-8 byte-order mark that may open line 1 (what
    /// an editor saves for an "empty" file: it was rejected as an empty line, while blank lines are skipped).
    @inline(__always)
    static func isBlank(_ line: UnsafeRawBufferPointer, lineNumber: Int) -> Bool {
        // Called for every line read: the mark is looked for on line 1 only, byte by byte (no array per call).
        let marked = lineNumber == 1 && line.count >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF
        return line.dropFirst(marked ? 3 : 0).allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    /// Parses `line` with `parser`, catching its error.
    static func parse(
        _ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp,
        with parser: inout any LineParser
    ) -> ParsedLine {
        if isBlank(line, lineNumber: lineNumber) { return .blank }
        do {
            return .event(
                try parser.parse(line, readableAfter: readableAfter, lineNumber: lineNumber, arrival: arrival))
        } catch {
            return .failure(error)
        }
    }
}

/// A second parser on a thread of its own: for each read with enough lines, both this worker and the ingest
/// loop's thread parse the read's lines, taking ``chunk`` lines at a time from a shared counter (so the faster
/// thread parses more, and neither waits long for the other), into one table of results; the loop then takes
/// the results in line order.
///
/// Only parsing moves: everything with an effect (pending events, rejects, `--strict`, checkpoints, hand-overs
/// to the commit stage, progress) stays on the loop's thread, in line order, so the results are those of one
/// parser reading every line.
///
/// `@unchecked Sendable`: the job and the result table are handed over through two semaphores. The loop writes
/// the job before `go.signal()` and reads results only after `done.wait()`; between the two, the threads write
/// disjoint slots of the table (each slot index is handed out once by the atomic counter). The job's bytes
/// belong to the loop's read buffer, which the loop leaves alone until all its lines are parsed.
final class ParseWorker: @unchecked Sendable {
    /// Lines a thread takes at a time: enough that the counter is touched rarely, few enough that the two
    /// threads finish a read close together.
    static let chunk = 32

    private struct Job {
        var lines: [Range<Int>]
        var base: UnsafeRawPointer
        /// Bytes readable from `base` (the whole read buffer).
        var readable: Int
        var firstLine: Int
        var arrival: Timestamp
    }

    private var parser: any LineParser
    private var job: Job?
    private let next = Atomic<Int>(0)
    private var slots: UnsafeMutablePointer<ParsedLine>
    private var capacity: Int
    /// Slots parsed and not yet taken.
    private var untaken = 0..<0
    private let go = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var thread: pthread_t?

    /// Starts the worker's thread; `nil` when no thread could be made.
    init?(parser: any LineParser) {
        self.parser = parser
        capacity = 4096
        slots = .allocate(capacity: capacity)
        guard let thread = spawnThread({ [self] in self.work() }) else {
            slots.deallocate()
            return nil
        }
        self.thread = thread
    }

    /// Parses every line of `lines` (byte ranges from `base`, without their newlines) on this thread, with
    /// `parser`, and on the worker's, and returns when all are parsed; take the results with ``take(_:)``.
    /// - Parameters:
    ///   - readable: bytes readable from `base`, for the parsers' padding.
    ///   - firstLine: the line number of `lines[0]`.
    func parseAll(
        _ lines: [Range<Int>], base: UnsafeRawPointer, readable: Int, firstLine: Int, arrival: Timestamp,
        with parser: inout any LineParser
    ) {
        discardUntaken()
        if lines.count > capacity {
            slots.deallocate()
            capacity = max(lines.count, capacity * 2)
            slots = .allocate(capacity: capacity)
        }
        let job = Job(lines: lines, base: base, readable: readable, firstLine: firstLine, arrival: arrival)
        self.job = job
        next.store(0, ordering: .relaxed)  // published to the worker by `go`
        go.signal()
        share(job, with: &parser)
        done.wait()
        self.job = nil
        untaken = 0..<lines.count
    }

    /// The result of line `index` of the last ``parseAll(_:base:readable:firstLine:arrival:with:)``, moved out;
    /// lines are taken in order.
    func take(_ index: Int) -> ParsedLine {
        precondition(index == untaken.lowerBound, "results are taken in order")
        untaken = index + 1..<untaken.upperBound
        return (slots + index).move()
    }

    /// Ends the thread, drops untaken results and gives the parser back.
    func finish() -> any LineParser {
        if let thread {
            job = nil
            go.signal()
            pthread_join(thread, nil)
            self.thread = nil
        }
        discardUntaken()
        slots.deallocate()
        capacity = 0
        return parser
    }

    private func discardUntaken() {
        (slots + untaken.lowerBound).deinitialize(count: untaken.count)
        untaken = 0..<0
    }

    /// Parses chunks of the job's lines until none is left.
    private func share(_ job: Job, with parser: inout any LineParser) {
        let n = job.lines.count
        while true {
            let first = next.wrappingAdd(ParseWorker.chunk, ordering: .relaxed).oldValue
            if first >= n { return }
            for k in first..<min(n, first + ParseWorker.chunk) {
                let range = job.lines[k]
                let line = UnsafeRawBufferPointer(start: job.base + range.lowerBound, count: range.count)
                (slots + k).initialize(
                    to: ParsedLine.parse(
                        line, readableAfter: job.readable - range.upperBound, lineNumber: job.firstLine + k,
                        arrival: job.arrival, with: &parser))
            }
        }
    }

    private func work() {
        while true {
            go.wait()
            guard let job else { return }
            share(job, with: &parser)
            done.signal()
        }
    }
}

/// Starts a joinable POSIX thread running `body`; `nil` when the system has no thread to give.
///
/// The thread blocks every signal, so Ctrl-C reaches the thread that started it (the ingest loop, whose reads
/// and polls return at once with `EINTR` and look at the interrupt flag) rather than one that cannot act on it.
func spawnThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    // A new thread inherits the signal mask of the one that creates it.
    var all = sigset_t(), previous = sigset_t()
    sigfillset(&all)
    pthread_sigmask(SIG_BLOCK, &all, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    let status = pthread_create(
        &thread, nil,
        { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
    guard status == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        return nil
    }
    return thread
}
