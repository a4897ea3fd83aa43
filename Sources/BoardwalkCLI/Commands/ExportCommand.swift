import Boardwalk

#if canImport(Glibc)
    import Glibc
#endif

enum ExportCommand: Command {
    static let name = "export"
    static let summary = "Write the store's events as canonical NDJSON, CSV, ClickHouse rows or a batch file"
    static let usage =
        "boardwalk export [--db DIR] [--format ndjson|csv|clickhouse|batch] [--since-seq N | --salvage] [--output FILE] [--schema [--table NAME]]"
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
        (docs/codec.md), also read by ingest; csv has a header and one row per event whose columns are
        the fields of an 'events' query row, valued as a query shows them (time, seq, kind, name, onboarding,
        screen, screen_cid, total_screens, session, profile, action, element, element_type, reply, value,
        label, placement, variation, event_id), then answer (the answer as JSON), error_domain, error_code and
        error_message, which 'boardwalk ingest --format csv' needs to read it back (RFC 4180 quoting).
        clickhouse writes JSONEachRow rows for the table printed by --schema (docs/clickhouse.md): every field
        as queries see it, with the seq and the store's session (inferred ones included), for
          clickhouse-client --query 'INSERT INTO boardwalk_events FORMAT JSONEachRow' < rows.jsonl

        For incremental export, pass the 'next' seq printed on stderr by the previous run as --since-seq.
        Sessions the store inferred carry their inferred id (inferred:SEQ) in the export.

