import Boardwalk
import BoardwalkJSON

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
        // This command's own snapshot has ended: the readers are the others'.
        let readers = store.readers
        let damage = store.damageFound
        invocation.out(
            format == "json"
                ? statsJSON(stats, unfolded: unfolded, fileBytes: store.usedBytes, readers: readers, damage: damage)
                : statsTable(
                    stats, unfolded: unfolded, fileBytes: store.usedBytes,
                    paint: Paint(enabled: invocation.colour(for: .stdout)), readers: readers, damage: damage))
        return ExitCode.success
    }

    static func statsTable(
        _ s: StoreStats, unfolded: (eventLog: Int, sessionLog: Int)?, fileBytes: Int, paint: Paint,
        readers: ReaderTable? = nil, damage: String? = nil
    ) -> String {
        var t = TextTable(headers: ["", ""], alignments: [.left, .right])
        t.rows = [
            // Counts for people, with the exact number beside them once they are rounded.
            ["events", Units.count(s.events) + (s.events >= 1000 ? " (\(s.events))" : "")],
            [
                "sessions",
                Units.count(s.sessions) + " (" + (s.sessions >= 1000 ? "\(s.sessions); " : "")
                    + "\(Units.count(s.inferredSessions)) inferred)",
            ],
            ["onboardings", "\(s.onboardings)"],
            ["duplicates skipped", "\(s.duplicatesSkipped)"],
            ["bytes on disk", Units.bytes(fileBytes)],
            ["bytes per event", s.events > 0 ? Units.decimal(Double(fileBytes) / Double(s.events), digits: 1) : "–"],
            ["first event", s.timeRange.map { $0.lowerBound.iso8601 } ?? "–"],
            ["last event", s.timeRange.map { $0.upperBound.iso8601 } ?? "–"],
            // What reads merge in until the next fold (docs/storage.md, the event log).
            [
                "batches not folded",
                unfolded.map { "\($0.eventLog) in the event log, \($0.sessionLog) in the session log" }
                    ?? "? (the logs do not read: see boardwalk check)",
            ],
        ]
        if let readers {
            // A long reader pins its snapshot's pages: the file grows while it lasts (docs/storage.md).
            t.rows.append([
                "open readers",
                readers.oldestCommitsBehind.map {
                    "\(readers.open) (the oldest \($0) commit\($0 == 1 ? "" : "s") behind)"
                } ?? "none",
            ])
        }
        if let damage { t.rows.append(["damage found", damage + " (appends refused; see boardwalk check)"]) }
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

    static func statsJSON(
        _ s: StoreStats, unfolded: (eventLog: Int, sessionLog: Int)?, fileBytes: Int, readers: ReaderTable? = nil,
        damage: String? = nil
    ) -> String {
        var o = "{"
        o += "\"events\":\(s.events),\"sessions\":\(s.sessions),\"inferred_sessions\":\(s.inferredSessions),"
        o += "\"onboardings\":\(s.onboardings),\"duplicates_skipped\":\(s.duplicatesSkipped),\"strings\":\(s.strings),"
        o += "\"bytes\":\(s.bytes),\"file_bytes\":\(fileBytes),"
        o += "\"bytes_per_event\":" + (s.events > 0 ? "\(Double(fileBytes) / Double(s.events))" : "null") + ","
        o += "\"first\":" + (s.timeRange.map { "\"\($0.lowerBound.iso8601)\"" } ?? "null") + ","
        o += "\"last\":" + (s.timeRange.map { "\"\($0.upperBound.iso8601)\"" } ?? "null") + ","
        o += "\"event_log_batches\":" + (unfolded.map { "\($0.eventLog)" } ?? "null") + ","
        o += "\"session_log_batches\":" + (unfolded.map { "\($0.sessionLog)" } ?? "null") + ","
        if let readers {
            o +=
                "\"open_readers\":\(readers.open),\"oldest_reader_commits_behind\":"
                + (readers.oldestCommitsBehind.map { "\($0)" } ?? "null") + ","
        }
        o += "\"damage_found\":" + (damage.map { JSONString.quoted($0) } ?? "null") + ","
        o += "\"next_seq\":\(s.nextSeq),\"events_by_kind\":{"
        o += EventKind.allCases.map { "\"\($0.name)\":\(s.eventsByKind[$0] ?? 0)" }.joined(separator: ",")
        return o + "}}\n"
    }
}
