#if canImport(Glibc)
import Glibc
#endif
import Boardwalk

/// Opens the store at `path` for a command, turning store errors into runtime errors that say which store.
func openStore(_ path: String, readOnly: Bool = false, create: Bool = true, notes: Invocation? = nil) throws -> Store {
    if !create || readOnly {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw RuntimeError("no store at '\(path)' (use --db DIR or $BOARDWALK_DB, or ingest something first)")
        }
    }
    let store: Store
    do {
        store = try Store.open(at: path, options: Store.Options(readOnly: readOnly, create: create))
    } catch {
        throw RuntimeError("cannot open the store '\(path)': \(error)")
    }
    if store.isWithoutLockFile {
        notes?.err("note: '\(path)/lock.mdb' is not writable here, so the store is read without it: a process that "
                   + "starts appending to it meanwhile can make this fail or give wrong results\n")
    }
    return store
}

/// The store as an ingest target.
final class StoreSink: IngestSink {
    let store: Store
    init(store: Store) { self.store = store }

    func append(_ events: [Event], checkpoint: BatchCheckpoint?) throws -> (inserted: Int, duplicates: Int) {
        guard let checkpoint else {
            let result = try store.append(events)
            return (result.appended, result.duplicates)
        }
        // The checkpoint is read again inside the write transaction: writers are serialized, so no other ingest
        // can move it between this read and the commit.
        let result = try store.write { w in
            let found = try w.snapshot.checkpoint(checkpoint.key)
            guard found == checkpoint.expected else { throw CheckpointMoved(expected: checkpoint.expected, found: found) }
            let result = try w.append(events)
            try w.setCheckpoint(Checkpoint(key: checkpoint.key, value: checkpoint.value))
            return result
        }
        return (result.appended, result.duplicates)
    }

    func checkpoint(for key: String) throws -> [UInt8]? {
        try store.read { try $0.checkpoint(key) }
    }
}

/// The JSON layer's reader as the ingest loop's parser.
struct JSONLineParser: LineParser {
    let reader: EventReader
    init() throws {
        do {
            reader = try EventReader()
        } catch {
            throw RuntimeError("\(error)")
        }
    }
    mutating func parse(_ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp) throws -> Event {
        try reader.read(line: line, readableAfter: readableAfter, lineNumber: lineNumber, arrival: arrival)
    }
}

// MARK: ingest

