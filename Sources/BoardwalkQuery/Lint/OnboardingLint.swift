import BoardwalkModel

/// One thing wrong with an onboarding itself (its events, not its users' behaviour), found by ``OnboardingLint``.
package struct LintFinding: Hashable, Sendable {
    /// What is wrong: one of ``OnboardingLint/Kind``.
    package var kind: OnboardingLint.Kind
    /// The onboarding's id.
    package var onboarding: String
    /// How many times it happens, in the unit ``OnboardingLint/Kind/unit`` names (events, sessions, screens, …).
    package var count: Int
    /// One session where it happens, when it happens in sessions.
    package var exampleSession: String?
    /// What was found, in a sentence.
    package var message: String
    /// A query that shows it.
    package var query: String
}

/// Checks what a store's events say about the onboardings that sent them: lengths that disagree, screens out of
/// range or never shown, completions off the last screen, sessions without a start or going on after completing,
/// presentations that lasted no time, events far out of time order, a variant whose traffic departs from the
/// others' by more than chance, an element answered on several screens, a select whose option ids and values
/// disagree.
package struct OnboardingLint {
    /// The kinds of finding, in the order they are reported.
    package enum Kind: String, CaseIterable, Hashable, Sendable {
        case totalScreensDiffer = "total_screens_differ"
        case screenOutOfRange = "screen_out_of_range"
        case screenNeverPresented = "screen_never_presented"
        case completedOffLastScreen = "completed_off_last_screen"
        case noOnboardingStarted = "no_onboarding_started"
        case eventsAfterCompleted = "events_after_completed"
        case zeroTimePresentation = "zero_time_presentation"
        case outOfTimeOrder = "out_of_time_order"
        case sampleRatioMismatch = "sample_ratio_mismatch"
        case elementOnSeveralScreens = "element_on_several_screens"
        case selectOptionMismatch = "select_option_mismatch"

        /// What ``LintFinding/count`` counts.
        package var unit: String {
            switch self {
            case .totalScreensDiffer, .screenOutOfRange, .completedOffLastScreen, .zeroTimePresentation: "events"
            case .screenNeverPresented: "screens"
            case .noOnboardingStarted, .eventsAfterCompleted, .outOfTimeOrder: "sessions"
            case .sampleRatioMismatch: "variations"
            case .elementOnSeveralScreens: "screens"
            case .selectOptionMismatch: "options"
            }
        }
    }

    /// How far back in time an event may arrive after a later one of its session before it is out of order.
    package var orderSlack: Int64 = 60_000_000
    /// The p-value below which a variant's traffic share is a sample-ratio mismatch.
    package static let sampleRatioP = 0.001

    package init(orderSlack: Int64 = 60_000_000) {
        self.orderSlack = orderSlack
    }

    /// What is kept per onboarding while the sessions are read: counts, and one example session per finding.
    private struct Onboarding {
        var totalScreens: [Int: (events: Int, session: String)] = [:]
        var outOfRange = (events: 0, session: "")
        var presented: Set<Int> = []
        var completedOff = (events: 0, session: "")
        var noStart = (sessions: 0, session: "")
        var afterCompleted = (sessions: 0, session: "")
        var zeroTime = (events: 0, session: "")
        var outOfOrder = (sessions: 0, session: "")
        var variations: [String: Int] = [:]
        var elementScreens: [String: [Int: String]] = [:]
        /// Per select element: per option id, its values (with a session each).
        var selectValues: [String: [String: [String: String]]] = [:]
    }

    /// The result of a lint: its findings and what was read.
    package struct Report: Sendable {
        package var findings: [LintFinding]
        package var sessions: Int
        package var events: Int

        /// The findings as the rows of the `lints` source, in ``OnboardingLint/columns``.
        var table: ResultTable {
            ResultTable(
                columns: OnboardingLint.columns.map(\.name),
                rows: findings.map { f in
                    [
                        .string(f.kind.rawValue), .string(f.onboarding), .integer(Int64(f.count)),
                        .string(f.kind.unit), f.exampleSession.map(Value.string) ?? .null, .string(f.message),
                        .string(f.query),
                    ]
                })
        }
    }

    /// The column names of the `lints` source, one row per finding (completion offers them).
    package static var columnNames: [String] { columns.map(\.name) }

    /// The columns of the `lints` source: one row per finding.
    static let columns: [(name: String, type: QueryType)] = [
        ("lint", .string), ("onboarding", .string), ("count", .number), ("unit", .string),
        ("example_session", .string), ("message", .string), ("query", .string),
    ]

    /// Reads every session of `source` once and lists what is wrong with its onboardings.
    /// - Throws: the source's error (`.source`) when a read fails.
    /// - Complexity: O(events); memory O(sessions in a read window + onboardings × (screens + elements + options)).
    package func run<S: EventSource>(_ source: S) throws(QueryError) -> Report {
        var onboardings: [String: Onboarding] = [:]
        var sessions = 0
        var events = 0
        try source.scanSessions([ScanRange()]) { (id, rows) throws(QueryError) -> Bool in
            sessions += 1
            events += rows.count
            // A session none of whose events names an onboarding (one that never loaded) has none to lint.
            guard let onboardingID = rows.lazy.compactMap({ $0.value(.onboarding).stringValue }).first else {
                return true
            }
            var o = onboardings[onboardingID] ?? Onboarding()
            add(session: id, rows, into: &o)
            onboardings[onboardingID] = o
            return true
        }
        var findings: [LintFinding] = []
        for key in onboardings.keys.sorted() {
            findings += self.findings(key, onboardings[key]!)
        }
        findings.sort { a, b in
            let (x, y) = (Kind.allCases.firstIndex(of: a.kind)!, Kind.allCases.firstIndex(of: b.kind)!)
            return x != y ? x < y : a.onboarding < b.onboarding
        }
        return Report(findings: findings, sessions: sessions, events: events)
    }

    private func add<R: EventRow>(session id: String, _ rows: [R], into o: inout Onboarding) {
        var started = false
        var completedAt: Int?
        var after = false
        let dwell = dwellTimes(rows)
        for (i, row) in rows.enumerated() {
            let name = row.analyticsName
            if name == AnalyticsName.onboardingStarted.rawValue { started = true }
            if completedAt != nil, row.kind != .openPaywall, row.kind != .close { after = true }
            if name == AnalyticsName.onboardingCompleted.rawValue, completedAt == nil { completedAt = i }
            if let total = row.value(.totalScreens).intValue {
                if o.totalScreens[total] == nil { o.totalScreens[total] = (0, id) }
                o.totalScreens[total]!.events += 1
                if let screen = row.screenIndex {
                    if screen >= total { note(&o.outOfRange, id) }
                    if name == AnalyticsName.onboardingCompleted.rawValue, screen != total - 1 {
                        note(&o.completedOff, id)
                    }
                }
            }
            if let screen = row.screenIndex, name == AnalyticsName.screenPresented.rawValue {
                o.presented.insert(screen)
                // Not the last screen: an onboarding may complete as its closing screen appears.
                let last = row.value(.totalScreens).intValue.map { screen == $0 - 1 } ?? false
                if case .value(0) = dwell[i], !last { note(&o.zeroTime, id) }
            }
            if row.kind == .stateUpdated, let element = row.value(.element).stringValue, let screen = row.screenIndex {
                if o.elementScreens[element]?[screen] == nil { o.elementScreens[element, default: [:]][screen] = id }
                if row.value(.elementType).stringValue == "select", let option = row.value(.option).stringValue,
                    let value = row.value(.value).stringValue
                {
                    if o.selectValues[element]?[option]?[value] == nil {
                        o.selectValues[element, default: [:]][option, default: [:]][value] = id
                    }
                }
            }
        }
        if !started { note(&o.noStart, id) }
        if after { note(&o.afterCompleted, id) }
        // Arrival order against time: an event that arrived after one of its session that is later by more than
        // the slack.
        var latest = Int64.min
        for row in rows.sorted(by: { $0.seq < $1.seq }) {
            let t = row.time.microseconds
            if latest != .min, t < latest &- orderSlack {
                note(&o.outOfOrder, id)
                break
            }
            latest = max(latest, t)
        }
        if let variation = rows.lazy.compactMap({ $0.value(.variation).stringValue }).first {
            o.variations[variation, default: 0] += 1
        }
    }

    private func note(_ entry: inout (events: Int, session: String), _ id: String) {
        if entry.events == 0 { entry.session = id }
        entry.events += 1
    }

    private func note(_ entry: inout (sessions: Int, session: String), _ id: String) {
        if entry.sessions == 0 { entry.session = id }
        entry.sessions += 1
    }

    private func findings(_ id: String, _ o: Onboarding) -> [LintFinding] {
        var out: [LintFinding] = []
        let scope = "onboarding == \(Self.quoted(id))"
        func add(_ kind: Kind, _ count: Int, _ session: String?, _ message: String, _ query: String) {
            out.append(
                LintFinding(
                    kind: kind, onboarding: id, count: count, exampleSession: session, message: message, query: query))
        }
        // The onboarding's length: the total_screens most of its events carry (the larger on a tie).
        let common = o.totalScreens.max { a, b in (a.value.events, a.key) < (b.value.events, b.key) }
        if let common, o.totalScreens.count > 1 {
            let others = o.totalScreens.filter { $0.key != common.key }
            let count = others.values.reduce(0) { $0 + $1.events }
            let values = o.totalScreens.keys.sorted().map(String.init).joined(separator: ", ")
            add(
                .totalScreensDiffer, count, others.min { $0.key < $1.key }?.value.session,
                "its events disagree on total_screens (\(values)); most say \(common.key)",
                "events | where \(scope) | count by total_screens")
        }
        if o.outOfRange.events > 0 {
            add(
                .screenOutOfRange, o.outOfRange.events, o.outOfRange.session,
                "\(Self.count(o.outOfRange.events, "event")) with a screen index at or past total_screens",
                "events | where \(scope) and screen >= total_screens | count by screen, total_screens")
        }
        if let common, !o.presented.isEmpty {
            let missing = (0..<common.key).filter { !o.presented.contains($0) }
            if !missing.isEmpty {
                let listed =
                    missing.prefix(10).map(String.init).joined(separator: ", ") + (missing.count > 10 ? ", …" : "")
                add(
                    .screenNeverPresented, missing.count, nil,
                    "\(missing.count == 1 ? "screen" : "screens") \(listed) of its \(common.key) never presented",
                    "events | where \(scope) and name == \"screen_presented\" | count by screen")
            }
        }
        if o.completedOff.events > 0 {
            add(
                .completedOffLastScreen, o.completedOff.events, o.completedOff.session,
                "\(Self.count(o.completedOff.events, "onboarding_completed event")) off the last screen",
                "events | where \(scope) and name == \"onboarding_completed\" | count by screen, total_screens")
        }
        if o.noStart.sessions > 0 {
            add(
                .noOnboardingStarted, o.noStart.sessions, o.noStart.session,
                "\(Self.count(o.noStart.sessions, "session")) without onboarding_started",
                "sessions | where \(scope) and not did(onboarding_started) | count by furthest_screen")
        }
        if o.afterCompleted.sessions > 0 {
            add(
                .eventsAfterCompleted, o.afterCompleted.sessions, o.afterCompleted.session,
                "\(Self.count(o.afterCompleted.sessions, "session")) with events after onboarding_completed other than "
                    + "open_paywall and close",
                "sessions | where \(scope) | paths after onboarding_completed depth 2")
        }
        if o.zeroTime.events > 0 {
            add(
                .zeroTimePresentation, o.zeroTime.events, o.zeroTime.session,
                "\(Self.count(o.zeroTime.events, "presentation")) of a screen before the last that lasted no time "
                    + "(dwell 0)",
                "events | where \(scope) and name == \"screen_presented\" and dwell == 0s "
                    + "and screen < total_screens - 1 | count by screen")
        }
        if o.outOfOrder.sessions > 0 {
            add(
                .outOfTimeOrder, o.outOfOrder.sessions, o.outOfOrder.session,
                "\(Self.count(o.outOfOrder.sessions, "session")) with an event that arrived after a later one by "
                    + "more than \(Value.tableText(.duration(Double(orderSlack))))",
                "events | where session == \(Self.quoted(o.outOfOrder.session)) | select seq, time, name")
        }
        if o.variations.count >= 2 {
            let names = o.variations.keys.sorted()
            let observed = names.map { o.variations[$0]! }
            if let test = Statistics.chiSquareGoodnessOfFit(
                observed: observed, expectedShares: names.map { _ in 1 }),
                test.p < Self.sampleRatioP
            {
                let shares = zip(names, observed).map { "\($0) \($1)" }.joined(separator: ", ")
                add(
                    .sampleRatioMismatch, names.count, nil,
                    "its variations' sessions (\(shares)) depart from equal shares by more than chance "
                        + "(chi-square p \(test.p < 0.0001 ? "< 0.0001" : "= " + Value.tableText(.number(test.p))))",
                    "sessions | where \(scope) | count by variation")
            }
        }
        for element in o.elementScreens.keys.sorted() where o.elementScreens[element]!.count > 1 {
            let screens = o.elementScreens[element]!
            let listed = screens.keys.sorted().map(String.init).joined(separator: ", ")
            add(
                .elementOnSeveralScreens, screens.count, screens[screens.keys.min()!],
                "element \(Self.quoted(element)) is answered on screens \(listed)",
                "events | where \(scope) and element == \(Self.quoted(element)) | count by screen")
        }
        for element in o.selectValues.keys.sorted() {
            let options = o.selectValues[element]!
            var valueOptions: [String: Set<String>] = [:]
            for (option, values) in options {
                for value in values.keys { valueOptions[value, default: []].insert(option) }
            }
            let mixed = options.keys.sorted().filter { options[$0]!.count > 1 }
            let shared = valueOptions.keys.sorted().filter { valueOptions[$0]!.count > 1 }
            guard !mixed.isEmpty || !shared.isEmpty else { continue }
            // A session of the first option with several values, else of the first value under several options.
            let example =
                mixed.first.map { options[$0]!.values.min()! }
                ?? shared.first.map { v in options[valueOptions[v]!.min()!]![v]! }
            var what: [String] = []
            if !mixed.isEmpty {
                what.append("option ids with several values: \(mixed.prefix(5).joined(separator: ", "))")
            }
            if !shared.isEmpty {
                what.append("values under several option ids: \(shared.prefix(5).joined(separator: ", "))")
            }
            add(
                .selectOptionMismatch, mixed.count + shared.count, example,
                "select \(Self.quoted(element)) has \(what.joined(separator: "; "))",
                "events | where \(scope) and element == \(Self.quoted(element)) | count by option, value")
        }
        return out
    }

    /// `1 session`, `2 sessions`.
    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    /// A string literal of the query language.
    static func quoted(_ s: String) -> String {
        "\"" + s.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }
}
