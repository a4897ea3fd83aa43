import Boardwalk
import BoardwalkGenerator

/// `boardwalk demo`: synthetic sessions into the store, then a few answers drawn from it with the query
/// language, each shown with the query that produced it.
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "Generate a few thousand sessions into the store and show what Boardwalk answers"
    static let usage = "boardwalk demo [--db DIR] [--sessions N] [--seed S]"
    static let options = [
        databaseOption,
        OptionSpec("sessions", short: "n", value: "N", help: "How many sessions to generate (default: 5000)"),
        OptionSpec("seed", short: "s", value: "S", help: "The generator's seed (default: 1)"),
    ]
    static let discussion = """
        Generates N sessions (as 'boardwalk generate' would), writes them as NDJSON in mixed shapes, reads
        them back with the ingest parser and stores them, then asks the store, with the query language:
        the screen funnel of the busiest onboarding (drawn as bars), how completion differs by the answer to
        its first question and whether that is more than chance (versus the most common answer), how long
        people spend on each screen, and how sessions end. Each answer is
        printed with its query. When the store already holds events, nothing is generated and the answers
        come from what is there.

        Examples:
          swift run -c release boardwalk demo
          boardwalk demo --db /tmp/demo.db --sessions 20000

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        let sessions = try arguments.integer("sessions", in: 1...10_000_000) ?? 5_000
        let seed = try arguments.unsigned("seed") ?? 1
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let path = invocation.database(arguments)
        let paint = Paint(enabled: invocation.colour(for: .stdout))
        do {
            let store = try openStore(path)
            let existing = try store.read { try $0.stats() }.events
            if existing == 0 {
                try load(
                    SyntheticData(sessions: sessions, seed: seed), into: store, invocation: invocation, paint: paint)
            } else {
                // Nothing is generated, so --sessions and --seed would be silently ignored.
                let ignored = ["sessions", "seed"].filter { arguments.value($0) != nil }.map { "--" + $0 }
                let note =
                    ignored.isEmpty
                    ? ""
                    : " (\(ignored.joined(separator: " and ")) \(ignored.count == 1 ? "applies" : "apply") only to an empty store: give a new --db to generate)"
                invocation.out(
                    "The store at \(path) already holds \(Units.count(existing, "event")): the answers below come from them\(note).\n"
                )
            }
            store.close()
        }
        let opened = try openStoreQuerySource(path)
        installInterruptHandler()
        let console = QueryConsole(source: opened.source, invocation: invocation, cancellation: interruptFlag)
        try DemoAnswers(console: console, invocation: invocation, paint: paint).show()
        invocation.out(
            """

            Ask your own questions:  boardwalk repl --db \(path)
              sessions | where completed | count by variation
              events | where element == "email" | count
              sessions | stats p50(duration), p90(duration) by onboarding

            """)
        return ExitCode.success
    }

    /// Generates the corpus as NDJSON, parses it back and stores it in batches.
    static func load(_ data: SyntheticData, into store: Store, invocation: Invocation, paint: Paint) throws {
        invocation.out(
            paint.bold("Generating \(Units.count(data.sessionCount)) onboarding sessions")
                + " (\(data.onboardings.count) onboardings, 5–20 screens each)…\n")
        invocation.stdout.flush()
        let parser = try JSONLineParser()
        let progress =
            invocation.stderrIsTerminal
            ? Progress(sink: invocation.stderr, paint: Paint(enabled: invocation.colour(for: .stderr))) : nil
        var batch: [Event] = []
        batch.reserveCapacity(10_000)
        var lines = 0, bytes = 0, stored = 0, duplicates = 0
        let start = monotonicMicroseconds()
        // Generating the lines, parsing them and storing the events are timed apart: the rate is the store's.
        var parsing: Int64 = 0, storing: Int64 = 0
        func commit(_ batch: [Event]) throws {
            let t0 = monotonicMicroseconds()
            let r = try store.append(batch)
            storing += monotonicMicroseconds() - t0
            stored += r.appended
            duplicates += r.duplicates
        }
        for (_, _, line) in data.lines() {
            lines += 1
            var text = line
            bytes += text.utf8.count
            let t0 = monotonicMicroseconds()
            let event = try text.withUTF8 { utf8 in
                let body = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8).dropLast())
                return try parser.reader.read(line: body, lineNumber: lines, arrival: Query.wallClock())
            }
            parsing += monotonicMicroseconds() - t0
            batch.append(event)
            if batch.count == 10_000 {
                try commit(batch)
                batch.removeAll(keepingCapacity: true)
                progress?.update(events: stored, bytes: bytes, total: nil)
            }
        }
        try commit(batch)
        // As `ingest` does at its end: the demo's queries then read `events` and `sessions` alone (docs/storage.md,
        // the event log).
        let t0 = monotonicMicroseconds()
        try store.foldLogs()
        storing += monotonicMicroseconds() - t0
        progress?.finish()
        let elapsed = monotonicMicroseconds() - start
        invocation.out(
            "Stored \(Units.count(stored, "event")) in \(Units.duration(microseconds: storing)) "
                + "(\(Units.rate(Double(stored) * 1e6 / Double(max(1, storing)))) events), after generating "
                + "\(Units.bytes(bytes)) of NDJSON and parsing it back in \(Units.duration(microseconds: elapsed - storing)) "
                + "(parsing alone: \(Units.duration(microseconds: parsing))).\n")
        if duplicates > 0 { invocation.out("(\(duplicates) duplicates skipped)\n") }
    }
}