enum IngestCommand: Command {
    static let name = "ingest"
    static let summary = "Read NDJSON (any shape) or batch files into the store"
    static let usage = "boardwalk ingest [--db DIR] [--rejects FILE] [--strict] [--quiet] [--batch N] [FILE...|-]"
    static let options = [
        databaseOption,
        OptionSpec("rejects", value: "FILE", help: "Where rejected lines are listed (default: ./boardwalk-rejects.txt)"),
        OptionSpec("strict", help: "Stop at the first bad line; nothing of its batch is committed"),
        OptionSpec("quiet", short: "q", help: "No progress bar and no summary"),
        OptionSpec("batch", value: "N", help: "Events per transaction (default: 10000)"),
    ]
    static let discussion = """
        Reads each FILE in turn (or standard input when there is none, or for '-'). A file is either NDJSON in
        any shape the reader accepts (web-view messages, the docs' shapes, bridge shapes, canonical lines;
        see docs/events.md), or a batch file written by 'boardwalk export --format batch' (told apart by its
        magic bytes). Lines without a time get the time they were read.

        Bad lines do not stop the run: each is listed in the rejects file as 'INPUT:LINE: reason', followed
        by the line itself on a tab-indented line, and the lines around it are ingested. The rejects file is
        rewritten at the first rejection of each run and not created when nothing is rejected. With --strict
        the run stops at the first bad line instead (listed too), and nothing of the batch it was in is
        committed. A file's last line without a newline is a line like any other; if it does not parse it is
        rejected, and the next run reads it again (a writer may still be finishing it).

        Exactly once: events are committed in batches; each batch of a file is committed together with a
        checkpoint (how far into the file it reached, with fingerprints of the bytes before that point), so
        running the same command again after a crash or Ctrl-C continues after the last committed batch. A
        file rewritten in place so that its first 4 KiB or the 4 KiB before its checkpoint changed is read
        from its start (a change elsewhere before the checkpoint is not seen). Events with an event id are
        also de-duplicated by the store, whatever their input: an event is a duplicate when its event id,
        time, onboarding and screen are all stored already. Standard input has no
        checkpoint, even when it is a file ('ingest - < FILE'): only event ids protect it, and a line without
        a time gets the time it is read, so the same line sent twice is stored twice, event id or not.
        A file may be named once per run. A pipe that goes quiet for 200 ms has what it sent so far
        committed (for 'tail -f … | boardwalk ingest -'). Ctrl-C stops after the batch in progress is
        committed. Two runs of the same file at once: the one that finds the file's checkpoint moved by the
        other stops, storing nothing twice.

        A progress line is drawn on stderr when it is a terminal. The summary goes to stdout.

        Exit status: 0 when every line was ingested; 2 when some lines were rejected; 1 on a failure (or
        when --strict stopped); 130 when interrupted.

        Examples:
          boardwalk ingest events.ndjson
          boardwalk generate -n 10000 | boardwalk ingest --db /tmp/demo.db -
          tail -f app.log | boardwalk ingest -

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        let batch = try arguments.integer("batch", in: 1...10_000_000) ?? 10_000
        var paths = arguments.positionals
        if paths.isEmpty { paths = ["-"] }
        if paths.filter({ $0 == "-" }).count > 1 { throw UsageError("standard input ('-') can be read once only") }
        // Open every input first, so a missing file fails before anything is stored.
        let inputs = try paths.map { path throws(RuntimeError) in try InputFile(path: path) }
        // A file named twice (or by two names: a link, `./a` and `a`) would be resumed from the checkpoint this run
        // just wrote and read as nothing; refused, so the summary never calls that "an earlier run".
        var named: [String: String] = [:]
        for input in inputs {
            guard let id = input.identity else { continue }
            let key = "\(id.device):\(id.inode)"
            if let first = named[key] {
                throw UsageError(first == input.name
                    ? "'\(first)' is named twice; a file is ingested once per run"
                    : "'\(first)' and '\(input.name)' are the same file; a file is ingested once per run")
            }
            named[key] = input.name
        }
        let rejectsPath = arguments.value("rejects") ?? RejectsWriter.defaultPath
        // The rejects file is truncated at the first rejected line: it must be none of the inputs (read while it is
        // rewritten, the rest of the input would be lost with it) and none of the store's files.
        if let id = FileSafety.identity(rejectsPath) {
            if FileSafety.isDirectory(rejectsPath) {
                throw UsageError("the rejects file '\(rejectsPath)' is a directory; name a file with --rejects FILE")
            }
            if let input = inputs.first(where: { $0.identity.map { $0 == id } ?? false }) {
                throw UsageError("'\(input.name)' is both an input and the rejects file, which rejected lines would overwrite; "
                    + "name another with --rejects FILE")
            }
            if FileSafety.isStoreFile(rejectsPath, store: invocation.database(arguments)) {
                throw UsageError("the rejects file '\(rejectsPath)' is one of the store's own files; name another with --rejects FILE")
            }
        }
        let rejects = RejectsWriter(path: rejectsPath)
        // A rejects file named on the command line must be writable before anything is stored. The default one is
        // made at the first rejected line only, so a clean ingest runs from any directory.
        if arguments.value("rejects") != nil { try rejects.checkWritable() }
        let store = try openStore(invocation.database(arguments))
        let quiet = arguments.flag("quiet")
        let progress = !quiet && invocation.stderrIsTerminal
            ? Progress(sink: invocation.stderr, paint: Paint(enabled: invocation.colour(for: .stderr))) : nil
        let ingester = Ingester(
            sink: StoreSink(store: store), parser: try JSONLineParser(),
            // A second parse thread only with 3 or more cores: on 2, parsing and committing already keep both
            // busy, and a third thread measured no faster while costing 5 % more CPU (docs/cli.md, ingest).
            helperParser: sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 3 ? try JSONLineParser() : nil,
            options: Ingester.Options(strict: arguments.flag("strict"), batchSize: batch),
            rejects: rejects, progress: progress)
        let sizes = inputs.compactMap(\.size)
        if sizes.count == inputs.count { ingester.totalBytes = sizes.reduce(0, +) }
        installInterruptHandler()
        interruptFlag.reset()
        ingester.shouldStop = { interruptFlag.isCancelled }
        let start = monotonicMicroseconds()
        var failure: Error? = nil
        // Whether the inputs were cut short: a Ctrl-C during the closing fold below leaves nothing to continue.
        var interrupted = false
        do {
            for input in inputs {
                try ingester.ingest(input)
                if interruptFlag.isCancelled { break }
            }
            interrupted = interruptFlag.isCancelled
            // Queries then read `events` and `sessions` alone, without merging the logs of the last batches in
            // (docs/storage.md, "Format 9: the event log"); nothing to do when the appends just folded them.
            if !interrupted { try store.foldLogs() }
        } catch {
            failure = error
        }
        progress?.finish()
        ingester.rejects.flush()
        // Its last lines are written only now: a full disk then is the run's failure too (what was stored stays).
        if failure == nil, let code = ingester.rejects.writeError {
            failure = RuntimeError("cannot write the rejects file '\(rejectsPath)': \(String(cString: strerror(code)))")
        }
        let summary = ingester.summary
        if !quiet {
            let elapsed = monotonicMicroseconds() - start
            var text = "inputs: \(summary.inputs)\nlines: \(summary.lines)\ningested: \(summary.ingested)\n"
            text += "duplicates: \(summary.duplicates)\n"
            // Listed only when each rejected line reached the file (the default one is made at the first, and may not be).
            let listedAll = ingester.rejects.writeError == nil && ingester.rejects.count == summary.rejected
            let listed = listedAll ? " (listed in \(rejectsPath))" : " (not all listed: the rejects file could not be written)"
            text += "rejected: \(summary.rejected)" + (summary.rejected > 0 ? listed : "") + "\n"
            if summary.unfinishedLines > 0 {
                text += "unfinished: the last line of \(summary.unfinishedLines == 1 ? "a file" : "\(summary.unfinishedLines) files") "
                    + "has no newline and does not parse: rejected, and read again by the next run (a writer may still be finishing it)\n"
            }
            if let resumed = resumedLine(lines: summary.resumedLines, events: summary.resumedEvents) { text += resumed }
            for restart in summary.restarted { text += restartedLine(restart) }
            let rate = Double(summary.ingested + summary.duplicates) * 1e6 / Double(max(1, elapsed))
            text += "time: \(Units.duration(microseconds: elapsed)) (\(Units.rate(rate)) events)\n"
            invocation.out(text)
        }
        if arguments.flag("strict") && summary.resumedLines + summary.resumedEvents > 0 {
            // On stderr, with or without --quiet: --strict as a validation would otherwise pass a file whose bad lines
            // an earlier run rejected. A scratch store, not this one: read again here, events without an event id
            // would be stored twice.
            invocation.err("strict: only what this run read was checked; what an earlier run committed was not read "
                + "again (to check a whole file, ingest it into a scratch store: boardwalk ingest --db \"$(mktemp -d)\" --strict FILE)\n")
        }
        if let failure { throw failureError(failure) }
        if interrupted {
            // Files resume from their checkpoints; standard input has none (only event ids protect it).
            let hint = paths.contains("-") ? "" : "; run the same command again to continue"
            invocation.err("interrupted: everything up to the last committed batch is stored\(hint)\n")
            return ExitCode.interrupted
        }
        return summary.rejected > 0 ? ExitCode.partial : ExitCode.success
    }

    /// `resumed: after 3 lines committed by an earlier run`: what checkpoints let this run skip, in NDJSON lines
    /// and batch-file events (each named only when there is some); `nil` when nothing was skipped.
    static func resumedLine(lines: Int, events: Int) -> String? {
        var parts: [String] = []
        if lines > 0 { parts.append(Units.counted(lines, "line")) }
        if events > 0 { parts.append(Units.counted(events, "batch-file event")) }
        guard !parts.isEmpty else { return nil }
        return "resumed: after \(parts.joined(separator: " and ")) committed by an earlier run\n"
    }

    /// `restarted: FILE: …`: a file whose checkpoint did not fit it, read from its start.
    static func restartedLine(_ restart: IngestSummary.Restart) -> String {
        let place = restart.isBatchFile ? Units.counted(restart.line, "event") : Units.counted(restart.line, "line")
        return "restarted: \(restart.input) changed before where an earlier run stopped (after \(place)): read from "
            + "its start; events already stored with the same event id count as duplicates\n"
    }

    /// The message a failed run ends with, for a failure of either stage (a commit-stage failure arrives as
    /// the store's own error).
    static func failureError(_ failure: any Error) -> RuntimeError {
        if let strict = failure as? Ingester.StrictStop { return RuntimeError(strict.description) }
        if let moved = failure as? CheckpointMoved {
            return RuntimeError("\(moved) (what was committed before stays; once the other ingest is done, the same command continues after what it stored)")
        }
        // A write that fails for want of space: LMDB reports ENOSPC, or EIO when the kernel fails a write-back of
        // its memory map (a full tmpfs, a full disk under the page cache).
        if let lmdb = failure as? StoreError, lmdb.errno == .noSpace || lmdb.errno == .ioError {
            return RuntimeError(
                "\(lmdb): the disk may be full; nothing of the batch in progress was stored (what was committed before "
                    + "stays; once there is space, the same command continues after it)")
        }
        // Running again helps only when the store, not the input, failed (a full disk, a lock): bad bytes
        // in a batch file or an unreadable input fail the same way every time.
        let hint = failure is StoreError
            ? "what was committed before stays; once the cause is fixed, the same command continues after it"
            : "what was committed before stays"
        return RuntimeError("\(failure) (\(hint))")
    }
}

// MARK: stats

enum StatsCommand: Command {
    static let name = "stats"
    static let summary = "Events, sessions, onboardings, bytes on disk, time range, per-kind counts"
    static let usage = "boardwalk stats [--db DIR] [--format table|json]"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "table (default) or json"),
    ]
    static let discussion = """
        JSON output is one object with exact numbers: events, sessions, inferred_sessions, onboardings,
        duplicates_skipped, strings, bytes, file_bytes, bytes_per_event, first, last (ISO-8601, null when
        empty), event_log_batches and session_log_batches (batches not yet folded), next_seq and events_by_kind.

