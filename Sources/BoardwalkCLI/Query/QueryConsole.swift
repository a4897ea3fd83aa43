import Boardwalk

/// Runs queries against a source and prints what they return: the core shared by `query`, `repl` and `demo`.
final class QueryConsole {
    let source: any EventSource
    /// Where results go: the REPL's `.output FILE` replaces its `stdout` for a while.
    var invocation: Invocation
    var format: ResultTable.Format = .table
    /// Each row as lines of `column = value` (the REPL's `.mode line`), whatever ``format`` says.
    var vertical = false
    /// Each JSON result on one line (NDJSON: `query -` with `--format json`), and `null` for a query that failed, so
    /// that line n is the answer to query n.
    var jsonLines = false
    /// Results longer than the terminal go through this pager (the REPL on a terminal); `nil`: never.
    var pager: Pager? = nil
    /// Print how long each query took and how much it read (to stderr).
    var timing = false
    /// Read around damaged blocks of the store, with a note of what was skipped (`--ignore-damaged`,
    /// `.ignore-damaged`).
    var ignoreDamaged = false
    /// The most threads a query's scans use (`--threads`, `.threads`); every core by default.
    var threads = Query.RunOptions.allCores
    /// The most `--threads` and `.threads` take.
    static let maxThreads = 256
    /// The zone of `day(t)`, `hour(t)`, … where a query names none (`--tz`, `.tz`).
    var timeZone = "UTC"
    /// How long opening the source took, in microseconds, printed with the first query's timing
    /// (`boardwalk query --timing`); nil when not measured or already printed.
    var openedIn: Int64? = nil
    /// Set from the SIGINT handler; checked by the executor every few thousand events.
    let cancellation: CancellationFlag

    init(source: any EventSource, invocation: Invocation, cancellation: CancellationFlag = CancellationFlag()) {
        self.source = source
        self.invocation = invocation
        self.cancellation = cancellation
    }

    /// Parses and runs `text`, printing the result on stdout or the diagnostic (with its caret) on stderr.
    /// - Parameter origin: where the text was read (`stdin` and its first line), for error locations.
    /// - Returns: whether the query succeeded.
    ///   - forceVertical: this result as rows of `column = value` (a query ended with `\G` in the REPL).
    @discardableResult
    func run(_ text: String, origin: (name: String, line: Int)? = nil, forceVertical: Bool = false) -> Bool {
        cancellation.reset()
        let start = monotonicMicroseconds()
        do {
            let query = try Query.parse(text, timeZone: timeZone)
            for note in query.notes(on: source) { report(placed(note, origin: origin)) }
            let (table, statistics) = try execute(query)
            for note in statistics.notes { report(note) }
            // Ctrl-C after the read (while rows were sorted or gathered) is seen here, and between chunks of output.
            if cancellation.isCancelled { return cancelled() }
            if query.isExplain && format == .table && !vertical && !forceVertical {
                // A plan reads as lines of text, as `.explain` prints it, not as a one-column table under a rule as
                // wide as its longest line.
                invocation.out(
                    table.rows.compactMap { if case .string(let line)? = $0.first { line } else { nil } }
                        .joined(separator: "\n") + "\n")
            } else if !printResult(table, vertical: vertical || forceVertical) {
                // A failed write (said by the sink) stops the listing too, but it is no Ctrl-C.
                return invocation.stdout.writeError != nil ? false : cancelled()
            }
            if timing {
                invocation.stdout.flush()  // the result first, then the timing on stderr
                let elapsed = monotonicMicroseconds() - start
                // The query's own time (parse, plan, read, reduce, render) to the microsecond, so that it can be
                // compared with an in-process engine; opening the store is printed beside it, once.
                var opened = ""
                if let openedIn {
                    opened = "; store opened in \(Units.decimal(Double(openedIn) / 1e3, digits: 3)) ms"
                    self.openedIn = nil
                }
                // An `events` count from block headers reads no event as a row: say what it read instead (before
                // "… read", which scripts/duckdb_compare.py looks for at the end).
                var counted = ""
                if statistics.blocksCounted + statistics.blocksRead > 0 {
                    counted =
                        "\(Units.count(statistics.eventsCounted, "event")) counted from "
                        + "\(Units.count(statistics.blocksCounted, "block header")) and \(Units.count(statistics.blocksRead)) "
                        + "block\(statistics.blocksRead == 1 ? "'s time" : "s' times"), "
                }
                invocation.err(
                    "(\(table.rows.count) row\(table.rows.count == 1 ? "" : "s"), \(Units.decimal(Double(elapsed) / 1e3, digits: 3)) ms, "
                        + "\(counted)\(Units.count(statistics.eventsRead, "event")) and \(Units.count(statistics.sessionsRead, "session")) read\(opened))\n"
                )
            }
            return true
        } catch {
            report(placed(error, origin: origin))
            if jsonLines { invocation.out("null\n") }
            return false
        }
    }

