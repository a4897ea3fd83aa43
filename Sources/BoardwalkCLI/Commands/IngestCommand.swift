import Boardwalk

#if canImport(Glibc)
    import Glibc
#endif

enum IngestCommand: Command {
    static let name = "ingest"
    static let summary = "Read NDJSON (any shape) or batch files into the store"
    static let usage =
        "boardwalk ingest [--db DIR] [--format ndjson|csv] [--rejects FILE] [--strict] [--quiet] [--batch N] [--time-unit s|ms|us] [--keep-identical] [FILE...|-]"
    static let options = [
        databaseOption,
        OptionSpec(
            "format", short: "f", value: "FORMAT",
            help: "ndjson (default) or csv (what 'export --format csv' writes); batch files are told by their bytes"),
        OptionSpec(
            "rejects", value: "FILE", help: "Where rejected lines are listed (default: ./boardwalk-rejects.txt)"),
        OptionSpec("strict", help: "Stop at the first bad line; nothing of its batch is committed"),
        OptionSpec("quiet", short: "q", help: "No progress bar and no summary"),
        OptionSpec("batch", value: "N", help: "Events per transaction (default: 10000)"),
        OptionSpec(
            "keep-identical", help: "Store every event without an event id, even one identical to a stored event"),
        OptionSpec(
            "time-unit", value: "s|ms|us",
            help: "The unit of numeric times (default: told by size, for times after 2001-09-09)"),
    ]
    static let discussion = """
        Reads each FILE in turn (or standard input when there is none, or for '-'). A file is either NDJSON in
        any shape the reader accepts (web-view messages, the docs' shapes, bridge shapes, canonical lines;
        see docs/events.md), CSV as 'boardwalk export --format csv' writes it (with --format csv; its first
        record is the header), or a batch file written by 'boardwalk export --format batch' (told apart by its
        magic bytes). Any of them may be compressed with gzip or zstd (.gz, .zst, or such bytes piped in):
        told by its magic bytes, and read as a stream, without a checkpoint. Lines without a time get the time
        they were read. A time given as a number is in epoch seconds, milliseconds or microseconds, told apart
        by its size (10-12, 13-15 or 16-18 digits: any time after 2001-09-09; a fraction is kept to the
        microsecond); a number whose size could be more than one unit is rejected unless --time-unit fixes the
        unit for the run.

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
        from its start (a change elsewhere before the checkpoint is not seen). Events are also de-duplicated
        by the store, whatever their input: an event is a duplicate when its event id, time, onboarding and
        screen are all stored already, or, for an event without an event id, when one with the same time,
        onboarding, screen and content (every other field) is; --keep-identical stores every event without an
        id, identical or not. Standard input has no checkpoint, even when it is a file ('ingest - < FILE'):
        only the duplicate rule protects it, and a line without a time gets the time it is read, so the same
        such line sent twice is stored twice.
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
        let csv = try arguments.choice("format", among: ["ndjson", "csv"]) == "csv"
        let timeUnit = try arguments.choice("time-unit", among: EpochUnit.allCases.map(\.rawValue)).flatMap {
            EpochUnit(rawValue: $0)
        }
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
                throw UsageError(
                    first == input.name
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
                throw UsageError(
                    "'\(input.name)' is both an input and the rejects file, which rejected lines would overwrite; "
                        + "name another with --rejects FILE")
            }
            if FileSafety.isStoreFile(rejectsPath, store: invocation.database(arguments)) {
                throw UsageError(
                    "the rejects file '\(rejectsPath)' is one of the store's own files; name another with --rejects FILE"
                )
            }
        }
        let rejects = RejectsWriter(path: rejectsPath)
        // A rejects file named on the command line must be writable before anything is stored. The default one is
        // made at the first rejected line only, so a clean ingest runs from any directory.
        if arguments.value("rejects") != nil { try rejects.checkWritable() }
        let database = invocation.database(arguments)
        // A run that reads nothing (an empty input, Ctrl-D at once) leaves no store behind it made.
        let directoryExisted = access(database, F_OK) == 0
        let storeExisted = access(database + "/data.mdb", F_OK) == 0
        let store = try openStore(database)
        let quiet = arguments.flag("quiet")
        let progress =
            !quiet && invocation.stderrIsTerminal
            ? Progress(sink: invocation.stderr, paint: Paint(enabled: invocation.colour(for: .stderr))) : nil
        let ingester = Ingester(
            sink: StoreSink(store: store, keepIdentical: arguments.flag("keep-identical")),
            parser: csv ? try CSVLineParser(timeUnit: timeUnit) : try JSONLineParser(timeUnit: timeUnit),
            // A second parse thread only with 3 or more cores: on 2, parsing and committing already keep both
            // busy, and a third thread measured no faster while costing 5 % more CPU (docs/cli.md, ingest). Not for
            // CSV, whose header the one parser keeps.
            workerParser: !csv && sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 3
                ? try JSONLineParser(timeUnit: timeUnit) : nil,
            options: Ingester.Options(strict: arguments.flag("strict"), batchSize: batch),
            rejects: rejects, progress: progress)
        let sizes = inputs.compactMap(\.size)
        if sizes.count == inputs.count { ingester.totalBytes = sizes.reduce(0, +) }
        if paths.contains("-") && invocation.stdinIsTerminal && !quiet {
            invocation.err(
                "reading \(csv ? "CSV" : "NDJSON") from standard input (the terminal): type or paste the lines, then "
                    + "press Ctrl-D on an empty line to finish (Ctrl-C stops)\n")
        }
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
            // (docs/storage.md, the event log); nothing to do when the appends just folded them.
            if !interrupted { try store.foldLogs() }
        } catch {
            failure = error
        }
        progress?.finish()
        ingester.rejects.flush()
        // Damage that blocks nothing (liblmdb never reads that page again), but says something about the disk.
        if let note = store.olderMetaDamage { invocation.err("note: \(note)\n") }
        // A store this run made and put nothing in (an empty input, Ctrl-D at once, a CSV stopped at its header) would
        // only be in the way: removed. One that read lines keeps their checkpoint, so that they are not read again.
        let read = ingester.summary
        let madeNothing =
            !storeExisted && read.ingested == 0 && read.duplicates == 0 && read.rejected == 0
            && (read.bytes == 0 || failure != nil)
        if madeNothing {
            store.close()
            for file in ["data.mdb", "lock.mdb"] { unlink(database + "/" + file) }
            if !directoryExisted { rmdir(database) }
        }
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
            let listed =
                listedAll ? " (listed in \(rejectsPath))" : " (not all listed: the rejects file could not be written)"
            text += "rejected: \(summary.rejected)" + (summary.rejected > 0 ? listed : "") + "\n"
            if summary.unfinishedLines > 0 {
                text +=
                    "unfinished: the last line of \(summary.unfinishedLines == 1 ? "a file" : "\(summary.unfinishedLines) files") "
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
            invocation.err(
                "strict: only what this run read was checked; what an earlier run committed was not read "
                    + "again (to check a whole file, ingest it into a scratch store: boardwalk ingest --db \"$(mktemp -d)\" --strict FILE)\n"
            )
        }
        if let failure {
            // Nothing was committed by anyone: no promise about what stays.
            if madeNothing, !(failure is StoreError) { throw RuntimeError("\(failure)") }
            throw failureError(failure)
        }
        if interrupted {
            // Files resume from their checkpoints; standard input has none (only the duplicate rules protect it).
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
            + "its start; events already stored count as duplicates\n"
    }

    /// The message a failed run ends with, for a failure of either stage (a commit-stage failure arrives as
    /// the store's own error).
    static func failureError(_ failure: any Error) -> RuntimeError {
        if let strict = failure as? Ingester.StrictStop { return RuntimeError(strict.description) }
        if let moved = failure as? CheckpointMoved {
            return RuntimeError(
                "\(moved) (what was committed before stays; once the other ingest is done, the same command continues after what it stored)"
            )
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
        let hint =
            failure is StoreError
            ? "what was committed before stays; once the cause is fixed, the same command continues after it"
            : "what was committed before stays"
        return RuntimeError("\(failure) (\(hint))")
    }
}
