import Boardwalk
import BoardwalkGenerator

/// `boardwalk generate`: realistic synthetic NDJSON on stdout.
enum GenerateCommand: Command {
    static let name = "generate"
    static let summary = "Write realistic synthetic onboarding events as NDJSON to stdout"
    static let usage =
        "boardwalk generate --sessions N [--seed S] [--onboardings K] [--start TIME] [--days D] [--shape SHAPE]"
    static let options = [
        OptionSpec("sessions", short: "n", value: "N", help: "How many sessions to generate (required)"),
        OptionSpec("seed", short: "s", value: "S", help: "The seed; the same seed gives the same bytes (default: 1)"),
        OptionSpec("onboardings", value: "K", help: "How many onboardings sessions are drawn from (default: 6)"),
        OptionSpec(
            "start", value: "TIME", help: "When the first session starts, ISO-8601 (default: 2026-11-01T00:00:00Z)"),
        OptionSpec(
            "days", value: "D",
            help: "Spread the sessions' starts over D days (default: one every 3 s on average)"),
        OptionSpec(
            "shape", value: "SHAPE",
            help: "mixed (default), wire, docs-camel, docs-snake or bridge: the message shape of every line"),
    ]
    static let discussion = """
        Each session is one user's pass through one onboarding (5-20 screens): loading, start, screens
        presented and completed, answers of every element type (select, multi-select, text, email and
        number inputs, date pickers with some parts missing), user_email_collected after an email,
        permission (custom) actions, paywall taps, back-navigation, and an ending: onboarding_completed on
        the final screen, a close, an error, or silent abandonment, more likely the further the screen.
        Events of all sessions are interleaved in time order; some share a millisecond. 85 % of sessions
        carry a session id, 97 % of events an event id. Lines mix the web-view wire message, the docs'
        camelCase and snake_case shapes and the cross-platform bridge shapes, with varying time keys and
        formats (see docs/cli.md).

        Examples:
          boardwalk generate --sessions 1000 > events.ndjson
          boardwalk generate -n 50000 --seed 7 | boardwalk ingest -
          boardwalk generate -n 20000 --start 2026-10-20 --days 14 > two-weeks.ndjson

        """

    static let shapes: [String: EventLineWriter.Shape?] = [
        "mixed": nil, "wire": .wire, "docs-camel": .docsCamel, "docs-snake": .docsSnake, "bridge": .bridge,
    ]

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        guard let sessions = try arguments.integer("sessions", in: 0...100_000_000) else {
            throw UsageError("missing option '--sessions N'")
        }
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let seed = try arguments.unsigned("seed") ?? 1
        let onboardings = try arguments.integer("onboardings", in: 1...10_000) ?? 6
        let shapeName = try arguments.choice("shape", among: ["mixed", "wire", "docs-camel", "docs-snake", "bridge"])
        let shape = shapeName.flatMap { shapes[$0] ?? nil }
        var start = SyntheticData.defaultStart
        if let text = arguments.value("start") {
            guard let parsed = Timestamp(iso8601: text) else {
                throw UsageError("option '--start' takes an ISO-8601 time such as 2026-11-01 or 2026-11-01T10:00:00Z")
            }
            start = parsed
        }
        var gap: Int64 = 3_000
        if let days = try arguments.integer("days", in: 1...3_650), sessions > 0 {
            gap = max(1, Int64(days) * 86_400_000 / Int64(sessions))
        }
        let data = SyntheticData(
            sessions: sessions, seed: seed, onboardings: onboardings, start: start, meanGapMilliseconds: gap)
        var buffer = ""
        buffer.reserveCapacity(1 << 17)
        let writer = EventLineWriter()
        for (event, style, line) in data.lines() {
            if let shape {
                var forced = style
                forced.shape = shape
                if shape == .bridge { forced.layout = .flat }
                writer.write(event, style: forced, into: &buffer)
            } else {
                buffer += line
            }
            if buffer.utf8.count >= 1 << 16 {
                invocation.stdout.write(buffer)
                buffer.removeAll(keepingCapacity: true)
                // A write failed (a full disk, a closed pipe): generating the rest would be for nothing.
                if invocation.stdout.writeError != nil { return ExitCode.failure }
            }
        }
        invocation.stdout.write(buffer)
        return ExitCode.success
    }
}