    /// Prints `table` to stdout as the console's mode says, through the pager when it is longer than the terminal.
    /// - Returns: `false` when it stopped early (Ctrl-C, a failed write): what was written ends after a whole row.
    private func printResult(_ table: ResultTable, vertical: Bool) -> Bool {
        let lines = vertical ? table.rows.count * (table.columns.count + 1) : table.rows.count + 2
        if let pager, invocation.stdoutIsTerminal {
            invocation.stdout.flush()  // what came before (notes went to stderr) is on the terminal first
            if let paged = pager.open(forLines: lines) {
                let printed = print(table, vertical: vertical, to: paged.sink)
                paged.close()
                // A pager quit before the end took only what it showed: that is no failure.
                return printed || (paged.sink.writeError != nil && !cancellation.isCancelled)
            }
        }
        return print(table, vertical: vertical, to: invocation.stdout)
    }

    private func print(_ table: ResultTable, vertical: Bool, to sink: any OutputSink) -> Bool {
        let stop = { self.cancellation.isCancelled || sink.writeError != nil }
        if vertical { return VerticalRows.print(table, to: sink, cancelled: stop) }
        if format == .json && jsonLines {
            // The JSON renderer's line breaks and indentation fall between values, never inside one (a string's
            // line breaks are escaped): without them, the result is one line.
            let line = JSONLinesSink(sink)
            guard ResultPrinter.print(table, .json, to: line, cancelled: stop) else { return false }
            sink.write("\n")
            return true
        }
        return ResultPrinter.print(table, format, to: sink, cancelled: stop)
    }

    /// Reports a query stopped by Ctrl-C, after the output it had printed (which ends after a whole row).
    private func cancelled() -> Bool {
        invocation.stdout.flush()
        invocation.err("cancelled\n")
        return false
    }

    /// Runs a parsed query (opening the existential source).
    func execute(_ query: Query) throws(QueryError) -> (table: ResultTable, statistics: RunStatistics) {
        try query.execute(
            on: source,
            options: Query.RunOptions(cancellation: cancellation, ignoreDamaged: ignoreDamaged, threads: threads))
    }

    /// The plan of `text`, or its diagnostic.
    /// - Parameters:
    ///   - origin: where the text was read (`stdin` and its line), for error locations.
    ///   - linePrefix: what comes before `text` on its first line (`.explain `): the diagnostic shows it and counts
    ///     columns from the start of the line.
    @discardableResult
    func explain(_ text: String, origin: (name: String, line: Int)? = nil, linePrefix: String = "") -> Bool {
        do {
            let query = try Query.parse(text, timeZone: timeZone)
            for note in query.notes(on: source) { report(placed(note, origin: origin, linePrefix: linePrefix)) }
            var plan = query.explain(on: source)
            if !plan.hasSuffix("\n") { plan += "\n" }
            invocation.out(plan)
            return true
        } catch {
            report(placed(error, origin: origin, linePrefix: linePrefix))
            return false
        }
    }

    /// `diagnostic` located where its query was read: the input and its line (`--> stdin:12:10`), with
    /// `linePrefix` (`.explain `) before the query on its first line.
    private func placed(_ diagnostic: QueryError, origin: (name: String, line: Int)?, linePrefix: String = "")
        -> QueryError
    {
        var diagnostic = diagnostic
        if let range = diagnostic.range, !linePrefix.isEmpty {
            let shift = linePrefix.utf8.count
            diagnostic.query = linePrefix + diagnostic.query
            diagnostic.range = (range.lowerBound + shift)..<(range.upperBound + shift)
        }
        if let origin {
            diagnostic.sourceName = origin.name
            diagnostic.firstLine = origin.line
        }
        return diagnostic
    }

    func report(_ error: QueryError) {
        if error.kind == .cancelled {
            invocation.err("cancelled\n")
        } else {
            var text = error.description
            if !text.hasSuffix("\n") { text += "\n" }
            invocation.err(text)
        }
    }
}

extension ResultTable.Format {
    static let names = ResultTable.Format.allCases.map(\.rawValue)
}
