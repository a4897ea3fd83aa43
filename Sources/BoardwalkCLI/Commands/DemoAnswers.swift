import Boardwalk

/// The demo's answers: each one a query, its result drawn for people.
struct DemoAnswers {
    let console: QueryConsole
    let invocation: Invocation
    let paint: Paint

    /// Each answer's completion against the most common answer's, with the p-value that says whether the
    /// difference is more than chance (`versus`).
    func compareAnswers(_ conversion: ResultTable, onboarding quoted: String, element: String) throws {
        let answered = conversion.rows.filter { $0[0].stringValue != nil }
        guard answered.count >= 2,
            let baseline = answered.max(by: { ($0[1].doubleValue ?? 0) < ($1[1].doubleValue ?? 0) })?[0].stringValue
        else { return }
        let literal =
            "\""
            + baseline.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"") + "\""
        let compared = try ask(
            "Completion by answer against the most common, \(literal)",
            "sessions | where onboarding == \(quoted) | stats rate(completed) by answer(\"\(element)\") "
                + "| versus \(literal)")
        let lines = compared.render(.table).split(separator: "\n")
        invocation.out(lines.map { "  " + $0 + "\n" }.joined())
    }

    /// Runs `text`, echoing it; a failure is printed and stops the demo.
    func ask(_ title: String, _ text: String) throws -> ResultTable {
        invocation.out("\n" + paint.bold(title) + "\n" + paint.dim("  " + text) + "\n\n")
        do {
            return try console.execute(try Query.parse(text)).table
        } catch {
            console.report(error)
            throw RuntimeError("the demo query failed")
        }
    }

    func show() throws {
        let byOnboarding = try ask("Sessions per onboarding", "sessions | count by onboarding")
        // Sessions without an onboarding (no event with a position) apart from an onboarding whose id is empty.
        let (present, absent) = rows(byOnboarding, "onboarding", "count")
        let counts = DemoAnswers.ranked(present)
        // The sessions without an onboarding last, whatever their number: they are not one of the onboardings ranked.
        let bars =
            counts.map { ($0.key.isEmpty ? "\"\"" : $0.key, $0.value, Units.count(Int($0.value))) }
            + (absent > 0 ? [("(no onboarding)", absent, Units.count(Int(absent)))] : [])
        if !bars.isEmpty {
            invocation.out(
                Bars.chart(
                    bars, share: counts.reduce(absent) { $0 + $1.value }, columns: invocation.columns, paint: paint))
        }
        // The first of the ranking: of onboardings with as many sessions, the first by id, on every run.
        guard let busiest = counts.first else {
            invocation.out(absent > 0 ? "  (no session has an onboarding)\n" : "  (no sessions)\n")
            return
        }
        let onboarding = busiest.key
        let quoted = "\"\(onboarding)\""

        let funnel = try ask(
            "Screen funnel of the busiest onboarding", "sessions | where onboarding == \(quoted) | funnel")
        // Screen names for labels: each step's client id (`screen_cid`).
        var screenNames: [Int: String] = [:]
        if let s = funnel.columns.firstIndex(of: "step"), let c = funnel.columns.firstIndex(of: "screen_cid") {
            for row in funnel.rows { if let i = row[s].intValue, let n = row[c].stringValue { screenNames[i] = n } }
        }
        if let step = funnel.columns.firstIndex(of: "step"), let n = funnel.columns.firstIndex(of: "sessions") {
            let first = funnel.rows.first.flatMap { $0[n].doubleValue } ?? 0
            invocation.out(
                Bars.chart(
                    funnel.rows.map { row in
                        let i = row[step].intValue ?? 0
                        let value = row[n].doubleValue ?? 0
                        let label = DemoAnswers.screenLabel(i, screenNames[i], upTo: funnel.rows.count - 1)
                        return (label, value, Units.count(Int(value)))
                    }, share: first, columns: invocation.columns, paint: paint))
        }

        let elements = try console.execute(
            try Query.parse(
                "events | where onboarding == \(quoted) and element_type == \"select\" | count by element")
        ).table
        if let element = elements.column("element")?.compactMap(\.stringValue).first {
            let conversion = try ask(
                "Completion by answer to \"\(element)\"",
                "sessions | where onboarding == \(quoted) | stats count(), rate(completed) by answer(\"\(element)\")")
            if conversion.columns.count == 3 {
                invocation.out(
                    Bars.chart(
                        conversion.rows.map { row in
                            let answer = row[0].stringValue ?? "(no answer)"
                            let rate = row[2].doubleValue ?? 0
                            return (
                                answer, rate, Units.percent(rate) + " of " + Units.count(Int(row[1].doubleValue ?? 0))
                            )
                        }, share: nil, columns: invocation.columns, paint: paint))
            }
            try compareAnswers(conversion, onboarding: quoted, element: element)
        }

        let dwell = try ask(
            "Time on each screen",
            "events | where onboarding == \(quoted) and name == \"screen_presented\" | stats p50(dwell), p90(dwell) by screen"
        )
        if let s = dwell.columns.firstIndex(of: "screen"), let p50 = dwell.columns.firstIndex(of: "p50(dwell)"),
            let p90 = dwell.columns.firstIndex(of: "p90(dwell)"),
            let censored = dwell.columns.firstIndex(of: "censored")
        {
            // Rule 7: the presentations whose session ended on them have no dwell; say how many beside the times.
            // Screens where every presentation is untimed (or none at all) say so instead of an empty chart.
            if !dwell.rows.contains(where: { $0[p50] != .null }) {
                let open = dwell.rows.reduce(0) { $0 + ($1[censored].intValue ?? 0) }
                invocation.out(
                    open == 0
                        ? "  (no screen presented)\n"
                        : open == 1
                            ? "  (no time measured: the one screen presentation ended its session)\n"
                            : "  (no time measured: all \(Units.count(open)) screen presentations ended their sessions)\n"
                )
            } else {
                let items = dwell.rows.map { row in
                    let i = row[s].intValue ?? 0
                    let open = row[censored].intValue ?? 0
                    return (
                        label: DemoAnswers.screenLabel(i, screenNames[i], upTo: screenNames.keys.max() ?? 0),
                        median: row[p50].doubleValue ?? 0, slow: row[p90].doubleValue ?? 0,
                        note: open > 0 ? "\(Units.count(open)) ended here, untimed" : ""
                    )
                }
                let columns = DemoAnswers.alignedColumns(
                    items.map {
                        [
                            "p50 ", Units.duration(microseconds: Int64($0.median)), ", p90 ",
                            Units.duration(microseconds: Int64($0.slow)),
                            $0.note.isEmpty ? "" : ", " + $0.note,
                        ]
                    }, rightAligned: [1, 3])
                invocation.out(
                    Bars.chart(
                        zip(items, columns).map { ($0.label, $0.median, $1) },
                        share: nil, columns: invocation.columns, paint: paint))
            }
        }

        // Rule 8: a session's exit is its last ending, so one closed after completing counts as closed. The line after
        // the chart gives the completions whatever came after them (on generated data, what the funnel's last step shows).
        let exits = try ask(
            "How sessions end (by their last ending: a close after completing counts as closed)",
            "sessions | where onboarding == \(quoted) | count by exit")
        let exitCounts = DemoAnswers.ranked(rows(exits, "exit", "count").present)
        let total = exitCounts.reduce(0) { $0 + $1.value }
        invocation.out(
            Bars.chart(
                exitCounts.map { ($0.key, $0.value, Units.count(Int($0.value))) },
                share: total, columns: invocation.columns, paint: paint))
        let completed = try ask(
            "Sessions that completed, however they ended",
            "sessions | where onboarding == \(quoted) | where completed | count")
        if let n = completed.rows.first?.first?.doubleValue, total > 0 {
            invocation.out("  \(Units.count(Int(n), "session")), \(Units.percent(n / total)) of the onboarding's\n")
        }
    }

    /// A screen's label in a chart: its index right-aligned to the widest index shown (`up to`), then its name, so
    /// that the names line up (` 9 age_screen` above `10 story_1`).
    static func screenLabel(_ index: Int, _ name: String?, upTo largest: Int) -> String {
        let digits = String(index)
        let pad = String(repeating: " ", count: max(0, String(max(largest, index)).count - digits.count))
        return pad + digits + " " + (name ?? "")
    }

    /// The entries of `counts` by value, largest first, and ties by key: the same order on every run (a
    /// dictionary's own order changes from one process to the next).
    static func ranked(_ counts: [String: Double]) -> [(key: String, value: Double)] {
        counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Each row's cells joined so that every cell sits in the same columns in every row (padded to its
    /// column's widest, in display columns: on the left for the columns in `rightAligned`, else on the right;
    /// empty trailing cells are left out), then padded to one width, so a chart's right-aligned text column
    /// lines the rows up.
    static func alignedColumns(_ rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
        let count = rows.map(\.count).max() ?? 0
        let widths = (0..<count).map { c in rows.map { c < $0.count ? displayWidth($0[c]) : 0 }.max() ?? 0 }
        let joined = rows.map { cells -> String in
            let last = cells.lastIndex { !$0.isEmpty } ?? -1
            var line = ""
            for (c, cell) in cells.enumerated() where c <= last {
                let pad = String(repeating: " ", count: widths[c] - displayWidth(cell))
                line += rightAligned.contains(c) ? pad + cell : cell + pad
            }
            return line
        }
        let width = joined.map(displayWidth).max() ?? 0
        return joined.map { $0 + String(repeating: " ", count: width - displayWidth($0)) }
    }

    /// The `value` column's numbers by the `key` column's text, and their sum over the rows whose key is absent.
    func rows(_ table: ResultTable, _ key: String, _ value: String) -> (present: [String: Double], absent: Double) {
        guard let k = table.columns.firstIndex(of: key), let v = table.columns.firstIndex(of: value) else {
            return ([:], 0)
        }
        var present: [String: Double] = [:], absent = 0.0
        for row in table.rows {
            let n = row[v].doubleValue ?? 0
            if row[k] == .null { absent += n } else { present[row[k].stringValue ?? "", default: 0] += n }
        }
        return (present, absent)
    }
}
