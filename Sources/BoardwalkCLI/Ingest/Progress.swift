#if canImport(Glibc)
    import Glibc
#endif

/// A one-line progress display on a terminal (stderr), redrawn at most ten times a second:
/// `  1.2 M events  340 k/s  120.0 MiB  45.0 %  ETA 3.1 s`. Percent and ETA only for inputs of known size.
final class Progress {
    private let sink: OutputSink
    private let paint: Paint
    private let start: Int64
    private var lastDraw: Int64 = 0
    private var drawn = false
    /// The least time between two draws, in microseconds (tests draw every update).
    var minimumInterval: Int64 = 100_000

    init(sink: OutputSink, paint: Paint) {
        self.sink = sink
        self.paint = paint
        self.start = monotonicMicroseconds()
    }

    /// - Parameters:
    ///   - events: events handled so far in this run.
    ///   - bytes: bytes read so far in this run (of every input, a resumed file's skipped part included).
    ///   - total: the size of all the run's inputs together, when every one has a size.
    func update(events: Int, bytes: Int, total: Int?) {
        let t = monotonicMicroseconds()
        guard t - lastDraw >= minimumInterval else { return }
        lastDraw = t
        let elapsed = max(1, t - start)
        var line =
            "  \(Units.count(events, "event"))  \(Units.rate(Double(events) * 1e6 / Double(elapsed)))  \(Units.bytes(bytes))"
        if let total, total > 0 {
            let fraction = min(1, Double(bytes) / Double(total))
            line +=
                "  " + paint.cyan(Bars.bar(fraction, width: 20))
                + String(repeating: " ", count: 20 - Bars.bar(fraction, width: 20).count)
            line += "  " + Units.percent(fraction)
            if fraction > 0.01 {
                let remaining = Double(elapsed) * (1 - fraction) / fraction
                line += "  ETA " + Units.duration(microseconds: Int64(remaining))
            }
        }
        sink.write("\r\u{1B}[2K" + line)
        sink.flush()
        drawn = true
    }

    /// Erases the line.
    func finish() {
        if drawn { sink.write("\r\u{1B}[2K") }
        sink.flush()
    }
}