        Examples:
          boardwalk stats
          boardwalk stats --format json | jq .events

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        let format = try arguments.choice("format", among: ["table", "json"]) ?? "table"
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let store = try openStore(invocation.database(arguments), readOnly: true, notes: invocation)
        let stats = try store.read { try $0.stats() }
        // In a snapshot of its own: a damaged log page fails the snapshot that meets it (shown as unknown here).
        let unfolded = try? store.read { try $0.unfoldedBatches() }
        invocation.out(format == "json" ? statsJSON(stats, unfolded: unfolded, fileBytes: store.usedBytes)
                       : statsTable(stats, unfolded: unfolded, fileBytes: store.usedBytes, paint: Paint(enabled: invocation.colour(for: .stdout))))
        return ExitCode.success
    }

    static func statsTable(_ s: StoreStats, unfolded: (eventLog: Int, sessionLog: Int)?, fileBytes: Int, paint: Paint) -> String {
        var t = TextTable(headers: ["", ""], alignments: [.left, .right])
        t.rows = [
            // Counts for people, with the exact number beside them once they are rounded.
            ["events", Units.count(s.events) + (s.events >= 1000 ? " (\(s.events))" : "")],
            ["sessions", Units.count(s.sessions) + " (" + (s.sessions >= 1000 ? "\(s.sessions); " : "")
                + "\(Units.count(s.inferredSessions)) inferred)"],
            ["onboardings", "\(s.onboardings)"],
            ["duplicates skipped", "\(s.duplicatesSkipped)"],
            ["bytes on disk", Units.bytes(fileBytes)],
            ["bytes per event", s.events > 0 ? Units.decimal(Double(fileBytes) / Double(s.events), digits: 1) : "–"],
            ["first event", s.timeRange.map { $0.lowerBound.iso8601 } ?? "–"],
            ["last event", s.timeRange.map { $0.upperBound.iso8601 } ?? "–"],
            // What reads merge in until the next fold (docs/storage.md, "Format 9: the event log").
            ["batches not folded", unfolded.map { "\($0.eventLog) in the event log, \($0.sessionLog) in the session log" }
                ?? "? (the logs do not read: see boardwalk check)"],
        ]
        var out = ""
        for row in t.rows { out += row[0].padding(to: 20) + row[1] + "\n" }
        out += "\n"
        var kinds = TextTable(headers: ["kind", "events", "share"], alignments: [.left, .right, .right])
        for kind in EventKind.allCases {
            let n = s.eventsByKind[kind] ?? 0
            kinds.append([kind.name, "\(n)", s.events > 0 ? Units.percent(Double(n) / Double(s.events)) : "–"])
        }
        return out + kinds.render(paint: paint)
    }

    static func statsJSON(_ s: StoreStats, unfolded: (eventLog: Int, sessionLog: Int)?, fileBytes: Int) -> String {
        var o = "{"
        o += "\"events\":\(s.events),\"sessions\":\(s.sessions),\"inferred_sessions\":\(s.inferredSessions),"
        o += "\"onboardings\":\(s.onboardings),\"duplicates_skipped\":\(s.duplicatesSkipped),\"strings\":\(s.strings),"
        o += "\"bytes\":\(s.bytes),\"file_bytes\":\(fileBytes),"
        o += "\"bytes_per_event\":" + (s.events > 0 ? "\(Double(fileBytes) / Double(s.events))" : "null") + ","
        o += "\"first\":" + (s.timeRange.map { "\"\($0.lowerBound.iso8601)\"" } ?? "null") + ","
        o += "\"last\":" + (s.timeRange.map { "\"\($0.upperBound.iso8601)\"" } ?? "null") + ","
        o += "\"event_log_batches\":" + (unfolded.map { "\($0.eventLog)" } ?? "null") + ","
        o += "\"session_log_batches\":" + (unfolded.map { "\($0.sessionLog)" } ?? "null") + ","
        o += "\"next_seq\":\(s.nextSeq),\"events_by_kind\":{"
        o += EventKind.allCases.map { "\"\($0.name)\":\(s.eventsByKind[$0] ?? 0)" }.joined(separator: ",")
        return o + "}}\n"
    }
}