        An export stops at the first damaged block ('boardwalk check' lists them all). --salvage goes on past
        them: it writes every event that still decodes, in block order (onboarding, screen, time) rather than
        seq order, lists on stderr what it skipped (an event, the rest of a block, what a damaged LMDB page
        held), and exits with 2 when it skipped anything. It reads around damaged LMDB pages and a data file
        cut short from the file itself, and ends by saying how many events it wrote and, when the store's count
        reads, how many it could not. Ingest the salvaged file into a new store to go on.

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
        // Ctrl-C or SIGTERM: stop after the event being written (a file given with --output is then removed). Before
        // anything is made, so that no signal finds a partial file without its handler.
        installStopHandlers()
        // The store first: a mistyped --db must not cost the file --output names. And the file is written beside its
        // destination and moved over it once the export is whole (``ReplacedFile``).
        let database = invocation.database(arguments)
        // A salvage reads a store whose meta page is damaged from a copy made from the other one, in a scratch
        // directory removed when the export ends.
        var scratch: String? = nil
        var readsAnOlderCommit = false
        defer { if let scratch { removeScratchDirectory(scratch) } }
        let store: Store?
        // A store that does not open even from the other meta page (a file cut short) is salvaged from its pages.
        var openFailure: (any Error)? = nil
        if salvage && !schema {
            scratch = try makeScratchDirectory(invocation.environment["TMPDIR"])
            do {
                let (opened, note, older) = try Store.openForSalvage(at: database, scratch: scratch! + "/copy")
                if older {
                    // The copy reads the commit before the latest, whose meta page is damaged: the file's own pages
                    // hold what the latest commit wrote too.
                    opened.close()
                    store = nil
                    openFailure = StoreError(.corrupt, note ?? "the latest meta page is damaged")
                } else {
                    if let note { invocation.err("note: \(note)\n") }
                    store = opened
                }
                readsAnOlderCommit = older
            } catch let error as StoreError
                where (error.kind == .corrupt || error.kind == .notAStore) && hasMetaPages(database)
            {
                store = nil
                openFailure = error
            } catch {
                throw RuntimeError("cannot open the store '\(database)': \(error)")
            }
        } else {
            store = schema ? nil : try openStore(database, readOnly: true, notes: invocation)
        }
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
            output.write(
                ClickHouseTable.createStatement(table: arguments.value("table") ?? ClickHouseTable.defaultName))
            output.flush()
            if let code = output.writeError, let file {
                throw RuntimeError("cannot write to '\(file.path)': \(String(cString: strerror(code)))")
            }
            try file?.commit()
            return output.writeError == nil ? ExitCode.success : ExitCode.failure
        }
        // Opened above; only --schema, handled, and a salvage of a store that does not open go without.
        if store == nil && openFailure == nil { return ExitCode.failure }
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
        var summary: SalvageSummary? = nil
        // Writes one event; `false` when a write failed (a full disk): the rest would be lost too. An event the
        // format cannot hold ends an export, and is skipped (and listed) by a salvage.
        func emit(_ stored: StoredEvent) throws -> Bool {
            if output.writeError != nil || interruptFlag.isCancelled { return false }
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
                        throw RuntimeError(
                            "event seq \(stored.seq): its time \(stored.event.time.iso8601) is outside what ClickHouse's DateTime64 holds (1900-01-01 to 2299-12-31); exported, it would silently become another time"
                        )
                    }
                    buffer += ClickHouseTable.row(seq: stored.seq, event: stored.event)
                default:
                    buffer += CanonicalJSON.line(stored.event)
                    if !buffer.hasSuffix("\n") { buffer += "\n" }
                }
            } catch  where salvage {
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
                func report(_ damage: SalvageDamage) -> Bool {
                    skipped.add(damage, to: invocation)
                    return !interruptFlag.isCancelled
                }
                if let store {
                    summary = try store.salvageEvents(emit, damaged: report)
                } else {
                    summary = try Store.salvageEvents(inDataFileOf: database, emit, damaged: report)
                    if let note = summary?.note { invocation.err("note: \(note)\n") }
                }
            } else if let store {
                try store.read { snapshot in
                    storeNextSeq = try snapshot.stats().nextSeq
                    try snapshot.forEachEvent(since: since) { view in
                        // Before the decode: after a failed write, the error to report is the write's.
                        if output.writeError != nil || interruptFlag.isCancelled { return false }
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
            let next =
                replaced
                ? ""
                : output.writeError.map { "; and then writing failed: \(String(cString: strerror($0)))" }
                    ?? (salvage
                        ? "; \(count) event\(count == 1 ? " was" : "s were") written before it"
                        : lastSeq.map { "; the events \(from)before seq \($0 + 1) were written" }
                            ?? "; no event was written")
                    + (format == "batch" && !replaced && count > 0
                        ? " (the batch file has no end block, so ingest reports it as cut short)" : "")
            let damaged =
                (error as? StoreError)?.kind == .corrupt && !salvage
                ? "; 'boardwalk export --salvage' goes on past damaged blocks"
                : (error as? StoreError)?.meansDamage == true
                    ? "; the store's file is damaged: 'boardwalk check' lists the damage" : ""
            throw RuntimeError("\(error); the export is incomplete\(kept)\(next)\(damaged)")
        }
        if interruptFlag.isCancelled {
            // A file given with --output is removed with what it held (ReplacedFile's deinit); to standard output, or
            // to a file written in place, the events before the next seq were written whole.
            if let file, file.isReplaced {
                let again = since > 0 ? "the same command (--since-seq \(since))" : "the same command"
                invocation.err(
                    "interrupted: the partial export was removed and '\(file.path)' left as it was; run \(again) "
                        + "to export again\n")
            } else {
                switch format {
                case "csv": output.write(bytes: csv)
                case "ndjson", "clickhouse": output.write(buffer)
                default: break  // a batch file without its end block: ingest reports it as cut short
                }
                output.flush()
                let next = lastSeq.map { $0 + 1 } ?? since
                invocation.err(
                    salvage
                        ? "interrupted: \(count) event\(count == 1 ? " was" : "s were") written; run "
                            + "'export --salvage' again for all of them\n"
                        : "interrupted: the events \(since > 0 ? "from seq \(since) " : "")before seq \(next) were "
                            + "written; export the rest with --since-seq \(next)\n")
            }
            return stoppedStatus()
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
            let again =
                salvage
                ? "the export is incomplete: run 'export --salvage' again"
                : "the export is incomplete: run it again with the same --since-seq \(since)"
            if let file {
                throw RuntimeError(
                    "cannot write to '\(file.path)': \(String(cString: strerror(code))); \(again)"
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
        let unread = SalvageReport.outcome(saved: count, summary: summary)
        invocation.err("\(exported) (salvage, in block order)\(skipped.summary)\(unread)\n")
        return skipped.isEmpty && !readsAnOlderCommit && summary?.note == nil ? ExitCode.success : ExitCode.partial
    }
}

/// Whether the store at `database` has a data file that holds LMDB's two meta pages: one that does not open can still
/// be salvaged from its pages.
private func hasMetaPages(_ database: String) -> Bool {
    var st = stat()
    return stat(database + "/data.mdb", &st) == 0 && st.st_size >= 2 * 4096
}

/// A new directory under the temporary directory (`$TMPDIR`, else `/tmp`), for a salvage's copy of a data file.
private func makeScratchDirectory(_ tmpdir: String?) throws -> String {
    let base = tmpdir.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template = Array((base + "/boardwalk-salvage-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw RuntimeError("cannot make a scratch directory under \(base): \(String(cString: strerror(errno)))")
    }
    return String(cString: made)
}

/// Removes what ``makeScratchDirectory(_:)`` made and the salvage copy put in it.
private func removeScratchDirectory(_ path: String) {
    unlink(path + "/copy/data.mdb")
    unlink(path + "/copy/lock.mdb")
    rmdir(path + "/copy")
    rmdir(path)
}
