#if canImport(Glibc)
import Glibc
#endif
import Boardwalk
import Dispatch

/// What parsing one line gave.
enum ParsedLine {
    /// Spaces, tabs and `\r` only: counted, not parsed, not rejected.
    case blank
    case event(Event)
    case failure(any Error)

    /// Whether `line` holds only spaces, tabs and `\r`.
    @inline(__always)
    static func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    /// Parses `line` with `parser`, catching its error.
    static func parse(
        _ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp, with parser: inout any LineParser
    ) -> ParsedLine {
        if isBlank(line) { return .blank }
        do {
            return .event(try parser.parse(line, readableAfter: readableAfter, lineNumber: lineNumber, arrival: arrival))
        } catch {
            return .failure(error)
        }
    }
}

/// A second parser on a thread of its own: the ingest loop hands it the later part of each read's lines and
/// parses the earlier part itself, then takes the helper's results in line order.
///
/// Only parsing moves: everything with an effect (pending events, rejects, `--strict`, checkpoints, hand-overs
/// to the commit stage, progress) stays on the loop's thread, in line order, so the results are those of one
/// parser reading every line.
///
/// `@unchecked Sendable`: the fields are handed back and forth through two semaphores. The loop writes the job
/// before `go.signal()` and reads the results only after `done.wait()`; the helper thread touches them only in
/// between. The job's bytes belong to the loop's read buffer, which the loop leaves alone until ``wait()``.
final class ParseHelper: @unchecked Sendable {
    private struct Job {
        var lines: [Range<Int>]
        var from: Int
        var base: UnsafeRawPointer
        /// Bytes readable from `base` (the whole read buffer).
        var readable: Int
        var firstLine: Int
        var arrival: Timestamp
    }

    private var parser: any LineParser
    private var job: Job?
    private var results: [ParsedLine] = []
    private let go = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// Whether a job is out (read and written by the loop's thread only).
    private var busy = false
    private var thread: pthread_t?

    /// Starts the helper's thread; `nil` when no thread could be made.
    init?(parser: any LineParser) {
        self.parser = parser
        guard let thread = spawnThread({ [self] in self.work() }) else { return nil }
        self.thread = thread
    }

    /// Parses `lines[from...]` (byte ranges from `base`, without their newlines) on the helper's thread.
    /// - Parameters:
    ///   - readable: bytes readable from `base`, for the parser's padding.
    ///   - firstLine: the line number of `lines[from]`.
    func start(_ lines: [Range<Int>], from: Int, base: UnsafeRawPointer, readable: Int, firstLine: Int, arrival: Timestamp) {
        precondition(!busy, "one job at a time")
        job = Job(lines: lines, from: from, base: base, readable: readable, firstLine: firstLine, arrival: arrival)
        busy = true
        go.signal()
    }

    /// Waits for the job and takes its results, one per line, in order.
    func wait() -> [ParsedLine] {
        precondition(busy, "no job out")
        done.wait()
        busy = false
        var taken: [ParsedLine] = []
        swap(&taken, &results)
        return taken
    }

    /// Waits for a job still out (its results are dropped), ends the thread and gives the parser back.
    func finish() -> any LineParser {
        if busy { _ = wait() }
        if let thread {
            job = nil
            go.signal()
            pthread_join(thread, nil)
            self.thread = nil
        }
        return parser
    }

    private func work() {
        while true {
            go.wait()
            guard let job else { return }
            results.reserveCapacity(job.lines.count - job.from)
            for k in job.from..<job.lines.count {
                let range = job.lines[k]
                let line = UnsafeRawBufferPointer(start: job.base + range.lowerBound, count: range.count)
                results.append(ParsedLine.parse(
                    line, readableAfter: job.readable - range.upperBound, lineNumber: job.firstLine + k - job.from,
                    arrival: job.arrival, with: &parser))
            }
            // Drop the job's copy of the line table, so the loop's next `removeAll` does not copy it.
            self.job = nil
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
    let status = pthread_create(&thread, nil, { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, context)
    guard status == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        return nil
    }
    return thread
}
