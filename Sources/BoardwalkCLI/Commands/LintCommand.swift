import Boardwalk
import BoardwalkJSON
import BoardwalkQuery

enum LintCommand: Command {
    static let name = "lint"
    static let summary = "List what is wrong with the onboardings themselves, from their events"
    static let usage = "boardwalk lint [--db DIR] [--format table|json] [--order-slack DURATION]"
    static let options = [
        databaseOption,
        OptionSpec("format", short: "f", value: "FORMAT", help: "table (default) or json"),
        OptionSpec(
            "order-slack", value: "DURATION",
            help: "How far back in time an event may arrive after a later one of its session (default 1m)"),
    ]
    static let discussion = """
        Reads every session once and reports, per onboarding, each of these it finds, with how many times, an
        example session and a query that shows it:
          total_screens_differ        its events disagree on total_screens
          screen_out_of_range         screen index at or past total_screens
          screen_never_presented      a screen below the length no screen_presented shows
          completed_off_last_screen   onboarding_completed not on the last screen
          no_onboarding_started       a session without onboarding_started
          events_after_completed      a session going on after onboarding_completed (open_paywall and close
                                      are how an onboarding hands over, and do not count)
          zero_time_presentation      a screen_presented before the last screen whose dwell is 0
          out_of_time_order           an event that arrived after a later one by more than --order-slack
          sample_ratio_mismatch       variations' sessions departing from equal shares (chi-square p < 0.001)
          element_on_several_screens  one element id answered on several screens
          select_option_mismatch      a select option id with several values, or a value under several ids

        JSON output is one object: sessions, events, and findings, each with lint, onboarding, count, unit,
        example_session, message and query.

        Exit status: 0 when nothing is found, 2 when something is, 1 when the store cannot be read (empty,
        missing or damaged), 64 for a wrong invocation.

        Examples:
          boardwalk lint
          boardwalk lint --format json | jq '.findings[].lint'

        """

    static func run(_ arguments: ParsedArguments, _ invocation: Invocation) throws -> Int32 {
        let format = try arguments.choice("format", among: ["table", "json"]) ?? "table"
        var slack: Int64 = 60_000_000
        if let text = arguments.value("order-slack") {
            guard let parsed = duration(text) else {
                throw UsageError("--order-slack takes a duration such as 30s, 5m or 1h, not '\(text)'")
            }
            slack = parsed
        }
        if let extra = arguments.positionals.first { throw UsageError("unexpected argument '\(extra)'") }
        let path = invocation.database(arguments)
        let store = try openStore(path, readOnly: true, notes: invocation)
        let events: Int
        do {
            events = try store.read { try $0.stats() }.events
        } catch {
            throw RuntimeError("cannot read the store '\(path)': \(error) (see 'boardwalk check')")
        }
        guard events > 0 else { throw RuntimeError("the store '\(path)' has no events: nothing to lint") }
        let report: OnboardingLint.Report
        do {
            report = try OnboardingLint(orderSlack: slack).run(StoreEventSource(store))
        } catch {
            throw RuntimeError("the lint could not read the store '\(path)': \(error.message) (see 'boardwalk check')")
        }
        invocation.out(format == "json" ? json(report) : text(report))
        return report.findings.isEmpty ? ExitCode.success : ExitCode.partial
    }

    /// `30s`, `5m`, `1h`, `250ms`, `2d`: microseconds; nil for anything else.
    static func duration(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [
            ("ms", 1_000), ("s", 1_000_000), ("m", 60_000_000), ("h", 3_600_000_000),
            ("d", 86_400_000_000),
        ]
        for (unit, scale) in units where text.hasSuffix(unit) {
            guard let n = Int64(text.dropLast(unit.count)), n >= 0, n <= Int64.max / scale else { return nil }
            return n * scale
        }
        return nil
    }

    static func text(_ report: OnboardingLint.Report) -> String {
        let read = "\(report.sessions) sessions, \(report.events) events read"
        guard !report.findings.isEmpty else { return "no problems found (\(read))\n" }
        let onboardings = Set(report.findings.map(\.onboarding)).count
        var out =
            "\(report.findings.count) problem\(report.findings.count == 1 ? "" : "s") in \(onboardings) "
            + "onboarding\(onboardings == 1 ? "" : "s") (\(read))\n"
        for f in report.findings {
            out += "\n\(f.kind.rawValue): onboarding \(f.onboarding)\n"
            out += "  \(f.message)\n"
            out += "  count: \(f.count) \(f.kind.unit)"
            if let session = f.exampleSession { out += ", e.g. session \(session)" }
            out += "\n  query: \(f.query)\n"
        }
        return out
    }

    static func json(_ report: OnboardingLint.Report) -> String {
        func string(_ s: String?) -> String { s.map { JSONString.quoted($0) } ?? "null" }
        let findings = report.findings.map { f in
            "{\"lint\":\(string(f.kind.rawValue)),\"onboarding\":\(string(f.onboarding)),\"count\":\(f.count),"
                + "\"unit\":\(string(f.kind.unit)),\"example_session\":\(string(f.exampleSession)),"
                + "\"message\":\(string(f.message)),\"query\":\(string(f.query))}"
        }
        return "{\"sessions\":\(report.sessions),\"events\":\(report.events),\"findings\":["
            + findings.joined(separator: ",") + "]}\n"
    }
}