// MARK: export

enum ExportCommand: Command {
    static let name = "export"
    static let summary = "Write the store's events as canonical NDJSON, CSV, ClickHouse rows or a batch file"
    static let usage = "boardwalk export [--db DIR] [--format ndjson|csv|clickhouse|batch] [--since-seq N | --salvage] [--output FILE] [--schema [--table NAME]]"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "ndjson (default), csv, clickhouse or batch"),
        OptionSpec("schema", help: "With --format clickhouse: print the CREATE TABLE statement instead of rows"),
        OptionSpec("table", value: "NAME", help: "The table name in --schema (default: boardwalk_events)"),
        OptionSpec("since-seq", value: "N", help: "Only events with a sequence number of N or more"),
        OptionSpec("output", short: "o", value: "FILE", help: "Write to FILE instead of stdout"),
        OptionSpec("salvage", help: "From a damaged store: every event that still reads, past what does not (listed)"),
    ]
    static let discussion = """
        Events come out in arrival (seq) order. ndjson is the canonical JSON line format (docs/events.md),
        which 'boardwalk ingest' reads back losslessly; batch is the codec's self-contained binary batch file
        (docs/codec.md), also read by ingest; csv has a header and one row per event with the columns
        seq, time, kind, name, onboarding, screen_cid, screen, total_screens, session, profile, event_id,
        placement, variation, action_id, element_id, element_type, value, reply, error_domain, error_code,
        error_message (value: the answer as JSON text; RFC 4180 quoting). clickhouse writes JSONEachRow rows
        for the table printed by --schema (docs/clickhouse.md): every field as queries see it, with the seq and
        the store's session (inferred ones included), for
          clickhouse-client --query 'INSERT INTO boardwalk_events FORMAT JSONEachRow' < rows.jsonl

        For incremental export, pass the 'next' seq printed on stderr by the previous run as --since-seq.
        Sessions the store inferred carry their inferred id (inferred:SEQ) in the export.

        An export stops at the first damaged block ('boardwalk check' lists them all). --salvage goes on past
        them: it writes every event that still decodes, in block order (onboarding, screen, time) rather than
        seq order, lists on stderr what it skipped (an event, or the rest of a block), and exits with 2 when
        it skipped anything. Ingest the salvaged file into a new store to go on.

        Examples:
          boardwalk export > all.ndjson
          boardwalk export --format batch -o backup.bwk
          boardwalk export --since-seq 1000000 --format csv > new.csv
          boardwalk export --format clickhouse --schema | clickhouse-client
          boardwalk export --format clickhouse --since-seq 52000 > new.jsonl
          boardwalk export --db damaged.db --salvage -o salvaged.ndjson

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        let format = try arguments.choice("format", among: ["ndjson", "csv", "clickhouse", "batch"]) ?? "ndjson"
        let since = try arguments.unsigned("since-seq") ?? 0
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let schema = arguments.flag("schema")
        let salvage = arguments.flag("salvage")
        // A salvage reads blocks, not arrival order: no 'next' seq comes out of it to go on from.
        if salvage && arguments.value("since-seq") != nil { throw UsageError("--since-seq does not go with --salvage") }
        if schema {
            guard format == "clickhouse" else { throw UsageError("--schema goes with --format clickhouse") }
            // The statement has no rows to start from: a --since-seq would be silently ignored.
            if arguments.value("since-seq") != nil { throw UsageError("--since-seq goes with rows, not with --schema") }
            if salvage { throw UsageError("--salvage goes with rows, not with --schema") }
        } else if arguments.value("table") != nil {
            throw UsageError("--table goes with --schema")
        }
        // The store first: a mistyped --db must not cost the file --output names. And the file is written beside its
        // destination and moved over it once the export is whole (``ReplacedFile``).
        let database = invocation.database(arguments)
        let store = schema ? nil : try openStore(database, readOnly: true, notes: invocation)
        let output: OutputSink
        var file: ReplacedFile? = nil
        if let path = arguments.value("output"), path != "-" {
            if FileSafety.isStoreFile(path, store: database) {
                throw UsageError("'\(path)' is one of the store's own files; export to another")
            }
            file = try ReplacedFile(path)
            output = file!.sink
        } else {
            if format == "batch" && invocation.stdoutIsTerminal {
                throw UsageError("a batch file is binary: redirect stdout or use --output FILE")
            }
            output = invocation.stdout
        }
        if schema {
            // To stdout or to --output, like rows.
            output.write(ClickHouseTable.createStatement(table: arguments.value("table") ?? ClickHouseTable.defaultName))
            output.flush()
            if let code = output.writeError, let file {
                throw RuntimeError("cannot write to '\(file.path)': \(String(cString: strerror(code)))")
            }
            try file?.commit()
            return output.writeError == nil ? ExitCode.success : ExitCode.failure
        }
        guard let store else { return ExitCode.failure }  // opened above; only --schema, handled, goes without
        var count = 0
        var lastSeq: UInt64? = nil
        var storeNextSeq: UInt64 = 0
        var batch = BatchWriter()
        var buffer = ""
        // CSV rows are made as UTF-8 bytes (quoting looks at bytes, not Characters); flushed as the text is.
        var csv: [UInt8] = []
        if format == "csv" {
            csv.reserveCapacity(1 << 17)
            csv.append(contentsOf: CSVExport.header.utf8)
        }
        var skipped = SalvageReport()
        // Writes one event; `false` when a write failed (a full disk): the rest would be lost too. An event the
        // format cannot hold ends an export, and is skipped (and listed) by a salvage.
        func emit(_ stored: StoredEvent) throws -> Bool {
            if output.writeError != nil { return false }
            do {
                switch format {
                case "batch":
                    try batch.append(stored.event)
                    let bytes = batch.takeOutput()
                    if !bytes.isEmpty { output.write(bytes: bytes) }
                case "csv":
                    CSVExport.appendRow(stored, to: &csv)
                    if csv.count >= 1 << 16 {
                        output.write(bytes: csv)
                        csv.removeAll(keepingCapacity: true)
                    }
                case "clickhouse":
                    guard ClickHouseTable.timeRange.contains(stored.event.time) else {
                        throw RuntimeError("event seq \(stored.seq): its time \(stored.event.time.iso8601) is outside what ClickHouse's DateTime64 holds (1900-01-01 to 2299-12-31); exported, it would silently become another time")
                    }
                    buffer += ClickHouseTable.row(seq: stored.seq, event: stored.event)
                default:
                    buffer += CanonicalJSON.line(stored.event)
                    if !buffer.hasSuffix("\n") { buffer += "\n" }
                }
            } catch where salvage {
                skipped.refuse(seq: stored.seq, error, to: invocation)
                return true
            }
            count += 1
            lastSeq = stored.seq
            if buffer.utf8.count >= 1 << 16 {
                output.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
            return true
        }
        do {
            if salvage {
                try store.salvageEvents(emit) { damage in
                    skipped.add(damage, to: invocation)
                    return true
                }
            } else {
                try store.read { snapshot in
                    storeNextSeq = try snapshot.stats().nextSeq
                    try snapshot.forEachEvent(since: since) { view in
                        // Before the decode: after a failed write, the error to report is the write's.
                        if output.writeError != nil { return false }
                        return try emit(try snapshot.owned(view))
                    }
                }
            }
        } catch {
            // A damaged block or a refused time: what was exported so far is not the export asked for. What was
            // exported is written out (the last batch block closed, but no end block, so that ingest reports the
            // file as cut short), so that the line below is true of the output: a stream cut at the last full
            // buffer lost the events read since.
            switch format {
            case "batch": output.write(bytes: batch.flush())
            case "csv": output.write(bytes: csv)
            default: output.write(buffer)
            }
            output.flush()
            // A file replaced only once whole keeps none of it; a salvage goes in block order, so the count says how
            // far it came, the last seq does not.
            let replaced = file?.isReplaced == true
            let kept = replaced ? " ('\(file!.path)' was left as it was)" : ""
            let from = since > 0 ? "from seq \(since) " : ""
            let next = replaced ? ""
                : output.writeError.map { "; and then writing failed: \(String(cString: strerror($0)))" }
                ?? (salvage ? "; \(count) event\(count == 1 ? " was" : "s were") written before it"
                    : lastSeq.map { "; the events \(from)before seq \($0 + 1) were written" }
                    ?? "; no event was written")
                + (format == "batch" && !replaced && count > 0 ? " (the batch file has no end block, so ingest reports it as cut short)" : "")
            let damaged = (error as? StoreError)?.kind == .corrupt && !salvage
                ? "; 'boardwalk export --salvage' goes on past damaged blocks"
                : (error as? StoreError)?.meansDamage == true
                    ? "; the store's file is damaged: 'boardwalk check' lists the damage" : ""
            throw RuntimeError("\(error); the export is incomplete\(kept)\(next)\(damaged)")
        }
        switch format {
        case "batch": output.write(bytes: batch.finish())
        case "csv": output.write(bytes: csv)
        default: output.write(buffer)
        }
        // What was written must be on its way before the count and the next seq are given: an incremental export that
        // went on from a `next` whose events were lost (ENOSPC) would never export them.
        output.flush()
        if let code = output.writeError {
            let again = salvage ? "the export is incomplete: run 'export --salvage' again"
                : "the export is incomplete: run it again with the same --since-seq \(since)"
            if let file {
                throw RuntimeError("cannot write to '\(file.path)': \(String(cString: strerror(code))); \(again)"
                    + (file.isReplaced ? " ('\(file.path)' was left as it was)" : ""))
            }
            // Standard output: its sink has said why already.
            invocation.err(again + "\n")
            return ExitCode.failure
        }
        // Nothing exported: the next run starts where this one did, but never past the store's next seq (a
        // --since-seq beyond it would otherwise skip events not appended yet).
        let next = lastSeq.map { $0 + 1 } ?? min(since, storeNextSeq)
        try file?.commit()
        let exported = "exported \(count) event\(count == 1 ? "" : "s")"
        guard salvage else {
            invocation.err("\(exported); next: --since-seq \(next)\n")
            return ExitCode.success
        }
        invocation.err("\(exported) (salvage, in block order)\(skipped.summary)\n")
        return skipped.isEmpty ? ExitCode.success : ExitCode.partial
    }
}

/// What `export --salvage` skipped or kept unverified: each on stderr as it is met (the first 100), and the totals.
struct SalvageReport {
    static let listed = 100
    /// Events skipped one by one: a record or string that does not decode, or one the output format cannot hold.
    private(set) var events = 0
    /// Blocks cut short (the rest after the damage) or lost whole (a damaged key).
    private(set) var blocks = 0
    /// Blocks whose every event was kept, though their end does not check.
    private(set) var unverified = 0
    /// The event log was skipped whole (its LMDB pages are damaged).
    private(set) var eventLog = false
    private var said = 0

    var isEmpty: Bool { events == 0 && blocks == 0 && unverified == 0 && !eventLog }

    mutating func add(_ damage: SalvageDamage, to invocation: Invocation) {
        switch damage.extent {
        case .event: events += 1
        case .block, .key: blocks += 1
        case .blockEnd: unverified += 1
        case .eventLog: eventLog = true
        }
        say((damage.lostEvents ? "skipped: " : "kept unverified: ") + damage.description, invocation)
    }

    /// An event that decoded but that the output format cannot hold.
    mutating func refuse(seq: UInt64, _ error: any Error, to invocation: Invocation) {
        events += 1
        say("skipped: one event (seq \(seq)), which the format cannot hold: \(error)", invocation)
    }

    private mutating func say(_ line: String, _ invocation: Invocation) {
        said += 1
        if said <= Self.listed {
            invocation.err(line + "\n")
        } else if said == Self.listed + 1 {
            invocation.err("… (the rest are counted below, not listed; 'boardwalk check' lists the store's damage)\n")
        }
    }

    /// "; skipped 2 events and the rest of 1 block", or "; nothing was skipped".
    var summary: String {
        if isEmpty { return "; nothing was skipped" }
        var parts: [String] = []
        if events > 0 { parts.append(Units.counted(events, "event")) }
        if blocks > 0 { parts.append("the rest of " + Units.counted(blocks, "damaged block")) }
        if eventLog { parts.append("the event log (the batches not yet folded)") }
        var text = parts.isEmpty ? "" : "; skipped " + parts.joined(separator: " and ")
        if unverified > 0 { text += "; kept, unverified, the events of " + Units.counted(unverified, "block") + " whose end does not check" }
        return text
    }
}

/// The CSV export's columns and quoting.
enum CSVExport {
    static let columns = [
        "seq", "time", "kind", "name", "onboarding", "screen_cid", "screen", "total_screens", "session", "profile",
        "event_id", "placement", "variation", "action_id", "element_id", "element_type", "value", "reply",
        "error_domain", "error_code", "error_message",
    ]
    static let header = columns.joined(separator: ",") + "\n"

    /// The event's row as text, with its line feed: what ``appendRow(_:to:)`` appends.
    static func row(_ stored: StoredEvent) -> String {
        var bytes: [UInt8] = []
        appendRow(stored, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the event's row, ending in a line feed, to `out` as UTF-8.
    ///
    /// - Complexity: O(n) in the row's bytes; no allocation beyond `out`'s growth and the few fields made as
    ///   text (the time, the answer's JSON, numbers).
    static func appendRow(_ stored: StoredEvent, to out: inout [UInt8]) {
        let e = stored.event
        func field(_ text: String) {
            out.append(UInt8(ascii: ","))
            appendField(text, to: &out)
        }
        func number(_ n: Int) {
            out.append(UInt8(ascii: ","))
            appendDecimal(n, to: &out)
        }
        func empty(_ n: Int = 1) {
            for _ in 0..<n { out.append(UInt8(ascii: ",")) }
        }
        appendDecimal(stored.seq, to: &out)
        field(e.time.iso8601)
        field(e.kind.name)
        // name: the analytics name, or the kind's for other kinds, as the query language and the ClickHouse rows have it
        if case .analytics(let a) = e.payload { field(a.name) } else { field(e.kind.name) }
        if let meta = e.meta {
            field(meta.onboardingID)
            field(meta.screenClientID)
            number(meta.screenIndex)
            number(meta.totalScreens)
        } else {
            empty(4)
        }
        field(e.session ?? "")
        field(e.profile ?? "")
        field(e.eventID ?? "")
        field(e.placement ?? "")
        field(e.variation ?? "")
        field(e.payload.actionID ?? "")
        // element_id, element_type, value, reply, error_domain, error_code, error_message
        switch e.payload {
        case .analytics(.screenCompleted(let element, let reply)):
            field(element ?? "")
            empty(2)
            field(reply ?? "")
            empty(3)
        case .stateUpdated(let u):
            field(u.elementID)
            field(u.value.elementType.rawValue)
            field(valueJSON(u.value))
            empty(4)
        case .error(let err):
            empty(4)
            field(err.domain)
            out.append(UInt8(ascii: ","))
            appendDecimal(err.code, to: &out)
            field(err.message)
        default:
            empty(7)
        }
        out.append(0x0A)
    }

    /// Appends `field` as a CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF, with its
    /// quotes doubled. Looks at UTF-8 bytes, so a quote or comma followed by a combining mark (one `Character`
    /// with it) is still seen; those four bytes never occur inside a multi-byte UTF-8 sequence.
    static func appendField(_ field: String, to out: inout [UInt8]) {
        let done: Void? = field.utf8.withContiguousStorageIfAvailable { appendField(bytes: $0, to: &out) }
        if done == nil { Array(field.utf8).withUnsafeBufferPointer { appendField(bytes: $0, to: &out) } }
    }

    private static func appendField(bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        guard bytes.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }) else {
            out.append(contentsOf: bytes)
            return
        }
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { out.append(byte) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `field` as a CSV field: ``appendField(_:to:)`` as text.
    static func quote(_ field: String) -> String {
        var out: [UInt8] = []
        appendField(field, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the decimal digits of `n` (with `-` when negative) without making a `String`.
    static func appendDecimal(_ n: some BinaryInteger, to out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(n.magnitude)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 20 digits, least significant first
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[i]) }
        }
    }

    /// The answer as compact JSON text.
    static func valueJSON(_ value: StateValue) -> String {
        func s(_ t: String) -> String { JSONString.quoted(t) }
        func choice(_ c: Choice) -> String { "{\"id\":\(s(c.id)),\"value\":\(s(c.value)),\"label\":\(s(c.label))}" }
        switch value {
        case .select(let c): return choice(c)
        case .multiSelect(let cs): return "[" + cs.map(choice).joined(separator: ",") + "]"
        case .input(.text(let t)): return "{\"type\":\"text\",\"value\":\(s(t))}"
        case .input(.email(let t)): return "{\"type\":\"email\",\"value\":\(s(t))}"
        case .input(.number(let d)): return "{\"type\":\"number\",\"value\":\(d.isFinite ? "\(d)" : "null")}"
        case .datePicker(let p):
            var parts: [String] = []
            if let d = p.day { parts.append("\"day\":\(d)") }
            if let m = p.month { parts.append("\"month\":\(m)") }
            if let y = p.year { parts.append("\"year\":\(y)") }
            return "{" + parts.joined(separator: ",") + "}"
        }
    }
}

// MARK: backup

enum BackupCommand: Command {
    static let name = "backup"
    static let summary = "Write a compacted copy of the store while it stays in use"
    static let usage = "boardwalk backup [--db DIR] DEST"
    static let options = [databaseOption]
    static let discussion = """
        DEST must not exist, or be an empty directory. Writers may keep appending while the copy is made;
        the copy is the store as of the moment the backup began. The copy is itself a store: use it with
        --db DEST.

        Example:
          boardwalk backup /backups/boardwalk-$(date +%F)

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        guard arguments.positionals.count == 1, let destination = arguments.positionals.first else {
            throw UsageError(arguments.positionals.isEmpty ? "missing DEST" : "give one DEST")
        }
        if destination.isEmpty { throw UsageError("DEST is an empty string: name the directory to back up into") }
        let store = try openStore(invocation.database(arguments), readOnly: true, notes: invocation)
        // The store makes DEST, not its parents: say so rather than pass on mkdir's errno as a store error.
        let parent = parentDirectory(of: destination)
        var st = stat()
        if stat(parent, &st) != 0, errno == ENOENT {
            throw RuntimeError("backup to '\(destination)' failed: the directory '\(parent)' does not exist")
        }
        let start = monotonicMicroseconds()
        // A copy that fails part-way (a full disk, a file size limit) leaves a cut-short data.mdb that looks like a
        // store, makes the next backup to DEST refuse it, and crashed `check` when opened: remove what this run made
        // (never a data.mdb that was there before, which the store refuses to overwrite anyway).
        let copy = destination + "/data.mdb"
        let destinationExisted = access(destination, F_OK) == 0
        let copyExisted = access(copy, F_OK) == 0
        do {
            try store.backup(to: destination)
        } catch {
            var cleaned = ""
            if !copyExisted, access(copy, F_OK) == 0 {
                cleaned = unlink(copy) == 0 ? "; the partial copy was removed" : "; remove the partial copy '\(copy)'"
            }
            if !destinationExisted { _ = rmdir(destination) }  // only when empty
            throw RuntimeError("backup to '\(destination)' failed: \(error)\(cleaned)")
        }
        invocation.out("backed up \(store.path) to \(destination) in \(Units.duration(microseconds: monotonicMicroseconds() - start))\n")
        return ExitCode.success
    }
}

/// The directory that holds `path` (`.` for a bare name, `/` for an entry of the root), ignoring trailing slashes.
func parentDirectory(of path: String) -> String {
    var path = Substring(path)
    while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

// MARK: check

enum CheckCommand: Command {
    static let name = "check"
    static let summary = "Verify the store's integrity"
    static let usage = "boardwalk check [--db DIR]"
    static let options = [databaseOption]
    static let discussion = """
        Reads the whole store: every record must decode, every index entry must point to an existing event
        and back, and the counters must match. Prints what it checked, or each problem found (up to 100).
        Safe while another process appends.

        Exit status: 0 when the store is sound, 1 when a problem was found (or the store cannot be opened).

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let store = try openStore(invocation.database(arguments), readOnly: true, notes: invocation)
        let report: CheckReport
        do {
            report = try store.check()
        } catch {
            throw RuntimeError("the check could not finish: \(error)")
        }
        var text = report.description
        if !text.hasSuffix("\n") { text += "\n" }
        if report.isOK {
            invocation.out(text)
            return ExitCode.success
        }
        invocation.err(text)
        return ExitCode.failure
    }
}
